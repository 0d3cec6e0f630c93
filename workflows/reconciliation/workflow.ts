import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { Activities } from '../../activities/index.js';
import { addDays, businessDate } from '../../src/domain/business-date.js';
import { databaseWrite } from '../presets.js';
import type { ReconciliationInput, ReconciliationOutcome } from './messages.js';

/**
 * One run over a day's Pix (100,000 of them take seconds): the PSP and the database retried for as
 * long as either is away; the activity heartbeats between its steps, so a worker that dies is
 * noticed within a minute and the run starts over (it is safe to repeat).
 */
const { reconcileDay } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes' },
});
const { beginScheduledReconciliation, markReconciliationFailed } =
  proxyActivities<Activities>(databaseWrite);

/**
 * The daily reconciliation of one business date (contract §16): the PSP's Pix received,
 * devolucoes and payouts of the day against the service's books; a Pix whose notification never
 * came is stored and booked; the date's report is (re)written. Started by the daily schedule
 * (no date: the day before the one it runs on) or by ops (`POST /ops/v1/reconciliation/{date}/run`).
 * A PSP that refuses the run (not an outage) leaves the report `failed` with the reason.
 */
export async function reconciliationWorkflow(
  input: ReconciliationInput = {},
): Promise<ReconciliationOutcome> {
  // Workflow time is the task's: the schedule fires after midnight, so "yesterday" holds.
  const date = input.date ?? addDays(businessDate(new Date()), -1);
  if (input.date === undefined) await beginScheduledReconciliation({ date });
  setCurrentDetails(`**Reconciliation** of ${date}: comparing the PSP's account with the books`);
  try {
    const outcome = await reconcileDay({ date });
    setCurrentDetails(
      `**Reconciliation** of ${date}: ${outcome.status}, ${outcome.discrepancies} discrepancies, ${outcome.stored} Pix booked that no notification brought`,
    );
    return outcome;
  } catch (error) {
    if (
      error instanceof ActivityFailure &&
      error.cause instanceof ApplicationFailure &&
      error.cause.nonRetryable
    ) {
      const failure = error.cause.message;
      await markReconciliationFailed({ date, failure });
      setCurrentDetails(`**Reconciliation** of ${date}: failed — ${failure}`);
      return { date, status: 'failed', stored: 0, discrepancies: 0 };
    }
    throw error;
  }
}
