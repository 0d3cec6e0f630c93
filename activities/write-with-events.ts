import type { Client } from '@temporalio/client';
import type { Db, DbOrTx } from '../src/db/client.js';
import type { Tenant } from '../src/domain/tenant.js';
import type { Logger } from '../src/logger.js';
import { recordAndFanOut, startDeliveries, type NewEvent } from '../src/webhooks/fan-out.js';

/**
 * Runs `change` in one transaction with the events it reports (an event is written with the change
 * it reports, contract §9) and their deliveries' outbox rows, then starts those deliveries once
 * committed. The activities of every workflow write this way.
 */
export async function writeWithEvents<T>(
  deps: { db: Db; temporal: Client; logger: Logger; taskQueue: string },
  tenant: Tenant,
  change: (tx: DbOrTx) => Promise<{ result: T; events: NewEvent[] }>,
): Promise<T> {
  const { result, deliveries } = await deps.db.transaction(async (tx) => {
    const { result, events } = await change(tx);
    return { result, deliveries: await recordAndFanOut(tx, tenant, events, deps.taskQueue) };
  });
  await startDeliveries(deps, deliveries);
  return result;
}
