import { and, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { approvals } from '../schema/index.js';

export type Approval = typeof approvals.$inferSelect;
export type ApprovalKind = Approval['kind'];
export type ApprovalState = Approval['status'];

export async function insertApproval(
  tx: DbOrTx,
  values: typeof approvals.$inferInsert,
): Promise<Approval> {
  const [row] = await tx.insert(approvals).values(values).returning();
  if (!row) throw new Error('approval insert returned no row');
  return row;
}

export async function findApproval(db: DbOrTx, id: string): Promise<Approval | undefined> {
  const [row] = await db.select().from(approvals).where(eq(approvals.id, id)).limit(1);
  return row;
}

/** The decision taken, the command about to run (from `pending`, or again after a retry). */
export async function markExecuting(db: DbOrTx, id: string, checkerId: string): Promise<void> {
  await db
    .update(approvals)
    .set({ status: 'executing', checkerId, decidedAt: new Date() })
    .where(and(eq(approvals.id, id), inArray(approvals.status, ['pending', 'executing'])));
}

/** Its end: approved, failed, rejected or expired (once; an ended one stays as it ended). */
export async function closeApproval(
  db: DbOrTx,
  id: string,
  end: {
    status: Extract<ApprovalState, 'approved' | 'failed' | 'rejected' | 'expired'>;
    checkerId: string | null;
    outcome: Record<string, unknown> | null;
  },
): Promise<void> {
  await db
    .update(approvals)
    .set({
      status: end.status,
      checkerId: end.checkerId,
      outcome: end.outcome,
      decidedAt: end.status === 'expired' ? null : new Date(),
    })
    .where(and(eq(approvals.id, id), inArray(approvals.status, ['pending', 'executing'])));
}

/** Newest first, `limit + 1` after the cursor; undefined: unknown cursor. */
export async function listApprovals(
  db: DbOrTx,
  params: { limit: number; startingAfter?: string | undefined; status?: ApprovalState | undefined },
): Promise<Approval[] | undefined> {
  let after: SQL | undefined;
  if (params.startingAfter !== undefined) {
    const cursor = await findApproval(db, params.startingAfter);
    if (!cursor) return undefined;
    after = or(
      lt(approvals.createdAt, cursor.createdAt),
      and(eq(approvals.createdAt, cursor.createdAt), lt(approvals.id, cursor.id)),
    );
  }
  return db
    .select()
    .from(approvals)
    .where(and(after, params.status ? eq(approvals.status, params.status) : undefined))
    .orderBy(desc(approvals.createdAt), desc(approvals.id))
    .limit(params.limit + 1);
}
