import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx, Tx } from '../client.js';
import { ofTenant } from '../tenancy.js';
import { credentials, partners } from '../schema/index.js';
import { paginate, type ListParams, type Page } from '../pagination.js';

export type Credential = typeof credentials.$inferSelect;

/** Authentication only: a client_id is globally unique, and the caller is not yet known. */
export async function findCredentialForAuthentication(
  db: DbOrTx,
  clientId: string,
): Promise<Credential | undefined> {
  return db.query.credentials.findFirst({ where: eq(credentials.clientId, clientId) });
}

export async function findCredential(
  db: DbOrTx,
  tenant: Tenant,
  clientId: string,
): Promise<Credential | undefined> {
  return db.query.credentials.findFirst({
    where: and(ofTenant(credentials, tenant), eq(credentials.clientId, clientId)),
  });
}

export async function insertCredential(
  db: DbOrTx,
  tenant: Tenant,
  values: { id: string; clientId: string; secretHash: string; name: string | null },
): Promise<Credential> {
  const [row] = await db
    .insert(credentials)
    .values({ ...values, partnerId: tenant.partnerId, environment: tenant.environment })
    .returning();
  if (!row) throw new Error('credential insert returned no row');
  return row;
}

/**
 * Locks the partner's row until the transaction ends, so credential creations of one partner run
 * one at a time. `no key update` leaves inserts that reference the partner (which take a key-share
 * lock) unblocked. False when there is no such partner.
 */
export async function lockPartnerForCredentials(tx: Tx, partnerId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: partners.id })
    .from(partners)
    .where(eq(partners.id, partnerId))
    .for('no key update');
  return row !== undefined;
}

/** Live (not revoked) credentials of a partner, both environments together: the cap counts them all. */
export async function countLiveCredentials(db: DbOrTx, partnerId: string): Promise<number> {
  const [row] = await db
    .select({ live: count() })
    .from(credentials)
    .where(and(eq(credentials.partnerId, partnerId), isNull(credentials.revokedAt)));
  return row?.live ?? 0;
}

/** Revokes once: a second revocation keeps the first `revoked_at`. */
export async function revokeCredential(
  db: DbOrTx,
  tenant: Tenant,
  clientId: string,
): Promise<Credential | undefined> {
  await db
    .update(credentials)
    .set({ revokedAt: sql`coalesce(${credentials.revokedAt}, now())` })
    .where(and(ofTenant(credentials, tenant), eq(credentials.clientId, clientId)));
  return findCredential(db, tenant, clientId);
}

export async function recordCredentialUse(
  db: DbOrTx,
  credentialId: string,
  at: Date,
): Promise<void> {
  await db.update(credentials).set({ lastUsedAt: at }).where(eq(credentials.id, credentialId));
}

export const credentialSorts = { created_at: credentials.createdAt } as const;

export async function listCredentials(
  db: DbOrTx,
  tenant: Tenant,
  params: ListParams<keyof typeof credentialSorts>,
): Promise<Page<Credential>> {
  return paginate<Credential>(db, {
    table: credentials,
    idColumn: credentials.id,
    sortColumn: credentialSorts[params.sort],
    tenant,
    params,
  });
}
