/**
 * `loan_refinancings` (contract §17): which loans a new loan pays off. Every query takes the
 * tenant; the rows are written with the new loan and moved by its workflow's activities only.
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { loanAgreements, loanRefinancings } from '../schema/index.js';
import { liveAgreementStatuses } from '../../domain/loans/agreements.js';
import type { RefinancingStatus } from '../../domain/loans/refinancing.js';
import type { Tenant } from '../../domain/tenant.js';
import { ofTenant } from '../tenancy.js';

export type LoanRefinancing = typeof loanRefinancings.$inferSelect;

/** The loans `loanId` refinances, in the order the request listed them. */
export async function refinancingsOf(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
): Promise<LoanRefinancing[]> {
  return db
    .select()
    .from(loanRefinancings)
    .where(and(ofTenant(loanRefinancings, tenant), eq(loanRefinancings.loanId, loanId)))
    .orderBy(asc(loanRefinancings.createdAt), asc(loanRefinancings.refinancedLoanId));
}

/** For each of `loanIds`, the live (`pending`) new loan that names it, other than `exceptLoanId`. */
export async function liveRefinancersOf(
  db: DbOrTx,
  tenant: Tenant,
  loanIds: readonly string[],
): Promise<Map<string, string>> {
  if (loanIds.length === 0) return new Map();
  const rows = await db
    .select({ loanId: loanRefinancings.loanId, refinanced: loanRefinancings.refinancedLoanId })
    .from(loanRefinancings)
    .where(
      and(
        ofTenant(loanRefinancings, tenant),
        inArray(loanRefinancings.refinancedLoanId, [...loanIds]),
        eq(loanRefinancings.status, 'pending'),
      ),
    );
  return new Map(rows.map((row) => [row.refinanced, row.loanId]));
}

/** For each of `loanIds`, its live payment agreement's id, if any (contract §17: one per loan). */
export async function liveAgreementsOf(
  db: DbOrTx,
  tenant: Tenant,
  loanIds: readonly string[],
): Promise<Map<string, string>> {
  if (loanIds.length === 0) return new Map();
  const rows = await db
    .select({ id: loanAgreements.id, loanId: loanAgreements.loanId })
    .from(loanAgreements)
    .where(
      and(
        ofTenant(loanAgreements, tenant),
        inArray(loanAgreements.loanId, [...loanIds]),
        inArray(loanAgreements.status, [...liveAgreementStatuses]),
      ),
    );
  return new Map(rows.map((row) => [row.loanId, row.id]));
}

export async function insertRefinancings(
  tx: DbOrTx,
  rows: (typeof loanRefinancings.$inferInsert)[],
): Promise<void> {
  if (rows.length > 0) await tx.insert(loanRefinancings).values(rows);
}

/** The new loan's refinancings from `pending` to `status` (its release, or its end before it). */
export async function settleRefinancings(
  tx: DbOrTx,
  tenant: Tenant,
  loanId: string,
  status: Exclude<RefinancingStatus, 'pending'>,
): Promise<void> {
  await tx
    .update(loanRefinancings)
    .set({ status, updatedAt: new Date() })
    .where(
      and(
        ofTenant(loanRefinancings, tenant),
        eq(loanRefinancings.loanId, loanId),
        eq(loanRefinancings.status, 'pending'),
      ),
    );
}

/** The loan that paid `loanId` off, if a release did. */
export async function refinancedBy(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
): Promise<string | undefined> {
  const [row] = await db
    .select({ loanId: loanRefinancings.loanId })
    .from(loanRefinancings)
    .where(
      and(
        ofTenant(loanRefinancings, tenant),
        eq(loanRefinancings.refinancedLoanId, loanId),
        eq(loanRefinancings.status, 'released'),
      ),
    )
    .limit(1);
  return row?.loanId;
}

/** Centavos of a new loan's requested amount that pay off the loans it refinances. */
export async function refinancedTotal(db: DbOrTx, tenant: Tenant, loanId: string): Promise<number> {
  const rows = await refinancingsOf(db, tenant, loanId);
  return rows
    .filter((row) => row.status !== 'void')
    .reduce((sum, row) => sum + row.payoffAmount, 0);
}
