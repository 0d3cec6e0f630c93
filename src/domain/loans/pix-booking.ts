/**
 * How one Pix is booked on its loan (contract §14): the decision alone, with no database, so the
 * activity that writes it and the ledger's property test run the same rules. Money received is
 * never refused — what a loan no longer owes is due back.
 */
import {
  assignedWithdrawalEntries,
  bookedFor,
  overpaymentEntries,
  paymentEntries,
  withdrawalEntries,
  type CashAccount,
  type LedgerAccount,
  type LedgerEntry,
} from '../ledger/postings.js';
import {
  allocatePayment,
  payoffAmount,
  type Allocation,
  type Repayment,
  type RepaymentTerms,
} from './allocation.js';
import { withdrawalDue, type ChargeScope, type ChargeStatus } from './charges.js';
import type { LoanStatus } from './loans.js';

/** The charge a Pix's `txid` named, as it stood when the Pix was booked. */
export interface NamedCharge {
  scope: ChargeScope;
  status: ChargeStatus;
  /** Centavos the charge asked for. */
  amount: number;
  /** RFC 3339: for a withdrawal charge, the end of the withdrawal window. */
  expiresAt: string;
}

export interface PixOnLoan {
  /** Centavos received. */
  amount: number;
  /** The business date and instant it counts from (already clamped by the caller). */
  date: string;
  paidAt: string;
  /** When the payer's bank says it was paid (RFC 3339, unclamped): what the window is held to. */
  paidAtByBank: string;
  /** The charge its txid named. */
  charge: NamedCharge | undefined;
  loan: {
    status: LoanStatus;
    figures: { requested_amount: number; principal_amount: number };
    repayment: Repayment;
    terms: RepaymentTerms;
    /** Set once the loan was written off (contract §17): its payments post to `recoveries`. */
    writtenOffAt?: Date | null;
    /** Set once the loan was sold (contract §19): its money is owed to the buyer. */
    assignmentId?: string | null;
    /**
     * A payment agreement taking the loan's payments (contract §17): what settles it and the
     * uncovered rows that day, and how it spreads a payment (activities/agreement-payments.ts).
     */
    agreement?: { payoff: number; allocate: (amount: number) => Allocation } | undefined;
  };
  /**
   * The loan's account balances (debits − credits); needed only for a withdrawal charge's Pix. A
   * sold loan's are the borrower's side of them (`borrowerBalances`): the book holds none.
   */
  balances?: Partial<Record<LedgerAccount, number>>;
  /** Where its money is: the cash received, or `unidentified_receipts` for a Pix matched late. */
  from?: CashAccount;
}

export type PixBooking =
  | { type: 'overpayment'; refund: number; entries: LedgerEntry[] }
  | { type: 'withdrawal'; refund: number; principal: number; entries: LedgerEntry[] }
  | { type: 'payment' | 'payoff'; refund: number; allocation: Allocation; entries: LedgerEntry[] };

/**
 * Whether a Pix withdraws the loan (CDC art. 49, contract §14): it pays a withdrawal charge that
 * was active when it was paid — its bank's time before the charge's expiry, the end of the
 * window, and the charge neither paid nor replaced by then (an `expired` charge was active until
 * its expiry: a Pix paid in time but told late still withdraws) — with at least the charge's
 * amount. Any other Pix on that txid is a payment: the BR Code is static, so no bank refuses a
 * Pix on it after the window, or for less.
 */
export const withdraws = (pix: PixOnLoan): boolean =>
  pix.loan.status === 'active' &&
  pix.charge?.scope === 'withdrawal' &&
  (pix.charge.status === 'active' || pix.charge.status === 'expired') &&
  Date.parse(pix.paidAtByBank) < Date.parse(pix.charge.expiresAt) &&
  pix.amount >= pix.charge.amount &&
  pix.balances !== undefined;

/**
 * - A loan no longer `active`: all of it is due back (`overpayment`).
 * - A Pix that `withdraws`: the loan is undone (`withdrawal`); what it brought above what the
 *   withdrawal returns (the charge's amount, less any payment since) is due back.
 * - Otherwise a payment of §13 up to the payoff amount (`payoff` when it settles the loan), the
 *   rest due back.
 */
export function planPixBooking(pix: PixOnLoan): PixBooking {
  const { amount, loan } = pix;
  if (loan.status !== 'active')
    return { type: 'overpayment', refund: amount, entries: overpaymentEntries(amount, pix.from) };
  if (withdraws(pix)) {
    const balances = pix.balances!;
    const refund = amount - withdrawalDue(loan.figures, balances);
    return {
      type: 'withdrawal',
      refund,
      principal: balances.loan_principal ?? 0,
      entries: loan.assignmentId
        ? assignedWithdrawalEntries(amount, refund)
        : withdrawalEntries(amount, refund, balances),
    };
  }
  const payoff = loan.agreement?.payoff ?? payoffAmount(loan.repayment, pix.date, loan.terms);
  const applied = Math.min(amount, payoff);
  const refund = amount - applied;
  const allocation = loan.agreement
    ? loan.agreement.allocate(applied)
    : allocatePayment(
        loan.repayment,
        { amount: applied, date: pix.date, paidAt: pix.paidAt, applyTo: 'next' },
        loan.terms,
      );
  return {
    type: allocation.finished && applied === payoff ? 'payoff' : 'payment',
    refund,
    allocation,
    entries: bookedFor(
      { writtenOffAt: loan.writtenOffAt ?? null, assignmentId: loan.assignmentId ?? null },
      paymentEntries({ amount, ...allocation, refund, from: pix.from }),
    ),
  };
}
