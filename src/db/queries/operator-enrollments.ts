import { and, eq, gt, isNull } from 'drizzle-orm';
import { newId } from '../../domain/ids.js';
import type { DbOrTx } from '../client.js';
import { operatorEnrollments } from '../schema/index.js';

export type Enrollment = typeof operatorEnrollments.$inferSelect;

/** A code to redeem for a token, voiding the operator's older unredeemed ones. */
export async function insertEnrollment(
  tx: DbOrTx,
  input: {
    operatorId: string;
    approvalId: string | null;
    codeHash: string;
    now: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await tx
    .update(operatorEnrollments)
    .set({ expiresAt: input.now })
    .where(
      and(
        eq(operatorEnrollments.operatorId, input.operatorId),
        isNull(operatorEnrollments.redeemedAt),
        gt(operatorEnrollments.expiresAt, input.now),
      ),
    );
  await tx.insert(operatorEnrollments).values({
    id: newId('enr'),
    operatorId: input.operatorId,
    approvalId: input.approvalId,
    codeHash: input.codeHash,
    createdAt: input.now,
    expiresAt: input.expiresAt,
  });
}

/** The code an approval made, if one was made (a retried command makes none again). */
export async function enrollmentOfApproval(
  db: DbOrTx,
  approvalId: string,
): Promise<Enrollment | undefined> {
  const [row] = await db
    .select()
    .from(operatorEnrollments)
    .where(eq(operatorEnrollments.approvalId, approvalId))
    .limit(1);
  return row;
}

/** Redeems a live code once: the operator it names, or undefined (unknown, used, expired). */
export async function redeemEnrollment(
  tx: DbOrTx,
  codeHash: string,
  now: Date,
): Promise<string | undefined> {
  const [row] = await tx
    .update(operatorEnrollments)
    .set({ redeemedAt: now })
    .where(
      and(
        eq(operatorEnrollments.codeHash, codeHash),
        isNull(operatorEnrollments.redeemedAt),
        gt(operatorEnrollments.expiresAt, now),
      ),
    )
    .returning({ operatorId: operatorEnrollments.operatorId });
  return row?.operatorId;
}
