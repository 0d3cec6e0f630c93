import { and, eq, ne, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { biometricSessions } from '../schema/index.js';

export type BiometricSession = typeof biometricSessions.$inferSelect;

/** Opens a session and supersedes the customer's other open ones. Idempotent on the session id. */
export async function openSession(
  db: DbOrTx,
  tenant: Tenant,
  values: { id: string; customerId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db
    .update(biometricSessions)
    .set({ status: 'superseded' })
    .where(
      and(
        eq(biometricSessions.customerId, values.customerId),
        eq(biometricSessions.status, 'open'),
        ne(biometricSessions.id, values.id),
      ),
    );
  await db
    .insert(biometricSessions)
    .values({
      ...values,
      partnerId: tenant.partnerId,
      environment: tenant.environment,
      status: 'open',
    })
    .onConflictDoNothing();
}

/** Moves an open session on; a session no longer open keeps its status. */
export async function closeSession(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
  status: 'completed' | 'expired',
): Promise<void> {
  await db
    .update(biometricSessions)
    .set({ status, ...(status === 'completed' ? { completedAt: sql`now()` } : {}) })
    .where(
      and(
        eq(biometricSessions.partnerId, tenant.partnerId),
        eq(biometricSessions.environment, tenant.environment),
        eq(biometricSessions.id, id),
        eq(biometricSessions.status, 'open'),
      ),
    );
}

/** The hosted page's lookup: the token is the only thing the customer's browser holds. */
export async function findSessionByTokenHash(
  db: DbOrTx,
  tokenHash: string,
): Promise<BiometricSession | undefined> {
  return db.query.biometricSessions.findFirst({
    where: eq(biometricSessions.tokenHash, tokenHash),
  });
}
