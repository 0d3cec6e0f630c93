import { and, asc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import type { Environment } from '../../domain/environments.js';
import type { ChargeStatus } from '../../domain/loans/charges.js';
import type { Actor } from '../../domain/operators.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { charges, loans, receivedPix } from '../schema/index.js';
import { ofTenant } from '../tenancy.js';

export type Charge = typeof charges.$inferSelect;
export type NewCharge = typeof charges.$inferInsert;
export type ReceivedPix = typeof receivedPix.$inferSelect;
export type NewReceivedPix = typeof receivedPix.$inferInsert;

export async function insertCharge(tx: DbOrTx, charge: NewCharge): Promise<Charge> {
  const [row] = await tx.insert(charges).values(charge).returning();
  if (!row) throw new Error(`charge ${charge.id} not written`);
  return row;
}

export async function findCharge(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<Charge | undefined> {
  const [row] = await db
    .select()
    .from(charges)
    .where(and(ofTenant(charges, tenant), eq(charges.id, id)));
  return row;
}

export async function findChargeById(db: DbOrTx, id: string): Promise<Charge | undefined> {
  const [row] = await db.select().from(charges).where(eq(charges.id, id));
  return row;
}

/** The loan's active charge, if it has one (never more than one). */
export async function activeChargeOf(db: DbOrTx, loanId: string): Promise<Charge | undefined> {
  const [row] = await db
    .select()
    .from(charges)
    .where(and(eq(charges.loanId, loanId), eq(charges.status, 'active')));
  return row;
}

/** The charges whose BR Codes carry these txids. */
export async function chargesByTxid(db: DbOrTx, txids: readonly string[]): Promise<Charge[]> {
  if (txids.length === 0) return [];
  return db
    .select()
    .from(charges)
    .where(inArray(charges.txid, [...txids]));
}

/**
 * Moves an `active` charge to `status` (with what the move records); undefined when the charge
 * was no longer active (paid, expired or replaced meanwhile): nothing is written.
 */
export async function closeCharge(
  tx: DbOrTx,
  id: string,
  status: Exclude<ChargeStatus, 'active'>,
  paid?: { paidAt: Date; paymentReference: string },
  /** The statuses it may leave: `active`, or an `expired` withdrawal charge paid in time. */
  from: readonly ChargeStatus[] = ['active'],
): Promise<Charge | undefined> {
  const [row] = await tx
    .update(charges)
    .set({ status, ...paid, updatedAt: sql`now()` })
    .where(and(eq(charges.id, id), inArray(charges.status, [...from])))
    .returning();
  return row;
}

/** A closed charge the PSP may still take: its kind there and its txid. */
export interface ChargeAwaitingRemoval {
  id: string;
  txid: string;
  status: ChargeStatus;
  pspKind: 'cob' | 'cobv';
}

/**
 * Cancelled or expired charges registered at the PSP and not yet removed there (contract §16),
 * oldest change first: of one loan, one charge, or any (`limit`, default 50).
 */
export async function chargesAwaitingPspRemoval(
  db: DbOrTx,
  of: { loanId?: string; chargeId?: string; limit?: number },
): Promise<ChargeAwaitingRemoval[]> {
  const rows = await db
    .select({
      id: charges.id,
      txid: charges.txid,
      status: charges.status,
      pspKind: charges.pspKind,
    })
    .from(charges)
    .where(
      and(
        isNotNull(charges.pspKind),
        isNull(charges.pspRemovedAt),
        inArray(charges.status, ['cancelled', 'expired']),
        of.loanId === undefined ? undefined : eq(charges.loanId, of.loanId),
        of.chargeId === undefined ? undefined : eq(charges.id, of.chargeId),
      ),
    )
    .orderBy(asc(charges.updatedAt))
    .limit(of.limit ?? 50);
  return rows.flatMap((row) => (row.pspKind ? [{ ...row, pspKind: row.pspKind }] : []));
}

/** The PSP no longer takes the charge `id` (removed there, or paid or never registered). */
export async function markRemovedAtPsp(db: DbOrTx, id: string): Promise<void> {
  await db
    .update(charges)
    .set({ pspRemovedAt: sql`now()` })
    .where(and(eq(charges.id, id), isNull(charges.pspRemovedAt)));
}

export const chargeSorts = { created_at: charges.createdAt } as const;

export function listLoanCharges(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
  params: ListParams<'created_at'>,
): Promise<Page<Charge>> {
  return paginate<Charge>(db, {
    table: charges,
    idColumn: charges.id,
    sortColumn: charges.createdAt,
    tenant,
    within: eq(charges.loanId, loanId),
    params,
  });
}

/**
 * Stores each Pix not stored before (its end-to-end id names it for good); answers the ones this
 * call stored. A Pix told again stores nothing.
 */
export async function storeReceivedPix(tx: DbOrTx, rows: NewReceivedPix[]): Promise<ReceivedPix[]> {
  if (rows.length === 0) return [];
  return tx.insert(receivedPix).values(rows).onConflictDoNothing().returning();
}

export async function findReceivedPix(
  db: DbOrTx,
  endToEndId: string,
): Promise<ReceivedPix | undefined> {
  const [row] = await db.select().from(receivedPix).where(eq(receivedPix.endToEndId, endToEndId));
  return row;
}

/** The Pix became the loan transaction `transactionId`. */
export async function markPixRecorded(
  tx: DbOrTx,
  endToEndId: string,
  transactionId: string,
): Promise<void> {
  await tx
    .update(receivedPix)
    .set({ status: 'recorded', transactionId, recordedAt: sql`now()` })
    .where(eq(receivedPix.endToEndId, endToEndId));
}

/**
 * Pix whose txid named no charge, oldest first, `limit` of them after the one `after` names (an
 * end-to-end id); `undefined` when `after` is not an unmatched Pix.
 */
export async function unmatchedPix(
  db: DbOrTx,
  limit: number,
  after?: string,
): Promise<ReceivedPix[] | undefined> {
  const unmatched = eq(receivedPix.status, 'unmatched');
  let beyond;
  if (after !== undefined) {
    const [cursor] = await db
      .select({ endToEndId: receivedPix.endToEndId })
      .from(receivedPix)
      .where(and(unmatched, eq(receivedPix.endToEndId, after)));
    if (!cursor) return undefined;
    beyond = sql`(${receivedPix.receivedAt}, ${receivedPix.endToEndId}) > (select r.received_at, r.end_to_end_id from ${receivedPix} r where r.end_to_end_id = ${after})`;
  }
  return db
    .select()
    .from(receivedPix)
    .where(and(unmatched, beyond))
    .orderBy(asc(receivedPix.receivedAt), asc(receivedPix.endToEndId))
    .limit(limit);
}

/** How many Pix wait unmatched (the gauge ops alert on). */
export async function unmatchedPixCount(db: DbOrTx): Promise<number> {
  const [row] = await db
    .select({ count: sql<number>`count(*)::int` })
    .from(receivedPix)
    .where(eq(receivedPix.status, 'unmatched'));
  return row?.count ?? 0;
}

/** Adds `amount` to what the loan owes back to its borrower (a negative amount: a refund sent). */
export async function addRefundDue(tx: DbOrTx, loanId: string, amount: number): Promise<void> {
  await tx
    .update(loans)
    .set({ refundDueAmount: sql`${loans.refundDueAmount} + ${amount}`, updatedAt: sql`now()` })
    .where(eq(loans.id, loanId));
}

/** A received Pix, locked for the transaction's length (ops matching or returning it). */
export async function lockReceivedPix(
  tx: DbOrTx,
  endToEndId: string,
): Promise<ReceivedPix | undefined> {
  const [row] = await tx
    .select()
    .from(receivedPix)
    .where(eq(receivedPix.endToEndId, endToEndId))
    .for('update');
  return row;
}

/** An unmatched Pix now names its loan: `received`, until its workflow books it there. */
export async function matchReceivedPix(
  tx: DbOrTx,
  endToEndId: string,
  match: {
    loanId: string;
    partnerId: string;
    environment: Environment;
    matchedBy: Actor | null;
    matchApprovedBy: Actor | null;
  },
): Promise<ReceivedPix> {
  const [row] = await tx
    .update(receivedPix)
    .set({ status: 'received', ...match })
    .where(and(eq(receivedPix.endToEndId, endToEndId), eq(receivedPix.status, 'unmatched')))
    .returning();
  if (!row) throw new Error(`Pix ${endToEndId} is no longer unmatched`);
  return row;
}

/** An unmatched Pix went back to its payer. */
export async function markPixReturned(tx: DbOrTx, endToEndId: string): Promise<ReceivedPix> {
  const [row] = await tx
    .update(receivedPix)
    .set({ status: 'returned', recordedAt: sql`now()` })
    .where(and(eq(receivedPix.endToEndId, endToEndId), eq(receivedPix.status, 'unmatched')))
    .returning();
  if (!row) throw new Error(`Pix ${endToEndId} is no longer unmatched`);
  return row;
}
