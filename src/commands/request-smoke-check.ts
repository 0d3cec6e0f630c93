import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { insertSmokeCheck, type SmokeCheck } from '../db/queries/smoke-checks.js';
import { newId } from '../domain/ids.js';
import type { Logger } from '../logger.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { workflowIds, workflowTypes } from '../temporal/workflow-ids.js';

export interface CommandDeps {
  db: Db;
  temporal: Client;
  logger: Logger;
  taskQueue: string;
}

/**
 * Writes the smoke check and its workflow start in one transaction, then starts the workflow.
 * If Temporal is unreachable the check stays `pending` and the worker's sweeper starts it later.
 */
export async function requestSmokeCheck(
  deps: CommandDeps,
  input: { delayMs: number },
): Promise<SmokeCheck> {
  const id = newId('smk');
  const workflowId = workflowIds.smokeCheck(id);
  const { check, outbox } = await deps.db.transaction(async (tx) => {
    const check = await insertSmokeCheck(tx, { id, delayMs: input.delayMs, workflowId });
    const outbox = await enqueueWorkflowStart(tx, {
      workflowId,
      workflowType: workflowTypes.smokeCheck,
      taskQueue: deps.taskQueue,
      args: [{ smokeCheckId: id, delayMs: input.delayMs }],
    });
    return { check, outbox };
  });
  await dispatchWorkflowStart(deps, outbox);
  return check;
}
