import { and, count, eq, gt, gte, isNull, lt, sql } from 'drizzle-orm';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { verificationCodes, type VerificationPurpose } from '../schema/index.js';

export type VerificationCode = typeof verificationCodes.$inferSelect;

export interface CodeSubject {
  purpose: VerificationPurpose;
  subjectId: string;
  person: string;
}

/**
 * Serializes the code requests of one person for one subject until the transaction ends, so the
 * hourly limit is counted and kept under concurrency.
 */
export async function lockCodeSubject(tx: DbOrTx, subject: CodeSubject): Promise<void> {
  const name = `verification:${subject.purpose}:${subject.subjectId}:${subject.person}`;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`);
}

/**
 * Codes sent (not failed) to this person for this subject since `since`: how many and the newest's
 * time, and of those the ones asked from `address`, with the oldest's time.
 */
export async function codesSentSince(
  db: DbOrTx,
  subject: CodeSubject,
  since: Date,
  address: string | null,
): Promise<{
  total: number;
  newestAt: number | null;
  fromHere: number;
  oldestFromHereAt: number | null;
}> {
  const fromHere = sql`${verificationCodes.requestedIp} is not distinct from ${address}`;
  const [row] = await db
    .select({
      total: count(),
      newest: sql<string | null>`max(${verificationCodes.createdAt})`,
      fromHere: sql<number>`count(*) filter (where ${fromHere})`.mapWith(Number),
      oldestFromHere: sql<
        string | null
      >`min(${verificationCodes.createdAt}) filter (where ${fromHere})`,
    })
    .from(verificationCodes)
    .where(
      and(
        eq(verificationCodes.purpose, subject.purpose),
        eq(verificationCodes.subjectId, subject.subjectId),
        eq(verificationCodes.person, subject.person),
        isNull(verificationCodes.failedAt),
        gte(verificationCodes.createdAt, since),
      ),
    );
  const time = (value: string | Date | null | undefined) =>
    value === null || value === undefined ? null : new Date(value).getTime();
  return {
    total: row?.total ?? 0,
    newestAt: time(row?.newest),
    fromHere: row?.fromHere ?? 0,
    oldestFromHereAt: time(row?.oldestFromHere),
  };
}

export async function insertCode(
  db: DbOrTx,
  tenant: Tenant,
  values: CodeSubject & {
    id: string;
    channel: string;
    codeHash: string;
    keyId: string;
    expiresAt: Date;
    createdAt: Date;
    decoy: boolean;
    requestedIp: string | null;
  },
): Promise<void> {
  await db
    .insert(verificationCodes)
    .values({ ...values, partnerId: tenant.partnerId, environment: tenant.environment });
}

export async function markCodeFailed(db: DbOrTx, id: string, at: Date): Promise<void> {
  await db.update(verificationCodes).set({ failedAt: at }).where(eq(verificationCodes.id, id));
}

/**
 * Spends one try of a live code of this subject (sent, unverified, unexpired, tries left) and
 * returns it; undefined when there is none to spend. The try is counted before the code is
 * compared, so parallel guesses share the same five.
 */
export async function spendAttempt(
  db: DbOrTx,
  where: { id: string; purpose: VerificationPurpose; subjectId: string },
  now: Date,
  maxAttempts: number,
): Promise<VerificationCode | undefined> {
  const [row] = await db
    .update(verificationCodes)
    .set({ attempts: sql`${verificationCodes.attempts} + 1` })
    .where(
      and(
        eq(verificationCodes.id, where.id),
        eq(verificationCodes.purpose, where.purpose),
        eq(verificationCodes.subjectId, where.subjectId),
        isNull(verificationCodes.verifiedAt),
        isNull(verificationCodes.failedAt),
        gt(verificationCodes.expiresAt, now),
        lt(verificationCodes.attempts, maxAttempts),
      ),
    )
    .returning();
  return row;
}

/** Records the verification and the session it opens; false if another request verified first. */
export async function markCodeVerified(
  db: DbOrTx,
  id: string,
  values: {
    verifiedAt: Date;
    verifiedIp: string | null;
    verifiedUserAgent: string | null;
    sessionTokenHash: string;
    sessionExpiresAt: Date;
  },
): Promise<boolean> {
  const rows = await db
    .update(verificationCodes)
    .set(values)
    .where(and(eq(verificationCodes.id, id), isNull(verificationCodes.verifiedAt)))
    .returning({ id: verificationCodes.id });
  return rows.length === 1;
}

/** The verified code whose browser session this is, while the session lasts. */
export async function findSession(
  db: DbOrTx,
  where: { purpose: VerificationPurpose; subjectId: string; sessionTokenHash: string },
  now: Date,
): Promise<VerificationCode | undefined> {
  return db.query.verificationCodes.findFirst({
    where: and(
      eq(verificationCodes.sessionTokenHash, where.sessionTokenHash),
      eq(verificationCodes.purpose, where.purpose),
      eq(verificationCodes.subjectId, where.subjectId),
      gt(verificationCodes.sessionExpiresAt, now),
    ),
  });
}
