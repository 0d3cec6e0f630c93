import { and, eq, sql } from 'drizzle-orm';
import type { Tenant } from '../../http/context.js';
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
