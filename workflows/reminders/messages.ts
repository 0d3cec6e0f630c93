import type { Environment } from '../../src/domain/environments.js';
import type { ClockState } from '../sandbox-clock/messages.js';

/**
 * The input of a loan's reminders workflow (`reminders/{ln_id}`, contract §17), started through
 * the outbox in the transaction that makes the loan `active`.
 */
export interface RemindersInput {
  loanId: string;
  customerId: string;
  partnerId: string;
  environment: Environment;
  /**
   * The last business date already looked at (a continued run's; absent on the first run: the
   * last date whose 09:00 had passed when the workflow started, so nothing is sent late).
   */
  checkedThrough?: string;
  /** The customer's clock (sandbox), carried across continue-as-new. */
  clock?: ClockState;
  /** Events before a run continues as new (tests lower it; see workflows/history.ts). */
  historyLimit?: number;
}

/** What the reminders activity says of the next date to look at. */
export type ReminderPlan = { ended: true } | { ended: false; next: string };
