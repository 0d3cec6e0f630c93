import { patched } from '@temporalio/workflow';
import { addDays, startOfBusinessDate } from '../../src/domain/business-date.js';
import { lastDayWithoutCharges } from '../../src/domain/calendar/business-days.js';
import type { CustomerClock } from '../clock.js';
import type { Serialized } from '../step-queue.js';
import type { LoanProgress } from './messages.js';

/** What the watcher reads of its loan's workflow. */
export interface WatchedLoan {
  progress: LoanProgress;
  /** Each installment's due date (`YYYY-MM-DD`), in schedule order. */
  dueDates: string[];
  clock: CustomerClock;
  /** The loan's step queue: a row is marked in its turn, never during a payment. */
  serialized: Serialized;
}

/**
 * One more deadline the watcher waits for in the same wait (the write-off's, contract §17): its
 * instant now (null: none), and what to do when it falls due, in the loan's step queue.
 */
export interface AlsoDue {
  deadline(): number | null;
  fire(deadline: number): Promise<void>;
}

/** The index of the oldest row neither paid nor yet marked overdue. */
const oldestUnmarked = (progress: LoanProgress) =>
  Math.max(progress.overdueThrough ?? 0, progress.paidInstallments);

/**
 * The last day a row due on `dueDate` is paid without late charges: the next business day when
 * the due date is not one (Lei 7.089/1983). Loans whose timers were set before the calendar keep
 * the due date itself, so their histories replay.
 */
const lastDayOnTime = (dueDate: string) =>
  patched('business-day-overdue') ? lastDayWithoutCharges(dueDate) : dueDate;

/**
 * While active: a durable timer to the end of the oldest unpaid row's last day without charges
 * (on the customer's clock); unpaid then, the row becomes overdue (`markOverdue`, given the
 * installment's number and the deadline that fell due), and the next row's timer follows. Rows
 * after the newest unpaid one (paid with `apply_to: "last"`) have no timer. The active Pix charge
 * (contract §14) expires on the same clock (`expireCharge`): one wait for whichever comes first,
 * so a clock advance finds everything due in one place. Returns once `stop()`.
 */
export async function watchDueDates(
  { progress, dueDates, clock, serialized }: WatchedLoan,
  stop: () => boolean,
  markOverdue: (installmentNumber: number, deadline: number | null) => Promise<void>,
  expireCharge?: (chargeId: string) => Promise<void>,
  also?: AlsoDue,
): Promise<void> {
  for (;;) {
    const next = oldestUnmarked(progress);
    // Rows after the newest unpaid one are paid (`apply_to: "last"`): nothing to watch there.
    const watched = () => next < Math.min(progress.lastUnpaid ?? Infinity, dueDates.length);
    const dueDate = watched() ? dueDates[next]! : undefined;
    const rowDeadline =
      dueDate === undefined ? null : startOfBusinessDate(addDays(lastDayOnTime(dueDate), 1));
    // Loans without a charge wait exactly as before charges existed (their histories replay).
    const charge = expireCharge ? progress.charge : undefined;
    const chargeFirst =
      charge !== undefined && (rowDeadline === null || charge.expiresAt < rowDeadline);
    const ownDeadline = chargeFirst ? charge.expiresAt : rowDeadline;
    const other = also?.deadline() ?? null;
    const otherFirst = other !== null && (ownDeadline === null || other < ownDeadline);
    const deadline = otherFirst ? other : ownDeadline;
    const moved = () =>
      stop() ||
      oldestUnmarked(progress) !== next ||
      watched() !== (dueDate !== undefined) ||
      (expireCharge !== undefined && progress.charge?.id !== charge?.id) ||
      (also !== undefined && also.deadline() !== other);
    if (await clock.until(deadline, moved)) {
      if (stop()) return;
      continue;
    }
    if (otherFirst) {
      await serialized(async () => {
        if (!stop() && also!.deadline() === other) await also!.fire(other);
      });
      continue;
    }
    if (chargeFirst) {
      await serialized(async () => {
        if (progress.charge?.id === charge.id) await expireCharge!(charge.id);
      });
      continue;
    }
    await serialized(async () => {
      // Paid or marked meanwhile: the next round looks at the row after it.
      if (progress.status !== 'active' || oldestUnmarked(progress) !== next) return;
      await markOverdue(next + 1, deadline);
    });
  }
}
