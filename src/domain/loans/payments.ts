import type { Actor } from '../operators.js';
/**
 * A payment as the loan's workflow receives it (contract §13): any amount, named by a reference
 * unique per loan. Pure: the API, the workflow and its activity share it.
 */
import type { ApplyTo } from './allocation.js';
import type { LoanTransactionType } from './loans.js';

export interface PaymentRequest {
  /** The payment's identity, unique per loan: the same payment is never booked twice. */
  reference: string;
  /** Centavos, or `payoff`: the payoff amount of the day of `paidAt`, whatever it is then. */
  amount: number | 'payoff';
  /** RFC 3339. */
  paidAt: string;
  applyTo: ApplyTo;
  /**
   * What the caller stated (a default is not): a request sent again without `amount` or `paid_at`
   * matches whatever the first one recorded.
   */
  stated: { amount: boolean; paidAt: boolean };
  /** The operator who recorded it by hand and the one who approved it; absent: no one by hand. */
  actor?: Actor | undefined;
  approvedBy?: Actor | undefined;
}

/**
 * The payment as the loan's workflow books it: one that states no `paid_at` is dated `at`, when
 * its turn came (never before the latest payment), so payments sent together are each booked, in
 * the order the workflow took them. Without `at` (a history from before), as requested.
 */
export function bookedAt(
  payment: PaymentRequest,
  at: string | undefined,
  latestPaidAt: string | null,
): PaymentRequest {
  if (payment.stated.paidAt || at === undefined) return payment;
  const paidAt = latestPaidAt && Date.parse(latestPaidAt) > Date.parse(at) ? latestPaidAt : at;
  return { ...payment, paidAt };
}

/** A recorded payment, as far as its identity goes. */
export interface RecordedPayment {
  type: LoanTransactionType;
  amount: number;
  occurredAt: Date;
}

/** Whether `request` is the payment already recorded under its reference (else: a conflict). */
export function isSamePayment(recorded: RecordedPayment, request: PaymentRequest): boolean {
  const payoff = request.amount === 'payoff';
  if ((recorded.type === 'payoff') !== payoff) return false;
  if (request.stated.amount && !payoff && recorded.amount !== request.amount) return false;
  if (request.stated.paidAt && recorded.occurredAt.getTime() !== Date.parse(request.paidAt))
    return false;
  return true;
}

/** Where a loan's repayment stands, as its workflow keeps it (small, whatever the schedule). */
export interface RepaymentProgress {
  /** The rows paid in full from the first on (the overdue timers start after them). */
  paidInstallments: number;
  /** The newest row still owing (rows after it were paid with `apply_to: "last"`); 0 when none. */
  lastUnpaid: number;
  finished: boolean;
}
