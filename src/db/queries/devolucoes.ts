import { and, desc, eq, inArray, ne, sql } from 'drizzle-orm';
import {
  openDevolucaoStatuses,
  type DevolucaoStatus,
  type ReturnablePix,
} from '../../domain/loans/devolucoes.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { devolucoes, receivedPix } from '../schema/index.js';
import { ofTenant } from '../tenancy.js';

export type Devolucao = typeof devolucoes.$inferSelect;
export type NewDevolucao = typeof devolucoes.$inferInsert;

/** A refund's devoluções, written once: a second write of the same refund writes nothing. */
export async function insertDevolucoes(tx: DbOrTx, rows: NewDevolucao[]): Promise<void> {
  if (rows.length > 0) await tx.insert(devolucoes).values(rows).onConflictDoNothing();
}

/** The devoluções of one refund, in the order they were planned (their ids end in it). */
export async function devolucoesOfRefund(db: DbOrTx, refundId: string): Promise<Devolucao[]> {
  return db
    .select()
    .from(devolucoes)
    .where(eq(devolucoes.refundId, refundId))
    .orderBy(devolucoes.id);
}

/** Every devolução of a loan of the tenant, newest first. */
export async function devolucoesOfLoan(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
): Promise<Devolucao[]> {
  return db
    .select()
    .from(devolucoes)
    .where(and(ofTenant(devolucoes, tenant), eq(devolucoes.loanId, loanId)))
    .orderBy(desc(devolucoes.requestedAt), desc(devolucoes.id));
}

export async function findDevolucao(db: DbOrTx, id: string): Promise<Devolucao | undefined> {
  const [row] = await db.select().from(devolucoes).where(eq(devolucoes.id, id));
  return row;
}

export async function lockDevolucao(tx: DbOrTx, id: string): Promise<Devolucao | undefined> {
  const [row] = await tx.select().from(devolucoes).where(eq(devolucoes.id, id)).for('update');
  return row;
}

/** Centavos of the loan's devoluções still on their way (asked, not yet returned or failed). */
export async function openDevolucaoAmount(db: DbOrTx, loanId: string): Promise<number> {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${devolucoes.amount}), 0)` })
    .from(devolucoes)
    .where(
      and(eq(devolucoes.loanId, loanId), inArray(devolucoes.status, [...openDevolucaoStatuses])),
    );
  return Number(row?.total ?? 0);
}

/**
 * The Pix that came to the loan through the PSP and were booked on it, each with what of it has
 * been returned or is being returned (devoluções that did not fail): what devolução can return.
 */
export async function returnablePixOf(db: DbOrTx, loanId: string): Promise<ReturnablePix[]> {
  const rows = await db
    .select({
      endToEndId: receivedPix.endToEndId,
      amount: receivedPix.amount,
      paidAt: receivedPix.paidAt,
      returned: sql<string>`coalesce((select sum(d.amount) from ${devolucoes} d
        where d.end_to_end_id = ${receivedPix.endToEndId} and d.status <> 'failed'), 0)`,
    })
    .from(receivedPix)
    .where(
      and(
        eq(receivedPix.loanId, loanId),
        eq(receivedPix.source, 'psp'),
        eq(receivedPix.status, 'recorded'),
      ),
    );
  return rows.map((row) => ({ ...row, returned: Number(row.returned) }));
}

/** A devolução's new state (under its lock); `returned` and `failed` are final. */
export async function changeDevolucao(
  tx: DbOrTx,
  id: string,
  change: {
    status: DevolucaoStatus;
    rtrId?: string | null;
    motivo?: string | null;
    transactionId?: string | null;
    settledAt?: Date | null;
  },
): Promise<void> {
  await tx
    .update(devolucoes)
    .set({ ...change, updatedAt: sql`now()` })
    .where(and(eq(devolucoes.id, id), ne(devolucoes.status, 'returned')));
}

/**
 * Every loan's devoluções in `status`, newest first, `limit` after the cursor (a devolução's id):
 * the failed ones are money still due back that ops must see. Undefined: an unknown cursor.
 */
export async function devolucoesWithStatus(
  db: DbOrTx,
  status: DevolucaoStatus,
  limit: number,
  after?: string,
): Promise<Devolucao[] | undefined> {
  let beyond;
  if (after !== undefined) {
    const cursor = await findDevolucao(db, after);
    if (!cursor || cursor.status !== status) return undefined;
    beyond = sql`(${devolucoes.requestedAt}, ${devolucoes.id}) < (select d.requested_at, d.id from ${devolucoes} d where d.id = ${after})`;
  }
  return db
    .select()
    .from(devolucoes)
    .where(and(eq(devolucoes.status, status), beyond))
    .orderBy(desc(devolucoes.requestedAt), desc(devolucoes.id))
    .limit(limit);
}
