/**
 * A payment agreement's books once it takes money (contract §17, docs/agreements.md). Pure and
 * deterministic: the payment's activity and the break's run it, and the tests check it.
 *
 * - The first payment that reaches a live agreement opens its book: the agreement's own rows
 *   (`agreementRepayment`), the loan's rows as they stood (what a break gives back) and the loan's
 *   account balances then (what the break's true-up starts from). From then on the loan's
 *   principal is what its uncovered rows carry plus the agreement's balance (the ledger's
 *   `loan_principal`), and the covered rows stand still.
 * - A payment goes to the agreement's rows first (oldest first, §13 within them), the rest to the
 *   rows the agreement does not cover, by §13 and the payment's `apply_to`. It is at most what
 *   settles both that day.
 * - Every agreement row paid: the agreement is fulfilled and the covered rows are paid by it.
 * - Undone (a break, or a lapse after money reached it): `restoreOnBreak` over the loan's rows as
 *   they stood, every payment since allocated to them by §13 on its own date.
 */
import type { LedgerAccount } from '../ledger/postings.js';
import {
  allocatePayment,
  isPaid,
  payoffAmount,
  PaymentAboveBalanceError,
  type Allocation,
  type ApplyTo,
  type Repayment,
  type RepaymentTerms,
} from './allocation.js';
import {
  agreementRepayment,
  restoreOnBreak,
  type AgreementFigures,
  type LivedPayment,
} from './agreements.js';

/** What an agreement keeps once money reached it. */
export interface AgreementBook {
  /** The agreement's own rows, as its payments left them. */
  repayment: Repayment;
  /** The loan's rows (and principal) when the book opened: what a break gives back. */
  loanBefore: Repayment;
  /** Every payment made to the loan since the book opened (the amount the loan took). */
  payments: LivedPayment[];
  /** The loan's account balances (debits − credits) before the book opened. */
  balancesBefore: Partial<Record<LedgerAccount, number>>;
}

const coveredOf = (figures: Pick<AgreementFigures, 'rows'>) =>
  new Set(figures.rows.map((row) => row.number));

/**
 * The book an agreement opens with its first payment, and the loan's repayment once the
 * agreement took over its covered rows: their principal replaced by the agreed balance.
 */
export function openBook(
  figures: AgreementFigures,
  loan: Repayment,
  balancesBefore: Partial<Record<LedgerAccount, number>>,
): { book: AgreementBook; loan: Repayment } {
  return {
    book: {
      repayment: agreementRepayment(figures),
      loanBefore: loan,
      payments: [],
      balancesBefore,
    },
    loan: {
      ...loan,
      principal_outstanding:
        loan.principal_outstanding - figures.principal_amount + figures.agreed_amount,
    },
  };
}

/** The loan's rows the agreement does not cover, with the principal they carry. */
function uncovered(loan: Repayment, figures: AgreementFigures, book: AgreementBook): Repayment {
  const covered = coveredOf(figures);
  return {
    rows: loan.rows.filter((row) => !covered.has(row.number)),
    principal_outstanding: loan.principal_outstanding - book.repayment.principal_outstanding,
    last_paid_at: loan.last_paid_at,
  };
}

/**
 * What the loan owes while the agreement's book is open, in its two parts: the agreement's rows
 * (a payment reaches them first) and the loan's rows it does not cover.
 */
export function partsUnderAgreement(
  loan: Repayment,
  figures: AgreementFigures,
  book: AgreementBook,
): { agreement: Repayment; loan: Repayment } {
  return { agreement: book.repayment, loan: uncovered(loan, figures, book) };
}

const owing = (repayment: Repayment, date: string, terms: RepaymentTerms) =>
  repayment.rows.every(isPaid) ? 0 : payoffAmount(repayment, date, terms);

/** What settles the loan on `date` while the agreement's book is open: both parts' payoffs. */
export function payoffUnderAgreement(
  loan: Repayment,
  figures: AgreementFigures,
  book: AgreementBook,
  date: string,
  terms: RepaymentTerms,
): number {
  return owing(book.repayment, date, terms) + owing(uncovered(loan, figures, book), date, terms);
}

export interface AgreementAllocation extends Allocation {
  /** The book after the payment. */
  book: AgreementBook;
  /** What the payment paid of the agreement's rows (its own numbering), and of the loan's. */
  agreementRows: Allocation['rows'];
  /** The agreement's first row (its entry) is paid. */
  entryPaid: boolean;
  /** Every agreement row is paid: the covered rows are paid by it. */
  fulfilled: boolean;
}

/**
 * A payment of `amount` on `date` while the agreement's book is open (see the module's notes).
 * Throws `PaymentAboveBalanceError` above what settles the agreement and the uncovered rows.
 */
export function payUnderAgreement(
  loan: Repayment,
  figures: AgreementFigures,
  book: AgreementBook,
  payment: { amount: number; date: string; paidAt: string; applyTo: ApplyTo },
  terms: RepaymentTerms,
): AgreementAllocation {
  const { amount, date, paidAt } = payment;
  const rest = uncovered(loan, figures, book);
  const toAgreementMax = owing(book.repayment, date, terms);
  const owed = toAgreementMax + owing(rest, date, terms);
  if (amount > owed) throw new PaymentAboveBalanceError(owed);
  const toAgreement = Math.min(amount, toAgreementMax);
  const own =
    toAgreement > 0
      ? allocatePayment(
          book.repayment,
          { amount: toAgreement, date, paidAt, applyTo: 'next' },
          terms,
        )
      : null;
  const others =
    amount > toAgreement
      ? allocatePayment(rest, { ...payment, amount: amount - toAgreement }, terms)
      : null;
  const agreementAfter = own?.after ?? book.repayment;
  const restAfter = others?.after ?? rest;
  const fulfilled = agreementAfter.rows.every(isPaid);
  const covered = coveredOf(figures);
  const restRows = new Map(restAfter.rows.map((row) => [row.number, row]));
  const rows = loan.rows.map((row) => {
    const moved = restRows.get(row.number);
    if (moved) return moved;
    // The agreement paid for the rows it covers.
    if (fulfilled && covered.has(row.number) && !isPaid(row))
      return { ...row, settled: String(row.installment_amount), paid_at: paidAt };
    return row;
  });
  const after: Repayment = {
    rows,
    principal_outstanding: restAfter.principal_outstanding + agreementAfter.principal_outstanding,
    last_paid_at: paidAt,
  };
  const sum = (pick: (allocation: Allocation) => number) =>
    (own ? pick(own) : 0) + (others ? pick(others) : 0);
  return {
    rows: others?.rows ?? [],
    agreementRows: own?.rows ?? [],
    principal: sum((a) => a.principal),
    interest: sum((a) => a.interest),
    lateFee: sum((a) => a.lateFee),
    lateInterest: sum((a) => a.lateInterest),
    discount: sum((a) => a.discount),
    after,
    finished: rows.every(isPaid),
    book: {
      ...book,
      repayment: agreementAfter,
      payments: [...book.payments, { ...payment }],
    },
    entryPaid: agreementAfter.rows[0] !== undefined && isPaid(agreementAfter.rows[0]),
    fulfilled,
  };
}

/**
 * The agreement undone (broken, or lapsed after money reached it): the loan's rows as they stood
 * when the book opened with every payment since allocated by §13 (`restoreOnBreak`), and the
 * loan's account balances that allocation makes — what the break's true-up moves the books to.
 */
export function undoAgreement(
  book: AgreementBook,
  terms: RepaymentTerms,
): {
  repayment: Repayment;
  excess: number;
  targetBalances: Partial<Record<LedgerAccount, number>>;
} {
  const restored = restoreOnBreak(book.loanBefore, book.payments, terms);
  const before = book.balancesBefore;
  const last = book.payments.at(-1);
  return {
    repayment: {
      ...restored.repayment,
      last_paid_at: last?.paidAt ?? restored.repayment.last_paid_at,
    },
    excess: restored.excess,
    targetBalances: {
      loan_principal: (before.loan_principal ?? 0) - restored.principalPaid,
      interest_income: (before.interest_income ?? 0) - restored.interestPaid,
      late_fee_income: (before.late_fee_income ?? 0) - restored.lateFeePaid,
      late_interest_income: (before.late_interest_income ?? 0) - restored.lateInterestPaid,
      agreement_discounts: before.agreement_discounts ?? 0,
    },
  };
}
