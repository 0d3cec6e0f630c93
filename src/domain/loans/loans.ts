/**
 * Loans: their statuses, events and the rules every side reads (contract §8). Pure — the loan
 * workflow, its activities and the API all run these.
 *
 * awaiting_signatures → processing (every signer signed) → active (disbursement confirmed) →
 * finished (last installment paid); cancelled before the disbursement is confirmed (by the partner
 * or at the signature deadline); error (final) when the disbursement fails.
 */

export const loanStatuses = [
  'awaiting_signatures',
  'processing',
  'active',
  'finished',
  'cancelled',
  'error',
] as const;
export type LoanStatus = (typeof loanStatuses)[number];

/**
 * A schedule row: `overdue` once the workflow has found it unpaid after its due date;
 * `renegotiated` while an active payment agreement covers it (contract §17).
 */
export const installmentStatuses = ['pending', 'overdue', 'paid', 'renegotiated'] as const;
export type InstallmentStatus = (typeof installmentStatuses)[number];

/** The statuses a loan ends in: its record says so for good, whatever became of its workflow. */
export const endedStatuses: readonly LoanStatus[] = ['finished', 'cancelled', 'error'];

/** The statuses a loan can still be cancelled in: the disbursement is not confirmed yet. */
export const cancellableStatuses: readonly LoanStatus[] = ['awaiting_signatures', 'processing'];

/** A payout's progress (contract §13): once `claimed`, money may be on its way. */
export const disbursementStatuses = ['pending', 'claimed', 'confirmed', 'failed'] as const;
export type DisbursementStatus = (typeof disbursementStatuses)[number];

/** The IOF rates a loan was priced with, as decimal text (see `release-repricing.ts`). */
export interface IofTerms {
  flatRate: string;
  dailyRate: string;
}

/** What a release later than priced changed (contract §13), as the loan shows it. */
export interface ReleaseAdjustment {
  priced_release_date: string;
  interest_credit_amount: number;
  iof_credit_amount: number;
  row1_installment_before: number;
  row1_installment_after: number;
}

export const loanEventTypes = {
  created: 'loan.created',
  signatureReceived: 'loan.signature_received',
  processing: 'loan.processing',
  active: 'loan.active',
  paymentReceived: 'loan.payment_received',
  installmentOverdue: 'loan.installment_overdue',
  finished: 'loan.finished',
  cancelled: 'loan.cancelled',
  error: 'loan.error',
  refundDue: 'loan.refund_due',
  refundSent: 'loan.refund_sent',
  /** Contract §17: a row overdue more than WRITE_OFF_AFTER_DAYS; the loan stays `active`. */
  writtenOff: 'loan.written_off',
  /** Contract §19: the loan was sold (`assigned_to`); what the borrower owes is unchanged. */
  assigned: 'loan.assigned',
} as const;

/** What ended a loan in `error`. */
export interface LoanError {
  code: 'disbursement_failed';
  message: string;
}

/** Extra signers besides the customer (contract §8: at most four, distinct cpfs). */
export const MAX_EXTRA_SIGNERS = 4;

/**
 * The sandbox's failing disbursement: a requested amount ending in 13 centavos fails, so partners
 * can rehearse `loan.error` (contract §8).
 */
export function sandboxDisbursementFails(requestedAmount: number): boolean {
  return requestedAmount % 100 === 13;
}

/**
 * What a loan transaction is: the money out, a payment (`payoff` when it settles every row), a
 * `withdrawal` (contract §14: the released amount returned, the loan cancelled), an `overpayment`
 * (money received that the loan no longer owed, all of it due back) and a `refund` (money sent
 * back to the borrower).
 */
export const loanTransactionTypes = [
  'disbursement',
  'payment',
  'payoff',
  'withdrawal',
  'overpayment',
  'refund',
  /** A production loan's payout came back (contract §16): the loan undone, its payments due back. */
  'payout_returned',
  /** Contract §17: the unpaid principal moved to `credit_losses`; no money moves. */
  'write_off',
  /** Contract §17: the loan paid off by a new loan's release (`refinancing_clearing`); no money moves. */
  'refinancing',
  /**
   * Contract §17: a payment agreement took over the rows it covers (its first payment): the
   * charges in its debt earned, its discount an expense; `amount` the agreed balance. No money moves.
   */
  'agreement',
  /** Contract §17: an agreement undone (its break): the books as §13 allocates its payments. */
  'agreement_broken',
  /**
   * Contract §19: the loan sold — its principal and the interest and charges accrued that day off
   * the book, the price owed by the buyer; `amount` the price. No money moves.
   */
  'assignment',
] as const;
export type LoanTransactionType = (typeof loanTransactionTypes)[number];

/**
 * Where a transaction's `reference` comes from (contract §13: unique per loan and source): `pix`,
 * the end-to-end id the payment system gave a Pix; `manual`, what ops (or the sandbox's payment
 * twin) named a payment or a refund they recorded.
 */
export const referenceSources = ['pix', 'manual'] as const;
export type ReferenceSource = (typeof referenceSources)[number];

/**
 * Ledger steps: one disbursement; one per payment, by its reference (before §13: one per
 * installment, and one payoff); each written once.
 */
export const ledgerStep = {
  disbursement: 'disbursement',
  payment: (installmentNumber: number) => `payment:${installmentNumber}`,
  payoff: 'payoff',
  reference: (reference: string) => `reference:${reference}`,
  /** A Pix, by its end-to-end id (Pix booked before sources were kept used `reference:`). */
  pix: (endToEndId: string) => `pix:${endToEndId}`,
  /** A withdrawal with nothing left to pay (a withdrawal by Pix is keyed by the Pix's reference). */
  withdrawal: 'withdrawal',
  /** Money due back returned by a devolução (contract §16), by the devolução's id. */
  devolucao: (devolucaoId: string) => `devolucao:${devolucaoId}`,
  /** The loan's payout came back: once per loan. */
  payoutReturned: 'payout_returned',
  /** The loan written off: once per loan. */
  writeOff: 'write_off',
  /** Paid off by the release of new loan `newLoanId` (contract §17): once per new loan. */
  refinanced: (newLoanId: string) => `refinanced:${newLoanId}`,
  /** Sold in assignment `assignmentId` (contract §19): once per loan. */
  assigned: (assignmentId: string) => `assigned:${assignmentId}`,
} as const;
