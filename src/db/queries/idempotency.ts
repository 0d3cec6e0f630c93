import { and, eq, lte, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { idempotencyKeys } from '../schema/index.js';

export type IdempotencyRecord = typeof idempotencyKeys.$inferSelect;

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A running request older than this is presumed dead (its process crashed) and may be taken over. */
export const IDEMPOTENCY_LOCK_MS = 5 * 60 * 1000;

export type Claim =
  { kind: 'claimed' } | { kind: 'running' } | { kind: 'completed'; record: IdempotencyRecord };

/**
 * Claims (scope, key) for this request. A fresh key, one past its 24 hours, or one whose holder
 * stopped heartbeating is claimed in one statement; otherwise the live record says what to do.
 */
export async function claimIdempotencyKey(
  db: DbOrTx,
  params: { scope: string; key: string; method: string; path: string; now: Date },
): Promise<Claim> {
  const { scope, key, method, path, now } = params;
  const fresh = {
    requestMethod: method,
    requestPath: path,
    state: 'running' as const,
    lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS),
    responseStatus: null,
    responseHeaders: null,
    responseBody: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimed = await db
      .insert(idempotencyKeys)
      .values({ scope, key, ...fresh })
      .onConflictDoUpdate({
        target: [idempotencyKeys.scope, idempotencyKeys.key],
        set: fresh,
        setWhere: or(
          lte(idempotencyKeys.expiresAt, now),
          and(eq(idempotencyKeys.state, 'running'), lte(idempotencyKeys.lockedUntil, now)),
        ),
      })
      .returning({ scope: idempotencyKeys.scope });
    if (claimed.length > 0) return { kind: 'claimed' };
    const record = await db.query.idempotencyKeys.findFirst({
      where: and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)),
    });
    if (!record) continue; // released between the two statements: try again
    return record.state === 'completed' ? { kind: 'completed', record } : { kind: 'running' };
  }
  return { kind: 'running' };
}

export async function completeIdempotencyKey(
  db: DbOrTx,
  params: {
    scope: string;
    key: string;
    status: number;
    headers: Record<string, string>;
    sealedBody: string;
  },
): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({
      state: 'completed',
      responseStatus: params.status,
      responseHeaders: params.headers,
      responseBody: params.sealedBody,
    })
    .where(and(eq(idempotencyKeys.scope, params.scope), eq(idempotencyKeys.key, params.key)));
}

/** Forgets a key whose outcome must not be replayed (5xx, 401, 429): the next try runs anew. */
export async function releaseIdempotencyKey(
  db: DbOrTx,
  params: { scope: string; key: string },
): Promise<void> {
  await db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.scope, params.scope),
        eq(idempotencyKeys.key, params.key),
        eq(idempotencyKeys.state, 'running'),
      ),
    );
}

/** Housekeeping: drops records past their 24 hours, a batch at a time. */
export async function deleteExpiredIdempotencyKeys(
  db: DbOrTx,
  now: Date,
  batch = 1000,
): Promise<number> {
  const deleted = await db.execute(sql`
    delete from ${idempotencyKeys}
     where ctid in (select ctid from ${idempotencyKeys} where ${idempotencyKeys.expiresAt} <= ${now.toISOString()}::timestamptz limit ${batch})`);
  return deleted.count;
}
