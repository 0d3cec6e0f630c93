import type { Actor } from '../domain/operators.js';
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Db, DbOrTx } from '../db/client.js';
import { recordEvents } from '../db/queries/events.js';
import { enabledEndpoints } from '../db/queries/webhook-endpoints.js';
import { webhookDeliveries } from '../db/schema/index.js';
import { filtersMatch } from '../domain/webhooks/catalogue.js';
import type { Tenant } from '../domain/tenant.js';
import type { DeliveryWorkflowInput } from '../../workflows/webhook-delivery/messages.js';
import type { Logger } from '../logger.js';
import {
  dispatchWorkflowStart,
  enqueueWorkflowStarts,
  type WorkflowStart,
} from '../temporal/outbox.js';
import { deliveryTaskQueue } from '../temporal/task-queues.js';
import { workflowIds, workflowTypes } from '../temporal/workflow-ids.js';

export interface NewEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  /** Who caused it, when known (an operator's command); absent: the service itself. */
  actor?: Actor | undefined;
}

/** The first delivery of an event to an endpoint: one id per pair, so fanning out twice makes one. */
export function deliveryIdFor(eventId: string, endpointId: string): string {
  return `whd_${createHash('sha256').update(`${eventId}:${endpointId}`).digest('hex').slice(0, 32)}`;
}

/**
 * The one definition of a delivery's workflow start: first deliveries, resends and recoveries, on
 * the deliveries' own queue (`deliveryTaskQueue` of the service's `taskQueue`).
 */
export function deliveryStart(input: DeliveryWorkflowInput, taskQueue: string): WorkflowStart {
  return {
    workflowId: workflowIds.webhookDelivery(input.deliveryId),
    workflowType: workflowTypes.webhookDelivery,
    taskQueue: deliveryTaskQueue(taskQueue),
    args: [input],
    searchAttributes: {
      PartnerId: input.partnerId,
      Environment: input.environment,
      EndpointId: input.endpointId,
      EventId: input.eventId,
    },
    summary: `Delivery of ${input.eventId} to ${input.endpointId}`,
  };
}

/**
 * Records events and, in the same transaction, one pending delivery per matching enabled endpoint
 * with the outbox entry that starts its workflow. Answers the outbox rows, for the caller to
 * start right after its commit; the sweeper starts whatever that misses.
 */
export async function recordAndFanOut(
  tx: DbOrTx,
  tenant: Tenant,
  events: NewEvent[],
  taskQueue: string,
) {
  await recordEvents(tx, tenant, events);
  if (events.length === 0) return [];
  const endpoints = await enabledEndpoints(tx, tenant);
  const deliveries = events.flatMap((event) =>
    endpoints
      .filter((endpoint) => filtersMatch(endpoint.events, event.type))
      .map((endpoint) => ({
        deliveryId: deliveryIdFor(event.id, endpoint.id),
        eventId: event.id,
        endpointId: endpoint.id,
        partnerId: tenant.partnerId,
        environment: tenant.environment,
      })),
  );
  if (deliveries.length === 0) return [];
  const inserted = await tx
    .insert(webhookDeliveries)
    .values(
      deliveries.map((d) => ({
        id: d.deliveryId,
        partnerId: d.partnerId,
        environment: d.environment,
        eventId: d.eventId,
        endpointId: d.endpointId,
        status: 'pending' as const,
      })),
    )
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.id });
  const fresh = new Set(inserted.map((row) => row.id));
  return enqueueWorkflowStarts(
    tx,
    deliveries.filter((d) => fresh.has(d.deliveryId)).map((d) => deliveryStart(d, taskQueue)),
  );
}

/** After the commit: start the deliveries' workflows now rather than at the next sweep. */
export async function startDeliveries(
  deps: { db: Db; temporal: Client; logger: Logger },
  outbox: Awaited<ReturnType<typeof recordAndFanOut>>,
): Promise<void> {
  await Promise.all(outbox.map((row) => dispatchWorkflowStart(deps, row)));
}
