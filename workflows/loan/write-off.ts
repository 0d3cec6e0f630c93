import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { writeOffDeadline } from '../../src/domain/loans/write-off.js';
import type { Tenant } from '../../src/domain/tenant.js';
import { hexId } from '../ids.js';
import { databaseWrite } from '../presets.js';
import type { AlsoDue } from './due-dates.js';
import type { LoanProgress } from './messages.js';

const { writeOffTerms, recordWriteOff } = proxyActivities<Activities>(databaseWrite);

/**
 * Contract §17, as one more deadline of the due-date watcher (one wait per workflow, so a sandbox
 * clock advance is answered only once everything due has happened): while the loan is not written
 * off, the moment its oldest unpaid row, once found overdue, has been overdue more than
 * WRITE_OFF_AFTER_DAYS (read from the worker once per run). Then the activity writes the loan off
 * if the record agrees (the row still shown `overdue`: not paid, nor renegotiated by an
 * agreement); when it does not, no deadline until the loan's progress moves.
 */
export async function writeOffWatch(
  progress: LoanProgress,
  dueDates: readonly string[],
  tenant: Tenant,
  loanId: string,
  showDetails: () => void,
): Promise<AlsoDue> {
  const { afterDays } = await writeOffTerms();
  /** The progress the record refused at: no deadline again until it moves. */
  let refusedAt: string | undefined;
  const position = () => `${progress.paidInstallments}:${progress.overdueThrough ?? 0}`;
  return {
    deadline() {
      if (progress.writtenOff || refusedAt === position()) return null;
      const oldest = progress.paidInstallments;
      const dueDate = (progress.overdueThrough ?? 0) > oldest ? dueDates[oldest] : undefined;
      return dueDate === undefined ? null : writeOffDeadline(dueDate, afterDays);
    },
    async fire(deadline) {
      const { writtenOff } = await recordWriteOff({
        tenant,
        loanId,
        at: new Date(deadline).toISOString(),
        transactionId: hexId('txn'),
        eventId: hexId('evt'),
      });
      if (writtenOff) progress.writtenOff = true;
      else refusedAt = position();
      showDetails();
    },
  };
}
