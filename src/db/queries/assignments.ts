/**
 * Assignments (cessão, contract §19): the batches of production loans sold, their loans, and what
 * servicing after the sale reads — the money owed to the buyer, the installments sold. Ops read
 * across partners (the lender sells what it lent, whoever the partner); each loan row keeps its
 * partner, and the events of a sale go to that partner alone.
 */
import { and, asc, desc, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { AssignmentStatus } from '../../domain/assignments/assignments.js';
import type { SoldRow } from '../../domain/assignments/pricing.js';
import { addDays, startOfBusinessDate } from '../../domain/business-date.js';
import type { LedgerAccount } from '../../domain/ledger/postings.js';
import type { DbOrTx } from '../client.js';
import {
  assignmentLoans,
  assignments,
  assignmentTransactions,
  customers,
  ledgerEntries,
  loans,
  loanTransactions,
} from '../schema/index.js';
import { balancesByAccount, loanAccountBalances } from './ledger.js';
import { repaymentOf, type LoanView } from './loans.js';

export type Assignment = typeof assignments.$inferSelect;
export type AssignmentLoan = typeof assignmentLoans.$inferSelect;
export type AssignmentTransaction = typeof assignmentTransactions.$inferSelect;

export async function insertAssignment(
  tx: DbOrTx,
  values: typeof assignments.$inferInsert,
  loansSold: { loanId: string; partnerId: string }[],
): Promise<Assignment> {
  const [row] = await tx.insert(assignments).values(values).returning();
  if (!row) throw new Error('assignment insert returned no row');
  await tx
    .insert(assignmentLoans)
    .values(loansSold.map((loan) => ({ ...loan, assignmentId: row.id })));
  return row;
}

export async function findAssignment(db: DbOrTx, id: string): Promise<Assignment | undefined> {
  const [row] = await db.select().from(assignments).where(eq(assignments.id, id)).limit(1);
  return row;
}

/** Locks the batch's row for the rest of the transaction, then reads it. */
export async function lockAssignment(tx: DbOrTx, id: string): Promise<Assignment | undefined> {
  const [row] = await tx.select().from(assignments).where(eq(assignments.id, id)).for('update');
  return row;
}

/** The batch's loans, in loan id order (the order settlement locks them in). */
export function loansOfAssignment(db: DbOrTx, id: string): Promise<AssignmentLoan[]> {
  return db
    .select()
    .from(assignmentLoans)
    .where(eq(assignmentLoans.assignmentId, id))
    .orderBy(asc(assignmentLoans.loanId));
}

/** Newest first, at most `limit` + 1 (has_more). */
export function listAssignments(db: DbOrTx, limit: number): Promise<Assignment[]> {
  return db
    .select()
    .from(assignments)
    .orderBy(desc(assignments.createdAt), desc(assignments.id))
    .limit(limit + 1);
}

/** Which of `loanIds` are in a live batch (draft, submitted or settled): loan → batch. */
export async function liveAssignmentsOf(
  db: DbOrTx,
  loanIds: readonly string[],
): Promise<Map<string, string>> {
  if (loanIds.length === 0) return new Map();
  const rows = await db
    .select({ loanId: assignmentLoans.loanId, assignmentId: assignmentLoans.assignmentId })
    .from(assignmentLoans)
    .where(and(inArray(assignmentLoans.loanId, [...loanIds]), eq(assignmentLoans.live, true)));
  return new Map(rows.map((row) => [row.loanId, row.assignmentId]));
}

/** Moves the batch from one of `from` (under its lock); the row after, or undefined. */
export async function changeAssignment(
  tx: DbOrTx,
  id: string,
  from: readonly AssignmentStatus[],
  change: Partial<typeof assignments.$inferInsert>,
): Promise<Assignment | undefined> {
  const [row] = await tx
    .update(assignments)
    .set({ ...change, updatedAt: sql`now()` })
    .where(and(eq(assignments.id, id), inArray(assignments.status, [...from])))
    .returning();
  return row;
}

/** A cancelled batch lets its loans go: each may be sold in another. */
export async function releaseAssignmentLoans(tx: DbOrTx, id: string): Promise<void> {
  await tx.update(assignmentLoans).set({ live: false }).where(eq(assignmentLoans.assignmentId, id));
}

/** A loan's rows sold and its price (the batch submitted), or what settlement took off the book. */
export async function changeAssignmentLoan(
  tx: DbOrTx,
  assignmentId: string,
  loanId: string,
  change: { rows?: SoldRow[]; price?: number; carrying?: AssignmentLoan['carrying'] },
): Promise<void> {
  await tx
    .update(assignmentLoans)
    .set(change)
    .where(and(eq(assignmentLoans.assignmentId, assignmentId), eq(assignmentLoans.loanId, loanId)));
}

/**
 * The balances a withdrawal is priced on (CDC art. 49, contract §14): the loan's accounts; for a
 * sold loan, whose book holds none of it, the borrower's side of them — the principal its rows
 * still owe, and the interest and late charges its payments paid (negative: credits).
 */
export async function withdrawalBalances(
  tx: DbOrTx,
  loan: LoanView,
): Promise<Partial<Record<LedgerAccount, number>>> {
  if (!loan.assignmentId) return balancesByAccount(await loanAccountBalances(tx, loan.id));
  const [paid] = await tx
    .select({
      interest: sql<string>`coalesce(sum(${loanTransactions.interestAmount}), 0)`,
      lateFee: sql<string>`coalesce(sum(${loanTransactions.lateFeeAmount}), 0)`,
      lateInterest: sql<string>`coalesce(sum(${loanTransactions.lateInterestAmount}), 0)`,
    })
    .from(loanTransactions)
    .where(
      and(
        eq(loanTransactions.loanId, loan.id),
        inArray(loanTransactions.type, ['payment', 'payoff']),
      ),
    );
  return {
    loan_principal: repaymentOf(loan).principal_outstanding,
    interest_income: -Number(paid?.interest ?? 0),
    late_fee_income: -Number(paid?.lateFee ?? 0),
    late_interest_income: -Number(paid?.lateInterest ?? 0),
  };
}

/** One movement of money owed to the buyer: a loan transaction's `payable_to_assignee` entry. */
export interface Remittance {
  loanId: string;
  transactionId: string;
  type: string;
  /** Centavos owed to the buyer by it (negative: owed back by the buyer). */
  amount: number;
  occurredAt: Date;
}

/** What the batch's loans brought the buyer on a business date (São Paulo), oldest first. */
export async function remittancesOn(
  db: DbOrTx,
  assignmentId: string,
  date: string,
): Promise<Remittance[]> {
  const rows = await db
    .select({
      loanId: loanTransactions.loanId,
      transactionId: loanTransactions.id,
      type: loanTransactions.type,
      amount: sql<string>`sum(case when ${ledgerEntries.direction} = 'credit' then ${ledgerEntries.amount} else -${ledgerEntries.amount} end)`,
      occurredAt: loanTransactions.occurredAt,
    })
    .from(ledgerEntries)
    .innerJoin(loanTransactions, eq(loanTransactions.id, ledgerEntries.transactionId))
    .innerJoin(
      assignmentLoans,
      and(
        eq(assignmentLoans.loanId, ledgerEntries.loanId),
        eq(assignmentLoans.assignmentId, assignmentId),
      ),
    )
    .where(
      and(
        eq(ledgerEntries.account, 'payable_to_assignee'),
        gte(ledgerEntries.occurredAt, new Date(startOfBusinessDate(date))),
        lt(ledgerEntries.occurredAt, new Date(startOfBusinessDate(addDays(date, 1)))),
      ),
    )
    .groupBy(loanTransactions.id)
    .orderBy(asc(loanTransactions.occurredAt), asc(loanTransactions.id));
  return rows.map((row) => ({ ...row, amount: Number(row.amount) }));
}

/** The installments a batch sold, with each loan's contract and borrower's cpf, by loan id. */
export async function soldInstallments(db: DbOrTx, assignmentId: string) {
  return db
    .select({
      loanId: assignmentLoans.loanId,
      rows: assignmentLoans.rows,
      contractSha256: loans.contractSha256,
      cpf: customers.cpf,
    })
    .from(assignmentLoans)
    .innerJoin(loans, eq(loans.id, assignmentLoans.loanId))
    .innerJoin(customers, eq(customers.id, loans.customerId))
    .where(eq(assignmentLoans.assignmentId, assignmentId))
    .orderBy(asc(assignmentLoans.loanId));
}

/** The batch's money moved so far: its price received, its days remitted (oldest first). */
export function moneyOfAssignment(db: DbOrTx, id: string): Promise<AssignmentTransaction[]> {
  return db
    .select()
    .from(assignmentTransactions)
    .where(eq(assignmentTransactions.assignmentId, id))
    .orderBy(asc(assignmentTransactions.paidAt), asc(assignmentTransactions.id));
}

export async function insertAssignmentTransaction(
  tx: DbOrTx,
  values: typeof assignmentTransactions.$inferInsert,
): Promise<AssignmentTransaction> {
  const [row] = await tx.insert(assignmentTransactions).values(values).returning();
  if (!row) throw new Error('assignment transaction insert returned no row');
  return row;
}
