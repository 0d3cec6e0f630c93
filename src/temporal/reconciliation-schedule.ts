import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { ReconciliationInput } from '../../workflows/reconciliation/messages.js';
import { workflowTypes } from './workflow-ids.js';

/** When the daily reconciliation runs, São Paulo time (RECONCILIATION_TIME). */
export interface DailyTime {
  hour: number;
  minute: number;
}

/** One schedule per task queue (a deployment's): its id names the queue its workflows run on. */
export const reconciliationScheduleId = (taskQueue: string) => `reconciliation-daily/${taskQueue}`;

/**
 * The daily reconciliation's Temporal Schedule (contract §16), created at the worker's start or,
 * when it exists, brought to this release's spec and action (both idempotent: every worker of a
 * deployment does it, whichever starts first). At `at` each day in America/Sao_Paulo it starts the
 * `reconciliation` workflow of the day before; a run still going at the next firing makes that
 * one skip, and a firing missed while Temporal was away is taken up to a day late.
 */
export async function ensureReconciliationSchedule(
  client: Client,
  taskQueue: string,
  at: DailyTime,
): Promise<void> {
  const scheduleId = reconciliationScheduleId(taskQueue);
  const args: [ReconciliationInput] = [{}];
  const options = {
    spec: {
      calendars: [{ hour: at.hour, minute: at.minute, comment: 'the day before, after midnight' }],
      timezone: 'America/Sao_Paulo',
    },
    action: {
      type: 'startWorkflow' as const,
      workflowType: workflowTypes.reconciliation,
      workflowId: 'reconciliation/daily',
      taskQueue,
      args,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 day' as const },
  };
  try {
    await client.schedule.create({ scheduleId, ...options });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule
      .getHandle(scheduleId)
      .update((previous) => ({ ...previous, ...options, state: previous.state }));
  }
}
