import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { smokeChecks } from '../schema/index.js';

export type SmokeCheck = typeof smokeChecks.$inferSelect;

export async function insertSmokeCheck(
  db: DbOrTx,
  values: { id: string; delayMs: number; workflowId: string },
): Promise<SmokeCheck> {
  const [row] = await db
    .insert(smokeChecks)
    .values({ ...values, status: 'pending' })
    .returning();
  if (!row) throw new Error('smoke check insert returned no row');
  return row;
}

export async function findSmokeCheck(db: DbOrTx, id: string): Promise<SmokeCheck | undefined> {
  return db.query.smokeChecks.findFirst({ where: eq(smokeChecks.id, id) });
}

export async function markSmokeCheckCompleted(
  db: DbOrTx,
  params: { id: string; completedBy: string },
): Promise<void> {
  await db
    .update(smokeChecks)
    .set({ status: 'completed', completedBy: params.completedBy, completedAt: sql`now()` })
    .where(and(eq(smokeChecks.id, params.id), eq(smokeChecks.status, 'pending')));
}
