import { addDays, startOfBusinessDate } from '../../src/domain/business-date.js';
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

/** The index of the oldest row neither paid nor yet marked overdue. */
const oldestUnmarked = (progress: LoanProgress) =>
  Math.max(progress.overdueThrough ?? 0, progress.paidInstallments);

/**
 * While active: a durable timer to the end of the oldest unpaid row's due date (on the
 * customer's clock); unpaid then, the row becomes overdue (`markOverdue`, given the installment's
 * number and the deadline that fell due), and the next row's timer follows. Returns once `stop()`.
 */
export async function watchDueDates(
  { progress, dueDates, clock, serialized }: WatchedLoan,
  stop: () => boolean,
  markOverdue: (installmentNumber: number, deadline: number | null) => Promise<void>,
): Promise<void> {
  for (;;) {
    const next = oldestUnmarked(progress);
    const dueDate = dueDates[next];
    const deadline = dueDate === undefined ? null : startOfBusinessDate(addDays(dueDate, 1));
    const moved = () => stop() || oldestUnmarked(progress) !== next;
    if (await clock.until(deadline, moved)) {
      if (stop()) return;
      continue;
    }
    await serialized(async () => {
      // Paid or marked meanwhile: the next round looks at the row after it.
      if (progress.status !== 'active' || oldestUnmarked(progress) !== next) return;
      await markOverdue(next + 1, deadline);
    });
  }
}
