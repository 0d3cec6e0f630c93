import { and, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import {
  approvals,
  assignmentApprovalKinds,
  moneyApprovalKinds,
  pixApprovalKinds,
  staffApprovalKinds,
} from '../schema/index.js';

export type Approval = typeof approvals.$inferSelect;
export type ApprovalKind = Approval['kind'];
export type ApprovalState = Approval['status'];
export type MoneyApprovalKind = (typeof moneyApprovalKinds)[number];
export type StaffApprovalKind = (typeof staffApprovalKinds)[number];

/** Money moved by hand on a production loan: the loan, its partner and environment are named. */
export type MoneyApproval = Approval & {
  kind: MoneyApprovalKind;
  loanId: string;
  partnerId: string;
  environment: NonNullable<Approval['environment']>;
};
/** A Pix no charge claimed, matched to a loan (named) or returned: the Pix is named. */
export type PixApproval = Approval & {
  kind: (typeof pixApprovalKinds)[number];
  endToEndId: string;
};
/** Staff administration: the operator it is about is named. */
export type StaffApproval = Approval & { kind: StaffApprovalKind; operatorId: string };

export const isMoneyApproval = (approval: Approval): approval is MoneyApproval =>
  (moneyApprovalKinds as readonly string[]).includes(approval.kind);
export const isPixApproval = (approval: Approval): approval is PixApproval =>
  (pixApprovalKinds as readonly string[]).includes(approval.kind);
export const isAssignmentApproval = (approval: Approval): boolean =>
  (assignmentApprovalKinds as readonly string[]).includes(approval.kind);
export const isStaffApproval = (approval: Approval): approval is StaffApproval =>
  (staffApprovalKinds as readonly string[]).includes(approval.kind);

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

/**
 * The decision taken, the command about to run: from `pending` only (a retry finds it
 * `executing` already, by the same checker, and leaves it so).
 */
export async function markExecuting(db: DbOrTx, id: string, checkerId: string): Promise<void> {
  await db
    .update(approvals)
    .set({ status: 'executing', checkerId, decidedAt: new Date() })
    .where(and(eq(approvals.id, id), eq(approvals.status, 'pending')));
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
    .where(
      and(
        eq(approvals.id, id),
        // The steps an approval takes (PostgreSQL refuses any other): a rejection or an expiry
        // ends a pending one, the command's end an executing one.
        eq(
          approvals.status,
          end.status === 'approved' || end.status === 'failed' ? 'executing' : 'pending',
        ),
      ),
    );
}

/**
 * Who reads approvals (issue 37): the kinds the reader could decide, and whatever the reader
 * asked for. Reads of approvals take one, so no query can show an approval to anyone else.
 */
export interface ApprovalReader {
  kinds: readonly ApprovalKind[];
  operatorId: string;
}

const readableBy = (reader: ApprovalReader) =>
  or(
    reader.kinds.length > 0 ? inArray(approvals.kind, [...reader.kinds]) : undefined,
    eq(approvals.makerId, reader.operatorId),
  );

/** An approval the reader may read; undefined when there is none, or not for this reader. */
export async function findReadableApproval(
  db: DbOrTx,
  reader: ApprovalReader,
  id: string,
): Promise<Approval | undefined> {
  const [row] = await db
    .select()
    .from(approvals)
    .where(and(eq(approvals.id, id), readableBy(reader)))
    .limit(1);
  return row;
}

/** Newest first, `limit + 1` after the cursor; undefined: unknown cursor (or not the reader's). */
export async function listApprovals(
  db: DbOrTx,
  reader: ApprovalReader,
  params: { limit: number; startingAfter?: string | undefined; status?: ApprovalState | undefined },
): Promise<Approval[] | undefined> {
  let after: SQL | undefined;
  if (params.startingAfter !== undefined) {
    const cursor = await findReadableApproval(db, reader, params.startingAfter);
    if (!cursor) return undefined;
    after = or(
      lt(approvals.createdAt, cursor.createdAt),
      and(eq(approvals.createdAt, cursor.createdAt), lt(approvals.id, cursor.id)),
    );
  }
  return db
    .select()
    .from(approvals)
    .where(
      and(
        readableBy(reader),
        after,
        params.status ? eq(approvals.status, params.status) : undefined,
      ),
    )
    .orderBy(desc(approvals.createdAt), desc(approvals.id))
    .limit(params.limit + 1);
}
