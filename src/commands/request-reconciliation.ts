import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { beginReconciliationRun, type ReconciliationReport } from '../db/queries/reconciliation.js';
import type { Logger } from '../logger.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { workflowIds, workflowTypes } from '../temporal/workflow-ids.js';
import type { ReconciliationInput } from '../../workflows/reconciliation/messages.js';

export interface RequestReconciliationDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
}

/**
 * Ops run (or rerun) the reconciliation of a date (contract §16): the report reads `running` and
 * the run's workflow (`reconciliation/{date}/{run}`) is queued in one transaction, then started;
 * if Temporal is away, the worker's sweeper starts it. Answers the report and the workflow's id.
 */
export async function requestReconciliation(
  deps: RequestReconciliationDeps,
  date: string,
): Promise<{ report: ReconciliationReport; workflowId: string }> {
  const { report, outbox } = await deps.db.transaction(async (tx) => {
    const report = await beginReconciliationRun(tx, date);
    const input: ReconciliationInput = { date };
    const outbox = await enqueueWorkflowStart(tx, {
      workflowId: workflowIds.reconciliation(date, report.runs),
      workflowType: workflowTypes.reconciliation,
      taskQueue: deps.taskQueue,
      args: [input],
      summary: `Reconciliation of ${date}, run ${report.runs}`,
    });
    return { report, outbox };
  });
  await dispatchWorkflowStart(deps, outbox);
  return { report, workflowId: outbox.workflowId };
}
