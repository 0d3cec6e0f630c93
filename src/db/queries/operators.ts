import { randomBytes } from 'node:crypto';
import {
  and,
  desc,
  eq,
  exists,
  gt,
  gte,
  isNotNull,
  isNull,
  lt,
  or,
  sql,
  type SQL,
} from 'drizzle-orm';
import { newId } from '../../domain/ids.js';
import type { Actor, Operator, OperatorRole } from '../../domain/operators.js';
import { hashSecret } from '../../domain/secrets.js';
import type { Db, DbOrTx } from '../client.js';
import {
  operatorEnrollments,
  operators,
  operatorTokens,
  opsAudit,
  opsAuditOutcomes,
} from '../schema/index.js';

export type OperatorRecord = typeof operators.$inferSelect;
/** An audit row and its outcome (status, problem code, detail, end), once written. */
export interface AuditEntry {
  id: string;
  actorType: Actor['type'];
  actorId: string;
  operationId: string;
  method: string;
  path: string;
  requestId: string;
  status: number | null;
  problemCode: string | null;
  detail: Record<string, unknown> | null;
  startedAt: Date;
  finishedAt: Date | null;
}

/** An operator's bearer token: 256 random bits, shown once. */
const newOperatorToken = () => `opk_${randomBytes(32).toString('base64url')}`;

/** A new live token for the operator (its others untouched): the token, shown once. */
export async function issueOperatorToken(tx: DbOrTx, operatorId: string): Promise<string> {
  const token = newOperatorToken();
  await tx
    .insert(operatorTokens)
    .values({ id: newId('opt'), operatorId, tokenHash: hashSecret(token) });
  return token;
}

/**
 * A new operator, with no token yet (it enrolls for one). Undefined when the e-mail is taken by
 * another operator; the same id again (a retried command) answers the operator it made.
 */
export async function insertOperator(
  tx: DbOrTx,
  input: { id: string; name: string; email: string; roles: OperatorRole[]; createdBy: Actor },
): Promise<OperatorRecord | undefined> {
  const [created] = await tx
    .insert(operators)
    .values({
      id: input.id,
      name: input.name,
      email: input.email,
      roles: input.roles,
      createdBy: input.createdBy.id,
    })
    .onConflictDoNothing()
    .returning();
  if (created) return created;
  const existing = await findOperator(tx, input.id);
  return existing?.email === input.email ? existing : undefined;
}

export async function findOperatorByEmail(
  db: DbOrTx,
  email: string,
): Promise<OperatorRecord | undefined> {
  const [row] = await db.select().from(operators).where(eq(operators.email, email)).limit(1);
  return row;
}

/**
 * Administrators who can act or are about to: active, holding `admin`, with a live token or a
 * code still to redeem. The break-glass token may start administrators only while fewer than
 * two such exist (one whose mail never arrived, and who holds no token, does not count).
 */
export async function usableAdministrators(db: DbOrTx, now: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(operators)
    .where(
      and(
        isNull(operators.deactivatedAt),
        sql`${operators.roles} @> '["admin"]'::jsonb`,
        or(
          exists(
            db
              .select({ one: sql`1` })
              .from(operatorTokens)
              .where(
                and(eq(operatorTokens.operatorId, operators.id), isNull(operatorTokens.revokedAt)),
              ),
          ),
          exists(
            db
              .select({ one: sql`1` })
              .from(operatorEnrollments)
              .where(
                and(
                  eq(operatorEnrollments.operatorId, operators.id),
                  isNull(operatorEnrollments.redeemedAt),
                  gt(operatorEnrollments.expiresAt, now),
                ),
              ),
          ),
        ),
      ),
    );
  return row?.n ?? 0;
}

/** The operator a bearer token names, if the token is live and the operator active. */
export async function operatorByToken(db: DbOrTx, token: string): Promise<Operator | undefined> {
  const [row] = await db
    .select({ id: operators.id, roles: operators.roles })
    .from(operatorTokens)
    .innerJoin(operators, eq(operators.id, operatorTokens.operatorId))
    .where(
      and(
        eq(operatorTokens.tokenHash, hashSecret(token)),
        isNull(operatorTokens.revokedAt),
        isNull(operators.deactivatedAt),
      ),
    )
    .limit(1);
  return row && { actor: { type: 'operator', id: row.id }, roles: row.roles };
}

export async function findOperator(db: DbOrTx, id: string): Promise<OperatorRecord | undefined> {
  const [row] = await db.select().from(operators).where(eq(operators.id, id)).limit(1);
  return row;
}

/** Newest first, `limit + 1` rows after the cursor (an operator id); undefined: unknown cursor. */
export async function listOperators(
  db: DbOrTx,
  limit: number,
  startingAfter?: string,
): Promise<OperatorRecord[] | undefined> {
  let after: SQL | undefined;
  if (startingAfter !== undefined) {
    const cursor = await findOperator(db, startingAfter);
    if (!cursor) return undefined;
    after = or(
      lt(operators.createdAt, cursor.createdAt),
      and(eq(operators.createdAt, cursor.createdAt), lt(operators.id, cursor.id)),
    );
  }
  return db
    .select()
    .from(operators)
    .where(after)
    .orderBy(desc(operators.createdAt), desc(operators.id))
    .limit(limit + 1);
}

export async function setOperatorRoles(
  db: DbOrTx,
  id: string,
  roles: OperatorRole[],
): Promise<OperatorRecord | undefined> {
  const [row] = await db
    .update(operators)
    .set({ roles })
    .where(and(eq(operators.id, id), isNull(operators.deactivatedAt)))
    .returning();
  return row;
}

/** Revokes every live token of the active operator; false when it is not active. */
export async function revokeOperatorTokens(tx: DbOrTx, id: string, now: Date): Promise<boolean> {
  const [operator] = await tx
    .select({ id: operators.id })
    .from(operators)
    .where(and(eq(operators.id, id), isNull(operators.deactivatedAt)))
    .for('update');
  if (!operator) return false;
  await tx
    .update(operatorTokens)
    .set({ revokedAt: now })
    .where(and(eq(operatorTokens.operatorId, id), isNull(operatorTokens.revokedAt)));
  return true;
}

/** Revokes every live token of the operator and issues a new one (its own rotation). */
export async function rotateOperatorToken(db: Db, id: string): Promise<string | undefined> {
  return db.transaction(async (tx) =>
    (await revokeOperatorTokens(tx, id, new Date())) ? issueOperatorToken(tx, id) : undefined,
  );
}

/** Deactivates the operator and revokes its tokens. */
export async function deactivateOperator(db: Db, id: string): Promise<OperatorRecord | undefined> {
  return db.transaction(async (tx) => {
    const now = new Date();
    const [row] = await tx
      .update(operators)
      .set({ deactivatedAt: now })
      .where(and(eq(operators.id, id), isNull(operators.deactivatedAt)))
      .returning();
    if (!row) return undefined;
    await tx
      .update(operatorTokens)
      .set({ revokedAt: now })
      .where(and(eq(operatorTokens.operatorId, id), isNull(operatorTokens.revokedAt)));
    return row;
  });
}

/** Active again (an approved reactivation); its old tokens stay revoked. */
export async function reactivateOperator(
  tx: DbOrTx,
  id: string,
): Promise<OperatorRecord | undefined> {
  const [row] = await tx
    .update(operators)
    .set({ deactivatedAt: null })
    .where(and(eq(operators.id, id), isNotNull(operators.deactivatedAt)))
    .returning();
  return row;
}

/** The audit row of a command about to run. */
export async function startAudit(
  db: DbOrTx,
  entry: {
    actor: Actor;
    operationId: string;
    method: string;
    path: string;
    requestId: string;
    at: Date;
  },
): Promise<string> {
  const id = newId('aud');
  await db.insert(opsAudit).values({
    id,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    operationId: entry.operationId,
    method: entry.method,
    path: entry.path,
    requestId: entry.requestId,
    startedAt: entry.at,
  });
  return id;
}

/** How the command ended: written once, beside its row (the trail is append-only). */
export async function finishAudit(
  db: DbOrTx,
  id: string,
  outcome: {
    status: number;
    problemCode: string | null;
    detail: Record<string, unknown> | null;
    at: Date;
  },
): Promise<void> {
  await db.insert(opsAuditOutcomes).values({
    auditId: id,
    status: outcome.status,
    problemCode: outcome.problemCode,
    detail: outcome.detail,
    finishedAt: outcome.at,
  });
}

/**
 * A row and its outcome at once, for what is audited where nothing runs after (a refusal the
 * worker saw). Idempotent by `id`: a retried writer adds nothing.
 */
export async function recordAudit(
  db: Db,
  entry: {
    id: string;
    actor: Actor;
    operationId: string;
    method: string;
    path: string;
    requestId: string;
    status: number;
    problemCode: string | null;
    detail: Record<string, unknown> | null;
    at: Date;
  },
): Promise<void> {
  await db.transaction(async (tx) => {
    const written = await tx
      .insert(opsAudit)
      .values({
        id: entry.id,
        actorType: entry.actor.type,
        actorId: entry.actor.id,
        operationId: entry.operationId,
        method: entry.method,
        path: entry.path,
        requestId: entry.requestId,
        startedAt: entry.at,
      })
      .onConflictDoNothing({ target: opsAudit.id })
      .returning({ id: opsAudit.id });
    if (written.length > 0) await finishAudit(tx, entry.id, entry);
  });
}

/** An audit row with its outcome (null until the command ends). */
const auditColumns = {
  id: opsAudit.id,
  actorType: opsAudit.actorType,
  actorId: opsAudit.actorId,
  operationId: opsAudit.operationId,
  method: opsAudit.method,
  path: opsAudit.path,
  requestId: opsAudit.requestId,
  status: opsAuditOutcomes.status,
  problemCode: opsAuditOutcomes.problemCode,
  detail: opsAuditOutcomes.detail,
  startedAt: opsAudit.startedAt,
  finishedAt: opsAuditOutcomes.finishedAt,
};

/** Newest first; `limit + 1` rows before the cursor (an entry id); undefined: unknown cursor. */
export async function listAudit(
  db: DbOrTx,
  params: {
    limit: number;
    startingAfter?: string | undefined;
    actorId?: string | undefined;
    operationId?: string | undefined;
    /** Entries started at or after this moment. */
    since?: Date | undefined;
    /** Entries started before this moment. */
    until?: Date | undefined;
  },
): Promise<AuditEntry[] | undefined> {
  let after: SQL | undefined;
  if (params.startingAfter !== undefined) {
    const [cursor] = await db
      .select({ seq: opsAudit.seq })
      .from(opsAudit)
      .where(eq(opsAudit.id, params.startingAfter))
      .limit(1);
    if (!cursor) return undefined;
    after = lt(opsAudit.seq, cursor.seq);
  }
  return db
    .select(auditColumns)
    .from(opsAudit)
    .leftJoin(opsAuditOutcomes, eq(opsAuditOutcomes.auditId, opsAudit.id))
    .where(
      and(
        after,
        params.actorId === undefined ? undefined : eq(opsAudit.actorId, params.actorId),
        params.operationId === undefined ? undefined : eq(opsAudit.operationId, params.operationId),
        params.since === undefined ? undefined : gte(opsAudit.startedAt, params.since),
        params.until === undefined ? undefined : lt(opsAudit.startedAt, params.until),
      ),
    )
    .orderBy(desc(opsAudit.seq))
    .limit(params.limit + 1);
}

/** One audit row and its outcome (the console shows each action's line). */
export async function findAudit(db: DbOrTx, id: string): Promise<AuditEntry | undefined> {
  const [row] = await db
    .select(auditColumns)
    .from(opsAudit)
    .leftJoin(opsAuditOutcomes, eq(opsAuditOutcomes.auditId, opsAudit.id))
    .where(eq(opsAudit.id, id))
    .limit(1);
  return row;
}
