import { randomUUID } from 'node:crypto';
import { and, eq, lte, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { idempotencyKeys } from '../schema/index.js';

export type IdempotencyRecord = typeof idempotencyKeys.$inferSelect;

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A running request's hold on its key lapses this long after its last heartbeat: the key of a
 * process that died is free again within it, while a live one renews every third of it.
 */
export const IDEMPOTENCY_LOCK_MS = 30 * 1000;
export const IDEMPOTENCY_HEARTBEAT_MS = IDEMPOTENCY_LOCK_MS / 3;

export type Claim =
  | { kind: 'claimed'; claimId: string }
  | { kind: 'running' }
  | { kind: 'completed'; record: IdempotencyRecord };

/** One claim of a key: only its holder renews, completes or releases it. */
export interface KeyClaim {
  scope: string;
  key: string;
  claimId: string;
}

const heldBy = (claim: KeyClaim) =>
  and(
    eq(idempotencyKeys.scope, claim.scope),
    eq(idempotencyKeys.key, claim.key),
    eq(idempotencyKeys.claimId, claim.claimId),
    eq(idempotencyKeys.state, 'running'),
  );

/**
 * Claims (scope, key) for this request. A fresh key, one past its 24 hours, or one whose holder
 * stopped heartbeating is claimed in one statement; otherwise the live record says what to do.
 */
export async function claimIdempotencyKey(
  db: DbOrTx,
  params: { scope: string; key: string; method: string; path: string; now: Date },
): Promise<Claim> {
  const { scope, key, method, path, now } = params;
  const claimId = randomUUID();
  const fresh = {
    requestMethod: method,
    requestPath: path,
    state: 'running' as const,
    claimId,
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
    if (claimed.length > 0) return { kind: 'claimed', claimId };
    const record = await db.query.idempotencyKeys.findFirst({
      where: and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)),
    });
    if (!record) continue; // released between the two statements: try again
    return record.state === 'completed' ? { kind: 'completed', record } : { kind: 'running' };
  }
  return { kind: 'running' };
}

/** The holder, still running: its hold lasts IDEMPOTENCY_LOCK_MS more. False once not held. */
export async function renewIdempotencyKey(
  db: DbOrTx,
  claim: KeyClaim,
  now: Date,
): Promise<boolean> {
  const renewed = await db
    .update(idempotencyKeys)
    .set({ lockedUntil: new Date(now.getTime() + IDEMPOTENCY_LOCK_MS) })
    .where(heldBy(claim))
    .returning({ key: idempotencyKeys.key });
  return renewed.length > 0;
}

/** Stores the response to replay. False when the claim was lost (its hold lapsed, another took it). */
export async function completeIdempotencyKey(
  db: DbOrTx,
  claim: KeyClaim,
  response: { status: number; headers: Record<string, string>; sealedBody: string },
): Promise<boolean> {
  const completed = await db
    .update(idempotencyKeys)
    .set({
      state: 'completed',
      responseStatus: response.status,
      responseHeaders: response.headers,
      responseBody: response.sealedBody,
    })
    .where(heldBy(claim))
    .returning({ key: idempotencyKeys.key });
  return completed.length > 0;
}

/** Forgets a key whose outcome must not be replayed (5xx, 401, 429): the next try runs anew. */
export async function releaseIdempotencyKey(db: DbOrTx, claim: KeyClaim): Promise<boolean> {
  const released = await db
    .delete(idempotencyKeys)
    .where(heldBy(claim))
    .returning({ key: idempotencyKeys.key });
  return released.length > 0;
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
