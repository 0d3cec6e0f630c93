/**
 * A production loan's disbursement by payout (contract §16): what the service keeps of each payout
 * it sends through the lender's PSP, and the rules every side reads. Pure — the loan workflow, its
 * activities and the PSP's notification route all run these.
 *
 * sending (stored, the PSP's answer not yet recorded) → pending (the PSP took it) → confirmed
 * (end-to-end id) | failed (reason); confirmed → returned (the receiving bank gave it back).
 */
import type { DisbursementAccount } from '../loans/disbursement-account.js';

export const payoutStatuses = ['sending', 'pending', 'confirmed', 'failed', 'returned'] as const;
export type PayoutStatus = (typeof payoutStatuses)[number];

/** What the PSP says of a payout (the payout port's `PayoutStatus`). */
export type PspPayoutStatus = Exclude<PayoutStatus, 'sending'>;

/** Who receives the money, in the payout port's shape (src/psp/payouts/openapi.yaml). */
export type PayoutBeneficiary = { pixKey: string };

/** The outcome the PSP reports (notified or polled), as the service stores it. */
export interface PayoutOutcome {
  status: PspPayoutStatus;
  pspPayoutId: string;
  endToEndId?: string | undefined;
  failureReason?: string | undefined;
  returnReason?: string | undefined;
  /** When the PSP last changed it (its `updatedAt`). */
  at: string;
}

/**
 * Where a status may go. A later report never goes back (a `pending` read after the notification
 * of `confirmed` changes nothing), and a payout ends `failed` or `returned`.
 */
const next: Record<PayoutStatus, readonly PayoutStatus[]> = {
  sending: ['pending', 'confirmed', 'failed', 'returned'],
  pending: ['confirmed', 'failed', 'returned'],
  confirmed: ['returned'],
  failed: [],
  returned: [],
};

export const payoutMayBecome = (from: PayoutStatus, to: PayoutStatus): boolean =>
  next[from].includes(to);

/** The PSP has not settled it either way: the loan waits (and polls). */
export const payoutInFlight = (status: PayoutStatus): boolean =>
  status === 'sending' || status === 'pending';

/**
 * The beneficiary of a loan's payout: the borrower's Pix key, as the loan records it. A bank
 * account is not paid by the payout port yet (it needs the bank's ISPB, which the loan does not
 * record — only its COMPE code): such a loan keeps ops' manual disbursement. Null then.
 */
export function payoutBeneficiary(account: DisbursementAccount): PayoutBeneficiary | null {
  return account.type === 'pix' ? { pixKey: account.pix_key } : null;
}
