import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { ofTenant } from '../tenancy.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { webhookDeliveries, webhookEndpoints, type DeliveryAttempt } from '../schema/index.js';

export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;

export async function findDelivery(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<WebhookDelivery | undefined> {
  return db.query.webhookDeliveries.findFirst({
    where: and(ofTenant(webhookDeliveries, tenant), eq(webhookDeliveries.id, id)),
  });
}

/** A delivery that is still pending: attempts and schedules apply to nothing else. */
const pendingDelivery = (tenant: Tenant, id: string) =>
  and(
    ofTenant(webhookDeliveries, tenant),
    eq(webhookDeliveries.id, id),
    eq(webhookDeliveries.status, 'pending'),
  );

/** Appends an attempt to a pending delivery; the next one is not scheduled until the workflow says. */
export async function recordAttempt(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  attempt: DeliveryAttempt,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} || ${JSON.stringify([attempt])}::jsonb`,
      nextAttemptAt: null,
      updatedAt: sql`now()`,
    })
    .where(pendingDelivery(tenant, id));
}

/** Records when a pending delivery's next attempt is due. */
export async function scheduleNextAttempt(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  at: Date,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: at, updatedAt: sql`now()` })
    .where(pendingDelivery(tenant, id));
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
    .where(pendingDelivery(tenant, id))
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
        ofTenant(webhookDeliveries, tenant),
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
      .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, endpointId)));
    return { disabled: false };
  }
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      consecutiveFailedEvents: sql`${webhookEndpoints.consecutiveFailedEvents} + 1`,
      updatedAt: sql`now()`,
    })
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, endpointId)))
    .returning({
      streak: webhookEndpoints.consecutiveFailedEvents,
      status: webhookEndpoints.status,
    });
  if (!row || row.status !== 'enabled' || row.streak < disableAfter) return { disabled: false };
  await db
    .update(webhookEndpoints)
    .set({ status: 'disabled', disabledReason: 'failing' })
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, endpointId)));
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
    tenant,
    within: eq(webhookDeliveries.endpointId, endpointId),
    filters: params.status !== undefined ? eq(webhookDeliveries.status, params.status) : undefined,
    params,
  });
}

/**
 * New pending deliveries for earlier ones (a resend keeps the event, so the `webhook-id`): the
 * deliveries named, or every one that ended `failed` since a time — set-wise, one statement
 * however many there are. The caller starts their workflows in the same transaction.
 */
export async function insertResends(
  db: DbOrTx,
  tenant: Tenant,
  params: { endpointId: string; deliveryIds?: string[]; failedSince?: Date },
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
  return db.query.webhookDeliveries.findMany({
    where: and(ofTenant(webhookDeliveries, tenant), inArray(webhookDeliveries.id, ids)),
  });
}
