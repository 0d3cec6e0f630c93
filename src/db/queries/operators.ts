import { randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, lt, or, type SQL } from 'drizzle-orm';
import { newId } from '../../domain/ids.js';
import type { Actor, Operator, OperatorRole } from '../../domain/operators.js';
import { hashSecret } from '../../domain/secrets.js';
import type { Db, DbOrTx } from '../client.js';
import { operators, operatorTokens, opsAudit, opsAuditOutcomes } from '../schema/index.js';

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

async function issueToken(tx: DbOrTx, operatorId: string): Promise<string> {
  const token = newOperatorToken();
  await tx
    .insert(operatorTokens)
    .values({ id: newId('opt'), operatorId, tokenHash: hashSecret(token) });
  return token;
}

/** A new operator and its first token. False when the e-mail is taken. */
export async function createOperator(
  db: Db,
  input: { name: string; email: string; roles: OperatorRole[]; createdBy: Actor },
): Promise<{ operator: OperatorRecord; token: string } | undefined> {
  return db.transaction(async (tx) => {
    const [operator] = await tx
      .insert(operators)
      .values({
        id: newId('op'),
        name: input.name,
        email: input.email,
        roles: input.roles,
        createdBy: input.createdBy.id,
      })
      .onConflictDoNothing({ target: operators.email })
      .returning();
    if (!operator) return undefined;
    return { operator, token: await issueToken(tx, operator.id) };
  });
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

/** Revokes every live token of the operator and issues a new one. */
export async function rotateOperatorToken(db: Db, id: string): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    const [operator] = await tx
      .select({ id: operators.id })
      .from(operators)
      .where(and(eq(operators.id, id), isNull(operators.deactivatedAt)))
      .for('update');
    if (!operator) return undefined;
    await tx
      .update(operatorTokens)
      .set({ revokedAt: new Date() })
      .where(and(eq(operatorTokens.operatorId, id), isNull(operatorTokens.revokedAt)));
    return issueToken(tx, id);
  });
}

/** Deactivates the operator for good and revokes its tokens. */
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

/** Newest first; `limit + 1` rows before the cursor (an entry id); undefined: unknown cursor. */
export async function listAudit(
  db: DbOrTx,
  params: {
    limit: number;
    startingAfter?: string | undefined;
    actorId?: string | undefined;
    operationId?: string | undefined;
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
    .select({
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
    })
    .from(opsAudit)
    .leftJoin(opsAuditOutcomes, eq(opsAuditOutcomes.auditId, opsAudit.id))
    .where(
      and(
        after,
        params.actorId === undefined ? undefined : eq(opsAudit.actorId, params.actorId),
        params.operationId === undefined ? undefined : eq(opsAudit.operationId, params.operationId),
      ),
    )
    .orderBy(desc(opsAudit.seq))
    .limit(params.limit + 1);
}
