import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { webhookDeliveries, webhookEndpoints, type DeliveryAttempt } from '../schema/index.js';

export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;

const ofTenant = (tenant: Tenant) =>
  and(
    eq(webhookDeliveries.partnerId, tenant.partnerId),
    eq(webhookDeliveries.environment, tenant.environment),
  );

export async function findDelivery(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<WebhookDelivery | undefined> {
  return db.query.webhookDeliveries.findFirst({
    where: and(ofTenant(tenant), eq(webhookDeliveries.id, id)),
  });
}

/** Appends an attempt and, when another will follow, when it is due. */
export async function recordAttempt(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  attempt: DeliveryAttempt,
  nextAttemptAt: Date | null,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} || ${JSON.stringify([attempt])}::jsonb`,
      nextAttemptAt,
      updatedAt: sql`now()`,
    })
    .where(
      and(ofTenant(tenant), eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')),
    );
}

/** Ends a pending delivery; `true` if this call ended it (so its consequences apply once). */
export async function endDelivery(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  status: 'succeeded' | 'failed' | 'cancelled',
): Promise<boolean> {
  const ended = await db
    .update(webhookDeliveries)
    .set({ status, nextAttemptAt: null, updatedAt: sql`now()` })
    .where(
      and(ofTenant(tenant), eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')),
    )
    .returning({ id: webhookDeliveries.id });
  return ended.length > 0;
}

/** Cancels every pending delivery of an endpoint (deleted, disabled, or gone). */
export async function cancelPendingDeliveries(
  db: DbOrTx,
  tenant: Tenant,
  endpointId: string,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'cancelled', nextAttemptAt: null, updatedAt: sql`now()` })
    .where(
      and(
        ofTenant(tenant),
        eq(webhookDeliveries.endpointId, endpointId),
        eq(webhookDeliveries.status, 'pending'),
      ),
    );
}

/** A delivery's end, on its endpoint: success resets the failure streak; a failure lengthens it. */
export async function settleEndpointStreak(
  db: DbOrTx,
  tenant: Tenant,
  endpointId: string,
  outcome: 'succeeded' | 'failed',
  disableAfter: number,
): Promise<{ disabled: boolean }> {
  if (outcome === 'succeeded') {
    await db
      .update(webhookEndpoints)
      .set({ consecutiveFailedEvents: 0 })
      .where(
        and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.partnerId, tenant.partnerId)),
      );
    return { disabled: false };
  }
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      consecutiveFailedEvents: sql`${webhookEndpoints.consecutiveFailedEvents} + 1`,
      updatedAt: sql`now()`,
    })
    .where(
      and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.partnerId, tenant.partnerId)),
    )
    .returning({
      streak: webhookEndpoints.consecutiveFailedEvents,
      status: webhookEndpoints.status,
    });
  if (!row || row.status !== 'enabled' || row.streak < disableAfter) return { disabled: false };
  await db
    .update(webhookEndpoints)
    .set({ status: 'disabled', disabledReason: 'failing' })
    .where(eq(webhookEndpoints.id, endpointId));
  return { disabled: true };
}

export const deliverySorts = { created_at: webhookDeliveries.createdAt } as const;

export async function listDeliveries(
  db: DbOrTx,
  tenant: Tenant,
  endpointId: string,
  params: ListParams<keyof typeof deliverySorts> & {
    status?: WebhookDelivery['status'] | undefined;
  },
): Promise<Page<WebhookDelivery>> {
  return paginate<WebhookDelivery>(db, {
    table: webhookDeliveries,
    idColumn: webhookDeliveries.id,
    sortColumn: deliverySorts[params.sort],
    tenant: and(ofTenant(tenant), eq(webhookDeliveries.endpointId, endpointId)),
    filters: params.status !== undefined ? eq(webhookDeliveries.status, params.status) : undefined,
    params,
  });
}

/**
 * New deliveries for failed ones (a resend keeps the event, so the `webhook-id`), each with the
 * outbox entry that starts it — set-wise, so recovering any number of failures is two statements.
 */
export async function resendDeliveries(
  db: DbOrTx,
  tenant: Tenant,
  params: { endpointId: string; deliveryIds?: string[]; failedSince?: Date; taskQueue: string },
): Promise<WebhookDelivery[]> {
  const list = (ids: string[]) =>
    sql.join(
      ids.map((id) => sql`${id}`),
      sql`, `,
    );
  const selection = params.deliveryIds
    ? sql`d.id in (${list(params.deliveryIds)})`
    : sql`d.status = 'failed' and d.created_at >= ${params.failedSince?.toISOString() ?? '-infinity'}::timestamptz`;
  const created = await db.execute<{ id: string }>(sql`
    insert into webhook_deliveries (id, partner_id, environment, event_id, endpoint_id, status, resend_of)
    select 'whd_' || replace(gen_random_uuid()::text, '-', ''), d.partner_id, d.environment, d.event_id,
           d.endpoint_id, 'pending', d.id
      from webhook_deliveries d
     where d.partner_id = ${tenant.partnerId} and d.environment = ${tenant.environment}
       and d.endpoint_id = ${params.endpointId} and ${selection}
    returning id`);
  const ids = created.map((row) => row.id);
  if (ids.length === 0) return [];
  await db.execute(sql`
    insert into workflow_outbox (workflow_id, workflow_type, task_queue, args, search_attributes, summary, next_attempt_at)
    select 'webhook-delivery/' || d.id, 'webhookDeliveryWorkflow', ${params.taskQueue},
           jsonb_build_array(jsonb_build_object('deliveryId', d.id, 'eventId', d.event_id, 'endpointId', d.endpoint_id,
                                                'partnerId', d.partner_id, 'environment', d.environment)),
           jsonb_build_object('PartnerId', d.partner_id, 'Environment', d.environment,
                              'EndpointId', d.endpoint_id, 'EventId', d.event_id),
           'Resend of ' || d.event_id || ' to ' || d.endpoint_id, now()
      from webhook_deliveries d where d.id in (${list(ids)})`);
  return db.query.webhookDeliveries.findMany({
    where: and(ofTenant(tenant), inArray(webhookDeliveries.id, ids)),
  });
}
