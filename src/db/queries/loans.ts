import { and, asc, eq, inArray, isNull, notInArray, sql, type SQL } from 'drizzle-orm';
import type { Repayment, RepaymentTerms } from '../../domain/loans/allocation.js';
import { legacyRepayment } from '../../domain/loans/legacy-repayment.js';
import type { LoanStatus, ReferenceSource } from '../../domain/loans/loans.js';
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

/** Where the loan's rows stand (a loan paid only before §13's allocation: derived from its record). */
export function repaymentOf(loan: Loan): Repayment {
  return (
    loan.repayment ??
    legacyRepayment({
      schedule: loan.figures.schedule,
      principalAmount: loan.figures.principal_amount,
      monthlyRate: String(loan.figures.monthly_interest_rate),
      lateChargeRates: loan.lateChargeRates,
      paidInstallments: loan.paidInstallments,
      paidDates: loan.paidDates,
    })
  );
}

/** The terms that value the loan's rows: its contract rate and late charges. */
export const repaymentTerms = (loan: Loan): RepaymentTerms => ({
  monthlyRate: String(loan.figures.monthly_interest_rate),
  lateCharges: loan.lateChargeRates,
});

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

/** A loan erased with its customer before it became a contract is nobody's to read (issue 37). */
const notErased = isNull(loans.erasedAt);

async function findOne(db: DbOrTx, where: SQL | undefined): Promise<LoanView | undefined> {
  const rows = await db.select().from(loans).where(and(where, notErased)).limit(1);
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
  const filters: SQL[] = [notErased];
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

/**
 * A loan's ledger, oldest first; `hidden`: transaction types left out (the partner's view leaves
 * out a sale, whose price is between the lender and the buyer: contract §19).
 */
export async function listLoanTransactions(
  db: DbOrTx,
  tenant: Tenant,
  loanId: string,
  params: ListParams<'created_at'>,
  hidden: readonly LoanTransaction['type'][] = [],
): Promise<Page<LoanTransaction>> {
  return paginate<LoanTransaction>(db, {
    table: loanTransactions,
    idColumn: loanTransactions.id,
    sortColumn: loanTransactions.createdAt,
    tenant,
    within: and(
      eq(loanTransactions.loanId, loanId),
      hidden.length > 0 ? notInArray(loanTransactions.type, [...hidden]) : undefined,
    ),
    params,
  });
}

/**
 * Locks the loan's row for the rest of the transaction, then reads the loan: every write to a loan
 * is ordered by this lock, and what it returns is what the write builds on.
 */
export async function lockAndReadLoan(
  tx: DbOrTx,
  tenant: Tenant,
  loanId: string,
): Promise<LoanView | undefined> {
  await tx
    .select({ id: loans.id })
    .from(loans)
    .where(and(ofTenant(loans, tenant), eq(loans.id, loanId)))
    .for('update');
  return findLoan(tx, tenant, loanId);
}

/** A new loan and its signers (the customer at position 0). */
export async function insertLoan(
  tx: DbOrTx,
  loan: NewLoan,
  signers: { name: string; cpf: string; email: string }[],
): Promise<void> {
  await tx.insert(loans).values(loan);
  await tx
    .insert(loanSigners)
    .values(signers.map((signer, position) => ({ loanId: loan.id, position, ...signer })));
}

/** One signer's signature and its evidence; a signer who signed already keeps the first. */
export async function recordSignerSignature(
  tx: DbOrTx,
  loanId: string,
  cpf: string,
  evidence: {
    signedAt: Date;
    ipAddress: string | null;
    userAgent: string | null;
    signedSha256: string;
    signedChannel: string | null;
  },
): Promise<void> {
  await tx
    .update(loanSigners)
    .set(evidence)
    .where(
      and(eq(loanSigners.loanId, loanId), isNull(loanSigners.signedAt), eq(loanSigners.cpf, cpf)),
    );
}

/** What the loan workflow changes on a loan's row. */
export type LoanChange = Partial<
  Pick<
    NewLoan,
    | 'status'
    | 'cancellationReason'
    | 'error'
    | 'disbursedAt'
    | 'paidInstallments'
    | 'overdueThrough'
    | 'repayment'
    | 'disbursementStatus'
    | 'figures'
    | 'releaseAdjustment'
    | 'writtenOffAt'
    | 'finishedReason'
    | 'renegotiatedRows'
    | 'assignmentId'
    | 'assignedTo'
    | 'assignedAt'
  >
> & {
  /** `paid_at` of the rows this change pays, appended to `paidDates`. */
  paidDates?: string[];
};

/**
 * Writes a change to the loan (and `updated_at`); with `onlyFrom`, only while the loan is in one
 * of those statuses.
 */
export async function changeLoanRow(
  tx: DbOrTx,
  loanId: string,
  change: LoanChange,
  onlyFrom?: readonly LoanStatus[],
): Promise<void> {
  const { paidDates, ...columns } = change;
  await tx
    .update(loans)
    .set({
      ...columns,
      ...(paidDates?.length
        ? { paidDates: sql`${loans.paidDates} || ${JSON.stringify(paidDates)}::jsonb` }
        : {}),
      updatedAt: sql`now()`,
    })
    .where(and(eq(loans.id, loanId), onlyFrom ? inArray(loans.status, [...onlyFrom]) : undefined));
}

/**
 * One ledger transaction, keyed by loan and step: false when that step was written already (an
 * activity retried after a crash writes nothing twice).
 */
export async function insertLoanTransaction(
  tx: DbOrTx,
  tenant: Tenant,
  loanId: string,
  entry: Omit<typeof loanTransactions.$inferInsert, 'partnerId' | 'environment' | 'loanId'>,
): Promise<LoanTransaction | undefined> {
  const [row] = await tx
    .insert(loanTransactions)
    .values({ ...entry, partnerId: tenant.partnerId, environment: tenant.environment, loanId })
    .onConflictDoNothing()
    .returning();
  return row;
}

/** The amount of the ledger transaction a step wrote, if it did. */
export async function loanTransactionAmount(
  tx: DbOrTx,
  loanId: string,
  step: string,
): Promise<number | undefined> {
  const [row] = await tx
    .select({ amount: loanTransactions.amount })
    .from(loanTransactions)
    .where(and(eq(loanTransactions.loanId, loanId), eq(loanTransactions.step, step)));
  return row?.amount;
}

/**
 * The transaction a reference names on a loan in its source's namespace, if it was recorded
 * (contract §13): `manual` for what ops (or the sandbox twin) named, `pix` for an end-to-end id.
 */
export async function findPaymentByReference(
  db: DbOrTx,
  loanId: string,
  reference: string,
  source: ReferenceSource,
): Promise<LoanTransaction | undefined> {
  const [row] = await db
    .select()
    .from(loanTransactions)
    .where(
      and(
        eq(loanTransactions.loanId, loanId),
        eq(loanTransactions.referenceSource, source),
        eq(loanTransactions.reference, reference),
      ),
    );
  return row;
}
