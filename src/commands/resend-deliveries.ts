import type { Client } from '@temporalio/client';
import type { Db } from '../db/client.js';
import { insertResends, type WebhookDelivery } from '../db/queries/webhook-deliveries.js';
import type { Tenant } from '../domain/tenant.js';
import type { Logger } from '../logger.js';
import { enqueueWorkflowStarts } from '../temporal/outbox.js';
import { deliveryStart, startDeliveries } from '../webhooks/fan-out.js';

/** Started right after the commit; beyond this many, the outbox sweeper starts the rest. */
const STARTED_IN_REQUEST = 100;

/**
 * Resend and recover: the new deliveries and the outbox starts of their workflows in one
 * transaction — a crash can leave neither a delivery nothing will start nor a start without its
 * delivery — then the starts themselves, after the commit.
 */
export async function resendDeliveries(
  deps: { db: Db; temporal: Client; logger: Logger; taskQueue: string },
  tenant: Tenant,
  params: { endpointId: string; deliveryIds?: string[]; failedSince?: Date },
): Promise<WebhookDelivery[]> {
  const { created, outbox } = await deps.db.transaction(async (tx) => {
    const created = await insertResends(tx, tenant, params);
    const starts = created.map((delivery) =>
      deliveryStart(
        {
          deliveryId: delivery.id,
          eventId: delivery.eventId,
          endpointId: delivery.endpointId,
          partnerId: delivery.partnerId,
          environment: delivery.environment,
        },
        deps.taskQueue,
      ),
    );
    return { created, outbox: await enqueueWorkflowStarts(tx, starts) };
  });
  await startDeliveries(deps, outbox.slice(0, STARTED_IN_REQUEST));
  return created;
}
