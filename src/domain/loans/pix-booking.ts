/**
 * How one Pix is booked on its loan (contract §14): the decision alone, with no database, so the
 * activity that writes it and the ledger's property test run the same rules. Money received is
 * never refused — what a loan no longer owes is due back.
 */
import {
  overpaymentEntries,
  paymentEntries,
  withdrawalEntries,
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
import { withdrawalDue, type ChargeScope } from './charges.js';
import type { LoanStatus } from './loans.js';

export interface PixOnLoan {
  /** Centavos received. */
  amount: number;
  /** The business date and instant it counts from (already clamped by the caller). */
  date: string;
  paidAt: string;
  /** The scope of the charge its txid named. */
  chargeScope: ChargeScope | undefined;
  loan: {
    status: LoanStatus;
    figures: { requested_amount: number; principal_amount: number };
    repayment: Repayment;
    terms: RepaymentTerms;
  };
  /** The loan's account balances (debits − credits); needed only for a withdrawal charge's Pix. */
  balances?: Partial<Record<LedgerAccount, number>>;
}

export type PixBooking =
  | { type: 'overpayment'; refund: number; entries: LedgerEntry[] }
  | { type: 'withdrawal'; refund: number; principal: number; entries: LedgerEntry[] }
  | { type: 'payment' | 'payoff'; refund: number; allocation: Allocation; entries: LedgerEntry[] };

/** Whether a Pix on a withdrawal charge withdraws: it must bring what the withdrawal returns. */
export const withdraws = (pix: PixOnLoan): boolean =>
  pix.loan.status === 'active' &&
  pix.chargeScope === 'withdrawal' &&
  pix.balances !== undefined &&
  pix.amount >= withdrawalDue(pix.loan.figures, pix.balances);

/**
 * - A loan no longer `active`: all of it is due back (`overpayment`).
 * - A withdrawal charge's Pix bringing at least what the withdrawal returns: the loan is undone
 *   (`withdrawal`), the rest due back.
 * - Otherwise a payment of §13 up to the payoff amount (`payoff` when it settles the loan), the
 *   rest due back.
 */
export function planPixBooking(pix: PixOnLoan): PixBooking {
  const { amount, loan } = pix;
  if (loan.status !== 'active')
    return { type: 'overpayment', refund: amount, entries: overpaymentEntries(amount) };
  if (withdraws(pix)) {
    const balances = pix.balances!;
    const refund = amount - withdrawalDue(loan.figures, balances);
    return {
      type: 'withdrawal',
      refund,
      principal: balances.loan_principal ?? 0,
      entries: withdrawalEntries(amount, refund, balances),
    };
  }
  const payoff = payoffAmount(loan.repayment, pix.date, loan.terms);
  const applied = Math.min(amount, payoff);
  const refund = amount - applied;
  const allocation = allocatePayment(
    loan.repayment,
    { amount: applied, date: pix.date, paidAt: pix.paidAt, applyTo: 'next' },
    loan.terms,
  );
  return {
    type: allocation.finished && applied === payoff ? 'payoff' : 'payment',
    refund,
    allocation,
    entries: paymentEntries({ amount, ...allocation, refund }),
  };
}
