import { and, eq, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { ofTenant } from '../tenancy.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { webhookEndpoints } from '../schema/index.js';

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;
export type NewWebhookEndpoint = typeof webhookEndpoints.$inferInsert;

export async function insertEndpoint(
  db: DbOrTx,
  values: NewWebhookEndpoint,
): Promise<WebhookEndpoint> {
  const [row] = await db.insert(webhookEndpoints).values(values).returning();
  if (!row) throw new Error('endpoint insert returned no row');
  return row;
}

export async function findEndpoint(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<WebhookEndpoint | undefined> {
  return db.query.webhookEndpoints.findFirst({
    where: and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, id)),
  });
}

export async function updateEndpoint(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  values: Partial<Omit<NewWebhookEndpoint, 'id' | 'partnerId' | 'environment' | 'createdAt'>>,
): Promise<WebhookEndpoint | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ ...values, updatedAt: sql`now()` })
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

export async function deleteEndpoint(db: DbOrTx, tenant: Tenant, id: string): Promise<boolean> {
  const deleted = await db
    .delete(webhookEndpoints)
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  return deleted.length > 0;
}

/** The endpoints an event of this tenant goes to: the enabled ones (filters are applied by the caller). */
export async function enabledEndpoints(db: DbOrTx, tenant: Tenant): Promise<WebhookEndpoint[]> {
  return db.query.webhookEndpoints.findMany({
    where: and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.status, 'enabled')),
  });
}

export const endpointSorts = { created_at: webhookEndpoints.createdAt } as const;

export async function listEndpoints(
  db: DbOrTx,
  tenant: Tenant,
  params: ListParams<keyof typeof endpointSorts>,
): Promise<Page<WebhookEndpoint>> {
  return paginate<WebhookEndpoint>(db, {
    table: webhookEndpoints,
    idColumn: webhookEndpoints.id,
    sortColumn: endpointSorts[params.sort],
    tenant,
    params,
  });
}

export const MAX_SEND_RATE = 50;
export const MIN_SEND_RATE = 0.1;

/**
 * Reserves the endpoint's next send slot at its current rate, in one statement (so concurrent
 * deliveries queue up instead of bursting). Answers how long to wait before sending.
 */
export async function reserveSendSlot(db: DbOrTx, tenant: Tenant, id: string): Promise<number> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({
      nextSendAt: sql`greatest(${webhookEndpoints.nextSendAt}, now()) + make_interval(secs => 1.0 / ${webhookEndpoints.sendRate})`,
    })
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, id)))
    .returning({
      waitMs: sql<number>`greatest(0, extract(epoch from (${webhookEndpoints.nextSendAt} - make_interval(secs => 1.0 / ${webhookEndpoints.sendRate}) - now())) * 1000)`,
    });
  return row ? Math.ceil(Number(row.waitMs)) : 0;
}

/** 429, 502 and 504 halve the endpoint's send rate; each success wins back a tenth, up to the cap. */
export async function adjustSendRate(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  signal: 'slow_down' | 'success',
): Promise<void> {
  const rate =
    signal === 'slow_down'
      ? sql`greatest(${webhookEndpoints.sendRate} / 2, ${MIN_SEND_RATE})`
      : sql`least(${webhookEndpoints.sendRate} * 1.1, ${MAX_SEND_RATE})`;
  await db
    .update(webhookEndpoints)
    .set({ sendRate: rate })
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, id)));
}

/**
 * Replaces the signing secret in one statement: the row's current secret becomes the previous
 * one (for the overlap) as the row stands under its lock, so concurrent rotations serialize and
 * none loses a secret. No overlap drops the previous secret at once.
 */
export async function rotateSecret(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  rotation: { secretSealed: string; previousExpiresAt: Date | null },
): Promise<boolean> {
  const keepPrevious = rotation.previousExpiresAt !== null;
  const rows = await db
    .update(webhookEndpoints)
    .set({
      previousSecretSealed: keepPrevious ? sql`${webhookEndpoints.secretSealed}` : null,
      previousSecretExpiresAt: rotation.previousExpiresAt,
      secretSealed: rotation.secretSealed,
      updatedAt: sql`now()`,
    })
    .where(and(ofTenant(webhookEndpoints, tenant), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

/**
 * Disabled endpoints of every partner, by environment and reason (`manual`: the partner's own;
 * `gone`, `failing`: the service's): the `webhook_endpoints_disabled` gauge. Ops-wide on purpose,
 * like the ledger's and unmatched Pix's gauges: it names no partner.
 */
export async function disabledEndpointCounts(
  db: DbOrTx,
): Promise<{ environment: string; reason: string; count: number }[]> {
  return db
    .select({
      environment: webhookEndpoints.environment,
      reason: sql<string>`coalesce(${webhookEndpoints.disabledReason}, 'manual')`,
      count: sql<number>`count(*)::int`,
    })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.status, 'disabled'))
    .groupBy(webhookEndpoints.environment, webhookEndpoints.disabledReason);
}
