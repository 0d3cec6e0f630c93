import { workflowInfo } from '@temporalio/workflow';

/**
 * Events a run's history may reach before it continues as new, unless Temporal suggests it first
 * (its own limit is 51,200 events or 50 MB). Long-lived workflows check it in every wait and loop;
 * tests lower it through their input's `historyLimit` to drive a run past it.
 */
export const HISTORY_LIMIT = 5_000;

/** Whether this run should continue as new now: Temporal suggests it, or `limit` is passed. */
export function historyFull(limit = HISTORY_LIMIT): boolean {
  const { continueAsNewSuggested, historyLength } = workflowInfo();
  return continueAsNewSuggested || historyLength > limit;
}
