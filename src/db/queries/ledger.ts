import { and, asc, eq, inArray, lt, sql } from 'drizzle-orm';
import { addDays, startOfBusinessDate } from '../../domain/business-date.js';
import type { Environment } from '../../domain/environments.js';
import {
  isBalanced,
  UnbalancedTransactionError,
  type LedgerAccount,
  type LedgerEntry,
} from '../../domain/ledger/postings.js';
import type { Tenant } from '../../domain/tenant.js';
import type { DbOrTx } from '../client.js';
import { ledgerEntries } from '../schema/index.js';

/**
 * Posts a loan transaction's entries, in the transaction that writes the transaction itself (the
 * one writer of the ledger: every money movement comes through here). Refused unless its debits
 * equal its credits; the database checks the same again at commit.
 */
export async function postEntries(
  tx: DbOrTx,
  tenant: Tenant,
  transaction: { id: string; loanId: string; occurredAt: Date },
  entries: readonly LedgerEntry[],
): Promise<void> {
  if (!isBalanced(entries)) throw new UnbalancedTransactionError(entries);
  await tx.insert(ledgerEntries).values(
    entries.map((entry) => ({
      transactionId: transaction.id,
      partnerId: tenant.partnerId,
      environment: tenant.environment,
      loanId: transaction.loanId,
      account: entry.account,
      direction: entry.direction,
      amount: entry.amount,
      occurredAt: transaction.occurredAt,
    })),
  );
}

/** The entries of these transactions, by transaction id, in the order posted. */
export async function entriesOf(
  db: DbOrTx,
  transactionIds: readonly string[],
): Promise<Map<string, LedgerEntry[]>> {
  const byTransaction = new Map<string, LedgerEntry[]>();
  if (transactionIds.length === 0) return byTransaction;
  const rows = await db
    .select()
    .from(ledgerEntries)
    .where(inArray(ledgerEntries.transactionId, [...transactionIds]))
    .orderBy(asc(ledgerEntries.id));
  for (const row of rows) {
    const entries = byTransaction.get(row.transactionId) ?? [];
    entries.push({ account: row.account, direction: row.direction, amount: row.amount });
    byTransaction.set(row.transactionId, entries);
  }
  return byTransaction;
}

export interface AccountBalance {
  account: LedgerAccount;
  debits: number;
  credits: number;
  /** Debits − credits. */
  balance: number;
}

const sums = {
  debits: sql<string>`coalesce(sum(${ledgerEntries.amount}) filter (where ${ledgerEntries.direction} = 'debit'), 0)`,
  credits: sql<string>`coalesce(sum(${ledgerEntries.amount}) filter (where ${ledgerEntries.direction} = 'credit'), 0)`,
};

const balanceOf = (row: { account: LedgerAccount; debits: string; credits: string }) => ({
  account: row.account,
  debits: Number(row.debits),
  credits: Number(row.credits),
  balance: Number(row.debits) - Number(row.credits),
});

/**
 * Each account's debits, credits and balance over every loan of one environment, for the entries
 * that occurred up to the end of `date` (São Paulo), in one query.
 */
export async function trialBalance(
  db: DbOrTx,
  environment: Environment,
  date: string,
): Promise<AccountBalance[]> {
  const rows = await db
    .select({ account: ledgerEntries.account, ...sums })
    .from(ledgerEntries)
    .where(
      and(
        eq(ledgerEntries.environment, environment),
        lt(ledgerEntries.occurredAt, new Date(startOfBusinessDate(addDays(date, 1)))),
      ),
    )
    .groupBy(ledgerEntries.account)
    .orderBy(asc(ledgerEntries.account));
  return rows.map(balanceOf);
}

/** One loan's balance per account, in one query. */
export async function loanBalances(db: DbOrTx, loanId: string): Promise<AccountBalance[]> {
  const rows = await db
    .select({ account: ledgerEntries.account, ...sums })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.loanId, loanId))
    .groupBy(ledgerEntries.account)
    .orderBy(asc(ledgerEntries.account));
  return rows.map(balanceOf);
}
