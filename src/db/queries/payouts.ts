import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import type { Environment } from '../../domain/environments.js';
import { payoutMayBecome, type PayoutOutcome } from '../../domain/payouts/payouts.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { payouts } from '../schema/index.js';
import { ofTenant } from '../tenancy.js';

export type Payout = typeof payouts.$inferSelect;
export type NewPayout = typeof payouts.$inferInsert;

/**
 * The loan's payout, stored before the PSP is called; the one stored already when there is one
 * (a retry after a crash sends what was stored, never a request made again from the loan).
 */
export async function storePayout(tx: DbOrTx, payout: NewPayout): Promise<Payout> {
  await tx.insert(payouts).values(payout).onConflictDoNothing({ target: payouts.loanId });
  const [row] = await tx.select().from(payouts).where(eq(payouts.loanId, payout.loanId));
  if (!row) throw new Error(`payout of loan ${payout.loanId} not written`);
  return row;
}

/** A payout by our id (its idempotency key at the PSP), under the row lock. */
export async function lockPayout(tx: DbOrTx, id: string): Promise<Payout | undefined> {
  const [row] = await tx.select().from(payouts).where(eq(payouts.id, id)).for('update');
  return row;
}

/** The loan's payout, if one was sent. */
export async function payoutOfLoan(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
): Promise<Payout | undefined> {
  const [row] = await db
    .select()
    .from(payouts)
    .where(and(ofTenant(payouts, tenant), eq(payouts.loanId, loanId)));
  return row;
}

/**
 * Records what the PSP says of a payout (its answer, a notification, a poll), under the row lock:
 * only a move its status allows (a stale `pending` after `confirmed` changes nothing). Answers the
 * payout as it stands and whether this changed it.
 */
export async function recordPayoutOutcome(
  tx: DbOrTx,
  id: string,
  outcome: PayoutOutcome,
): Promise<{ payout: Payout; changed: boolean } | undefined> {
  const before = await lockPayout(tx, id);
  if (!before) return undefined;
  const samePsp = before.pspPayoutId === null || before.pspPayoutId === outcome.pspPayoutId;
  if (!samePsp)
    throw new Error(`payout ${id} is ${before.pspPayoutId} at the PSP, not ${outcome.pspPayoutId}`);
  const moves = before.status !== outcome.status && payoutMayBecome(before.status, outcome.status);
  if (!moves && before.pspPayoutId !== null) return { payout: before, changed: false };
  const at = new Date(outcome.at);
  const [after] = await tx
    .update(payouts)
    .set({
      pspPayoutId: outcome.pspPayoutId,
      ...(moves ? { status: outcome.status } : {}),
      ...(moves && outcome.endToEndId ? { endToEndId: outcome.endToEndId } : {}),
      ...(moves && (outcome.status === 'confirmed' || outcome.status === 'failed')
        ? { settledAt: at }
        : {}),
      ...(moves && outcome.status === 'failed'
        ? { failureReason: outcome.failureReason ?? 'unknown' }
        : {}),
      ...(moves && outcome.status === 'returned'
        ? { returnReason: outcome.returnReason ?? 'unknown', returnedAt: at }
        : {}),
      updatedAt: new Date(),
    })
    .where(eq(payouts.id, id))
    .returning();
  return { payout: after!, changed: moves };
}

/**
 * The PSP refused the payout for good (a 400: it made nothing): `failed`, with its reason. A
 * payout the PSP had answered already is left as it stands.
 */
export async function recordPayoutRefused(tx: DbOrTx, id: string, reason: string): Promise<Payout> {
  const before = await lockPayout(tx, id);
  if (!before) throw new Error(`payout ${id} is not stored`);
  if (before.status !== 'sending') return before;
  const [after] = await tx
    .update(payouts)
    .set({
      status: 'failed',
      failureReason: `refused by the PSP: ${reason}`.slice(0, 500),
      settledAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(eq(payouts.id, id))
    .returning();
  return after!;
}

/**
 * The payouts of an environment settled (confirmed or failed, by the PSP's time) in
 * `[from, to)`, oldest first: what the daily reconciliation compares with the PSP's statement.
 */
export async function payoutsOfDay(
  db: DbOrTx,
  environment: Environment,
  from: Date,
  to: Date,
): Promise<Payout[]> {
  return db
    .select()
    .from(payouts)
    .where(
      and(
        eq(payouts.environment, environment),
        gte(payouts.settledAt, from),
        lt(payouts.settledAt, to),
      ),
    )
    .orderBy(asc(payouts.settledAt), asc(payouts.id));
}
