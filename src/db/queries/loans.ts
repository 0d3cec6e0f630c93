import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import type { LoanStatus } from '../../domain/loans/loans.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { paginate, type ListParams, type Page } from '../pagination.js';
import { loanSigners, loans, loanTransactions } from '../schema/index.js';
import { ofTenant } from '../tenancy.js';
import { clockOffsets } from './sandbox-clocks.js';

export type Loan = typeof loans.$inferSelect;
export type NewLoan = typeof loans.$inferInsert;
export type LoanSigner = typeof loanSigners.$inferSelect;
export type LoanTransaction = typeof loanTransactions.$inferSelect;

/**
 * A loan with its signers, in signing order (the customer first), and how far its customer's
 * sandbox clock runs ahead of real time (0 in production): what a loan's reader sees.
 */
export type LoanView = Loan & { signers: LoanSigner[]; clockOffsetMs: number };

async function withSigners(db: DbOrTx, rows: Loan[]): Promise<LoanView[]> {
  if (rows.length === 0) return [];
  const offsets = await clockOffsets(
    db,
    rows.filter((row) => row.environment === 'sandbox').map((row) => row.customerId),
  );
  const signers = await db
    .select()
    .from(loanSigners)
    .where(
      inArray(
        loanSigners.loanId,
        rows.map((row) => row.id),
      ),
    )
    .orderBy(asc(loanSigners.position));
  return rows.map((row) => ({
    ...row,
    signers: signers.filter((s) => s.loanId === row.id),
    clockOffsetMs: offsets.get(row.customerId) ?? 0,
  }));
}

async function findOne(db: DbOrTx, where: SQL | undefined): Promise<LoanView | undefined> {
  const rows = await db.select().from(loans).where(where).limit(1);
  const [view] = await withSigners(db, rows);
  return view;
}

export async function findLoan(
  db: DbOrTx,
  tenant: Tenant,
  id: string,
): Promise<LoanView | undefined> {
  return findOne(db, and(ofTenant(loans, tenant), eq(loans.id, id)));
}

/** Any partner's loan: ops commands. */
export async function findLoanForOps(db: DbOrTx, id: string): Promise<LoanView | undefined> {
  return findOne(db, eq(loans.id, id));
}

/** The loan a signing page's token opens (by the token's hash). */
export async function findLoanBySigningToken(
  db: DbOrTx,
  tokenHash: string,
): Promise<LoanView | undefined> {
  return findOne(db, eq(loans.signingTokenHash, tokenHash));
}

export const loanSorts = { created_at: loans.createdAt } as const;

export async function listLoans(
  db: DbOrTx,
  tenant: Tenant,
  params: ListParams<keyof typeof loanSorts> & {
    customer_id?: string | undefined;
    status?: LoanStatus | undefined;
  },
): Promise<Page<LoanView>> {
  const filters: SQL[] = [];
  if (params.customer_id !== undefined) filters.push(eq(loans.customerId, params.customer_id));
  if (params.status !== undefined) filters.push(eq(loans.status, params.status));
  const page = await paginate<Loan>(db, {
    table: loans,
    idColumn: loans.id,
    sortColumn: loanSorts[params.sort],
    tenant,
    filters: and(...filters),
    params,
  });
  return { rows: await withSigners(db, page.rows), hasMore: page.hasMore };
}

/** A loan's ledger, oldest first. */
export async function listLoanTransactions(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
  params: ListParams<'created_at'>,
): Promise<Page<LoanTransaction>> {
  return paginate<LoanTransaction>(db, {
    table: loanTransactions,
    idColumn: loanTransactions.id,
    sortColumn: loanTransactions.createdAt,
    tenant,
    within: eq(loanTransactions.loanId, loanId),
    params,
  });
}
