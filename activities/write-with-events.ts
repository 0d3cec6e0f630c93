import type { Client } from '@temporalio/client';
import type { Db, DbOrTx } from '../src/db/client.js';
import type { Tenant } from '../src/domain/tenant.js';
import type { Logger } from '../src/logger.js';
import {
  dispatchWorkflowStart,
  enqueueWorkflowStarts,
  type WorkflowStart,
} from '../src/temporal/outbox.js';
import { recordAndFanOut, startDeliveries, type NewEvent } from '../src/webhooks/fan-out.js';

/**
 * Runs `change` in one transaction with the events it reports (an event is written with the change
 * it reports, contract §9) and their deliveries' outbox rows, then starts those deliveries once
 * committed. The activities of every workflow write this way. Workflows the change implies
 * (`starts`: a refund's) are written to the outbox with it and started after the commit too.
 */
export async function writeWithEvents<T>(
  deps: { db: Db; temporal: Client; logger: Logger; taskQueue: string },
  tenant: Tenant,
  change: (
    tx: DbOrTx,
  ) => Promise<{ result: T; events: NewEvent[]; starts?: WorkflowStart[] | undefined }>,
): Promise<T> {
  const { result, deliveries, outbox } = await deps.db.transaction(async (tx) => {
    const { result, events, starts } = await change(tx);
    return {
      result,
      deliveries: await recordAndFanOut(tx, tenant, events, deps.taskQueue),
      outbox: await enqueueWorkflowStarts(tx, starts ?? []),
    };
  });
  await startDeliveries(deps, deliveries);
  // Started now; the sweeper starts any this misses.
  await Promise.all(outbox.map((row) => dispatchWorkflowStart(deps, row)));
  return result;
}
