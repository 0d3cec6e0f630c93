import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Environment } from '../../src/domain/environments.js';
import type { LoanStatus } from '../../src/domain/loans/loans.js';
import type { PaymentRequest, RepaymentProgress } from '../../src/domain/loans/payments.js';
import type { LateChargeRates } from '../../src/domain/loans/repayment.js';
import type { ClockState } from '../sandbox-clock/messages.js';
import type { ChargeRequest } from '../../src/domain/loans/charges.js';
import type { Actor } from '../../src/domain/operators.js';
import type { PspPayoutStatus } from '../../src/domain/payouts/payouts.js';

/**
 * The contract of a loan's workflow (`loan/{ln_id}`): its input and the messages the API (the
 * partner's, the hosted signing page's, ops' and the sandbox's) sends it. Imported by both sides,
 * so the API never imports the workflow module itself.
 */
export interface LoanInput {
  loanId: string;
  customerId: string;
  creditOfferId: string;
  partnerId: string;
  environment: Environment;
  /** Epoch milliseconds: unsigned by then, the loan is cancelled (`signature_deadline`). */
  signatureDeadline: number;
  /** SANDBOX_DISBURSEMENT_DELAY for a sandbox loan; null in production (ops confirm). */
  sandboxDisbursementDelayMs: number | null;
  /** What the customer receives, in centavos (a sandbox amount ending in 13 fails to disburse). */
  requestedAmount: number;
  /** The cpfs that must sign, the customer's first. */
  signerCpfs: string[];
  /** Each installment's amount in centavos, in schedule order: what each payment must equal. */
  installmentAmounts: number[];
  /** Each installment's due date (`YYYY-MM-DD`); unpaid past it, a row becomes overdue. */
  installmentDueDates?: string[];
  /** The late-payment terms the loan was made with. */
  lateChargeRates?: LateChargeRates;
  /** The customer's sandbox clock (absent: real time). */
  clock?: ClockState;
  /** What a run carries across continue-as-new; a first run starts awaiting signatures. */
  carried?: LoanProgress;
  /** Events before a repaying run continues as new (tests lower it; see workflows/history.ts). */
  historyLimit?: number;
}

/** The loan's state as the workflow keeps it: small, whatever the schedule's length. */
export interface LoanProgress {
  status: LoanStatus;
  signed: string[];
  /** Rows 1…paidInstallments are paid in full. */
  paidInstallments: number;
  /** The newest row still owing (absent: the last row; 0: none), once rows were paid from the end. */
  lastUnpaid?: number;
  /** Rows 1…overdueThrough were found unpaid after their due date (some may be paid since). */
  overdueThrough?: number;
  /** Ops (or the sandbox) started sending the money: no cancellation from then on. */
  claimed?: boolean;
  /** The loan's active Pix charge: it expires at `expiresAt` (epoch ms, the customer's clock). */
  charge?: { id: string; expiresAt: number };
  /**
   * The payout that carries out the claim (contract §16, a production loan with a PSP): its id is
   * its idempotency key at the PSP. Set before it is sent; absent where ops disburse by hand.
   */
  payout?: { id: string };
  /** Written off (contract §17): the write-off watcher has nothing more to do. */
  writtenOff?: boolean;
}

export interface SignRequest {
  cpf: string;
  /** RFC 3339; the moment the signer confirmed. */
  signedAt: string;
  ipAddress: string | null;
  userAgent: string | null;
  /** The contract hash the signer was shown. */
  contractSha256: string;
  /** How the signer was identified (the code's masked channel); absent in signatures made before codes. */
  channel?: string;
}

/**
 * A signer confirms (the hosted page or the sandbox helper). Idempotent per signer: a second
 * signature answers the first. Refused with `signer_not_found` for a cpf that is not a signer and
 * `invalid_state` once the loan no longer takes signatures.
 */
export const signUpdate = defineUpdate<{ signedAt: string }, [SignRequest]>('sign');

/** The partner cancels (before the disbursement is confirmed; else refused with `invalid_state`). */
export const cancelUpdate = defineUpdate<void, [{ reason: string | null }]>('cancel');

/**
 * Ops start sending the money (contract §13): from then on the partner cannot cancel. Refused
 * with `invalid_state` unless `processing`, and with `release_window_passed` (the loan is then
 * cancelled) once the money could no longer arrive 7 days before the first due date. It names
 * its loan (issue 37): a message with a payload passes the payload codec, so one sent in clear to
 * Temporal's frontend is refused; without it (an older API) the Update is refused as
 * `message_without_payload`, for the caller to retry.
 */
export const claimDisbursementUpdate = defineUpdate<void, [{ loanId: string }]>(
  'claim-disbursement',
);

/**
 * Ops (or the sandbox helper) report the disbursement's outcome while the loan is `processing`
 * (a confirmation without a claim claims too).
 */
export const disbursementUpdate = defineUpdate<
  void,
  [
    {
      outcome: 'confirmed' | 'failed';
      reason: string | null;
      at: string;
      /** Who confirmed it by hand and who approved that (recorded on the transaction). */
      actor?: Actor | undefined;
      approvedBy?: Actor | undefined;
    },
  ]
>('disbursement');

/**
 * A payment of any amount (contract §13), or of the payoff amount (`amount: 'payoff'`), allocated
 * over the rows by the loan's activity under the loan's lock. Answers where the repayment stands
 * and whether the reference had been recorded already (`repeated`: nothing was written). Refused
 * with `payment_reference_conflict`, `payment_above_payoff`, `before_latest_payment`, or
 * `invalid_state` unless the loan is `active`.
 */
export const paymentUpdate = defineUpdate<
  RepaymentProgress & { repeated: boolean },
  [PaymentRequest]
>('record-payment');

/**
 * Before §13: a payment of exactly the oldest unpaid row's amount due. No longer sent; kept so
 * the histories of loans paid this way replay.
 */
export const exactPaymentUpdate = defineUpdate<
  { installmentNumber: number },
  [{ amount: number; paidAt: string }]
>('payment');

/**
 * Before §13: early settlement of every unpaid row on the day of `paidAt` (now a payment of the
 * payoff amount). No longer sent; kept so the histories of loans settled this way replay.
 */
export const payoffUpdate = defineUpdate<{ amount: number }, [{ paidAt: string }]>('payoff');

export const loanProgressQuery = defineQuery<LoanProgress>('progress');

/**
 * A new Pix charge for the loan (contract §14; a withdrawal's too), replacing its active one. The
 * workflow keeps the charge's expiry on the customer's clock. Refused (by type) with
 * `invalid_state`, `nothing_overdue`, `above_payoff_amount` or `invalid_expires_at`.
 */
export const createChargeUpdate = defineUpdate<
  { chargeId: string; expiresAt: string } | { withdrawn: true },
  [ChargeRequest & { hasCnpj: boolean }]
>('create-charge');

/**
 * What the charge's activity wrote: the charge, or — a withdrawal whose payments already reached
 * the amount released — nothing to charge: the loan was withdrawn at once.
 */
export type CreatedCharge =
  | { chargeId: string; expiresAt: string; status: 'active' | 'paid' | 'expired' | 'cancelled' }
  | { withdrawn: true };

/** Where a loan stands after a Pix was booked on it. */
export interface PixOutcome extends RepaymentProgress {
  status: LoanStatus;
  /** Booked already (nothing was written). */
  repeated: boolean;
  /** The charge the Pix named, if any. */
  chargeId: string | null;
  /** It reached the loan's payment agreement (contract §17): the workflow reads it again. */
  agreementChanged?: boolean;
}

/**
 * A Pix received for the loan (stored by `received_pix` under its end-to-end id), booked as §14
 * says: never refused, whatever the loan's state.
 */
export const recordPixUpdate = defineUpdate<PixOutcome, [{ endToEndId: string }]>('record-pix');

/**
 * The PSP told of the loan's payout (`POST /psp/v1/payouts`, stored first): its outcome is read
 * from the record. `returned` on an active loan cancels it (`payout_returned`); `confirmed` or
 * `failed` end the wait of a `processing` loan. Sent again by a repeated notification: harmless.
 */
export const payoutOutcomeSignal =
  defineSignal<[{ payoutId: string; status: PspPayoutStatus }]>('payout-outcome');
