/**
 * What a payment agreement does to its loan (contract §17, docs/agreements.md), for the loan
 * workflow's activities (its only writer), under the loan's row lock: a payment while the
 * agreement is `pending_entry` or `active` (`planAgreementPayment`, then
 * `recordAgreementPayment`), and the agreement undone by its break or a lapse after money reached
 * it (`undoAgreementOnLoan`). The money math is `src/domain/loans/agreement-book.ts`.
 */
import type { DbOrTx } from '../src/db/client.js';
import { changeAgreement, liveAgreementOf, type Agreement } from '../src/db/queries/agreements.js';
import { addRefundDue } from '../src/db/queries/charges.js';
import { balancesByAccount, loanAccountBalances, postEntries } from '../src/db/queries/ledger.js';
import {
  changeLoanRow,
  insertLoanTransaction,
  repaymentOf,
  repaymentTerms,
  type LoanView,
} from '../src/db/queries/loans.js';
import {
  agreementEntries,
  trueUpEntries,
  type LedgerAccount,
} from '../src/domain/ledger/postings.js';
import {
  openBook,
  payoffUnderAgreement,
  payUnderAgreement,
  undoAgreement,
  type AgreementAllocation,
} from '../src/domain/loans/agreement-book.js';
import { agreementEventTypes } from '../src/domain/loans/agreements.js';
import type { ApplyTo } from '../src/domain/loans/allocation.js';
import { newId } from '../src/domain/ids.js';
import type { Tenant } from '../src/domain/tenant.js';
import { presentAgreement, type AcceptanceUrl } from '../src/presenters/agreements.js';
import type { NewEvent } from '../src/webhooks/fan-out.js';

/** The accounts an agreement's books move (its break trues them up). */
const agreementAccounts: readonly LedgerAccount[] = [
  'loan_principal',
  'interest_income',
  'late_fee_income',
  'late_interest_income',
  'agreement_discounts',
];

export interface AgreementPayment {
  agreement: Agreement;
  /** The payment's amount (a payoff's, computed over the agreement and the uncovered rows). */
  amount: number;
  allocation: AgreementAllocation;
  /** The book opened with this payment: the agreement takes over its rows now. */
  opened: boolean;
}

/** The loan's agreement that takes its payments now, ready to value and spread one. */
export interface AgreementTaking {
  agreement: Agreement;
  /** What settles the agreement and the uncovered rows on `date`. */
  payoff(date: string): number;
  /** A payment of a known amount spread over both (throws above `payoff`). */
  pay(payment: {
    amount: number;
    date: string;
    paidAt: string;
    applyTo: ApplyTo;
  }): AgreementPayment;
}

/**
 * The loan's agreement if it takes payments (`pending_entry` or `active`: contract §17), its book
 * opened on the loan as it stands when no money reached it yet; null when the payment is the
 * loan's alone (§13). Pix (activities/pix.ts) and ops' payments alike.
 */
export async function agreementTakingPayment(
  tx: DbOrTx,
  loan: LoanView,
): Promise<AgreementTaking | null> {
  const agreement = await liveAgreementOf(tx, loan.id);
  if (!agreement || (agreement.status !== 'pending_entry' && agreement.status !== 'active'))
    return null;
  const terms = repaymentTerms(loan);
  const opened = agreement.book === null;
  const { book, loan: repayment } = agreement.book
    ? { book: agreement.book, loan: repaymentOf(loan) }
    : openBook(
        agreement.figures,
        repaymentOf(loan),
        balancesByAccount(await loanAccountBalances(tx, loan.id)),
      );
  return {
    agreement,
    payoff: (date) => payoffUnderAgreement(repayment, agreement.figures, book, date, terms),
    pay: (payment) => ({
      agreement,
      amount: payment.amount,
      allocation: payUnderAgreement(repayment, agreement.figures, book, payment, terms),
      opened,
    }),
  };
}

/**
 * A payment while the loan's agreement takes payments: spread over the agreement's rows first,
 * then the uncovered rows (`payUnderAgreement`); null when no agreement takes it. Throws the
 * allocation's `PaymentAboveBalanceError` above what settles both.
 */
export async function planAgreementPayment(
  tx: DbOrTx,
  loan: LoanView,
  payment: { amount: number | 'payoff'; date: string; paidAt: string; applyTo: ApplyTo },
): Promise<AgreementPayment | null> {
  const taking = await agreementTakingPayment(tx, loan);
  if (!taking) return null;
  const amount = payment.amount === 'payoff' ? taking.payoff(payment.date) : payment.amount;
  return taking.pay({ ...payment, amount });
}

/**
 * Records what the payment did to the agreement, before the payment's own transaction: the book
 * opened (a `agreement` transaction: the covered rows' interest and late charges earned, the
 * discount an expense in `agreement_discounts`, `loan_principal` grown to the agreed balance — not
 * on a written-off loan, whose book holds nothing); the entry paid by its deadline, `active` with
 * the covered rows `renegotiated` (`loan.agreement_active`); every row paid, `fulfilled`
 * (`loan.agreement_fulfilled`). Returns the events.
 */
export async function recordAgreementPayment(
  tx: DbOrTx,
  tenant: Tenant,
  loan: LoanView,
  planned: AgreementPayment,
  paidAt: string,
  acceptanceUrl: AcceptanceUrl,
): Promise<NewEvent[]> {
  const { agreement, allocation } = planned;
  const { figures } = agreement;
  if (planned.opened && !loan.writtenOffAt) {
    const written = await insertLoanTransaction(tx, tenant, loan.id, {
      id: newId('txn'),
      step: `agreement:${agreement.id}`,
      type: 'agreement',
      amount: figures.agreed_amount,
      principalAmount: figures.principal_amount,
      interestAmount: figures.interest_amount,
      lateFeeAmount: figures.late_fee_amount,
      lateInterestAmount: figures.late_interest_amount,
      discountAmount: figures.discount_amount,
      occurredAt: new Date(paidAt),
    });
    if (!written) throw new Error(`agreement ${agreement.id} booked twice`);
    await postEntries(tx, tenant, written, agreementEntries(figures));
  }
  const at = new Date(paidAt);
  const activates =
    agreement.status === 'pending_entry' &&
    allocation.entryPaid &&
    at <= agreement.acceptanceDeadline;
  let changed = await changeAgreement(tx, agreement.id, {
    book: allocation.book,
    ...(activates ? { status: 'active' as const, activeAt: at } : {}),
  });
  const events: NewEvent[] = [];
  const eventOf = (type: string, written: Agreement): NewEvent => ({
    id: newId('evt'),
    type,
    data: presentAgreement(written, acceptanceUrl),
    createdAt: written.updatedAt,
  });
  if (activates) {
    await changeLoanRow(tx, loan.id, {
      renegotiatedRows: figures.rows.map((row) => row.number),
    });
    events.push(eventOf(agreementEventTypes.active, changed));
  }
  if (allocation.fulfilled && changed.status === 'active') {
    changed = await changeAgreement(tx, agreement.id, { status: 'fulfilled', endedAt: at });
    await changeLoanRow(tx, loan.id, { renegotiatedRows: [] });
    events.push(eventOf(agreementEventTypes.fulfilled, changed));
  }
  return events;
}

/**
 * The agreement undone on its loan (its break, or its lapse after money reached it): the loan's
 * rows as they stood when its book opened, every payment since allocated to them by §13
 * (`undoAgreement`), no row `renegotiated`; an `agreement_broken` transaction moves the loan's
 * accounts to what that allocation books (money above it, none in practice, due back). Nothing to
 * undo when no money reached it. The caller holds the loan's lock and ends the agreement.
 */
export async function undoAgreementOnLoan(
  tx: DbOrTx,
  tenant: Tenant,
  loan: LoanView,
  agreement: Agreement,
  at: string,
): Promise<boolean> {
  const { book } = agreement;
  if (!book) return false;
  const undone = undoAgreement(book, repaymentTerms(loan));
  await changeLoanRow(tx, loan.id, { repayment: undone.repayment, renegotiatedRows: [] });
  const balances = balancesByAccount(await loanAccountBalances(tx, loan.id));
  const current = Object.fromEntries(
    agreementAccounts.map((account) => [account, balances[account] ?? 0]),
  );
  // A written-off loan's book holds none of it: only money due back moves.
  const entries = loan.writtenOffAt
    ? trueUpEntries({}, {}, undone.excess)
    : trueUpEntries(current, undone.targetBalances, undone.excess);
  if (entries.length > 0) {
    const written = await insertLoanTransaction(tx, tenant, loan.id, {
      id: newId('txn'),
      step: `agreement-undone:${agreement.id}`,
      type: 'agreement_broken',
      amount: 0,
      refundAmount: undone.excess > 0 ? undone.excess : null,
      occurredAt: new Date(at),
    });
    if (!written) throw new Error(`agreement ${agreement.id} undone twice`);
    await postEntries(tx, tenant, written, entries);
  }
  if (undone.excess > 0) await addRefundDue(tx, loan.id, undone.excess);
  return true;
}
