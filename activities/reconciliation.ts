import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { receivePix } from '../src/commands/receive-pix.js';
import {
  beginReconciliationRun,
  markReconciliationFailed,
} from '../src/db/queries/reconciliation.js';
import { PspError } from '../src/psp/errors.js';
import { reconcileDay } from '../src/reconciliation/reconcile-day.js';
import type { ReconciliationOutcome } from '../workflows/reconciliation/messages.js';
import type { ActivityDeps } from './index.js';

/**
 * The daily reconciliation's steps (contract §16; src/reconciliation/). A Pix the notifications
 * missed is stored through the notification's own path (`receivePix`, a leaf command that imports
 * nothing of the activities): exactly once by end-to-end id, and booked by its `pix/{e2e}`
 * workflow like any other.
 */
export function createReconciliationActivities(deps: ActivityDeps) {
  return {
    /** The schedule's run of `date` begins: the report reads `running`. */
    async beginScheduledReconciliation(input: { date: string }): Promise<void> {
      await beginReconciliationRun(deps.db, input.date);
    },

    async reconcileDay(input: { date: string }): Promise<ReconciliationOutcome> {
      const psp = deps.psp;
      if (!psp)
        throw ApplicationFailure.nonRetryable(
          'no PSP is configured (PSP_API_URL): there is nothing to reconcile against',
          'psp_not_configured',
        );
      try {
        const result = await reconcileDay(
          {
            db: deps.db,
            psp,
            storeMissing: async (pixes, date) => {
              const stored = await receivePix(deps, 'production', 'psp', pixes, {
                reconciliationDate: date,
              });
              if (stored.length > 0)
                deps.logger.warn(
                  { date, stored: stored.map((pix) => pix.endToEndId) },
                  'reconciliation: Pix no notification brought, stored and booked',
                );
            },
            heartbeat: () => heartbeat(),
          },
          input.date,
        );
        return {
          date: result.date,
          status: result.status === 'discrepancies' ? 'discrepancies' : 'matched',
          stored: result.stored,
          discrepancies: result.discrepancies.length,
        };
      } catch (error) {
        // The PSP refused the run's request (not an outage): the same request fails again.
        if (error instanceof PspError && !error.retryable)
          throw ApplicationFailure.nonRetryable(error.message, `psp_${error.code}`);
        throw error;
      }
    },

    async markReconciliationFailed(input: { date: string; failure: string }): Promise<void> {
      await markReconciliationFailed(deps.db, input.date, input.failure);
    },
  };
}
