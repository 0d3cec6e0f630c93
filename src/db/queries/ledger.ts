import { and, asc, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
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
import { assignmentFindings } from './assignment-ledger.js';
import { ledgerEntries, loans, receiptTransactions, receivedPix } from '../schema/index.js';
import { repaymentOf } from './loans.js';

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

/**
 * Posts a receipt transaction's entries (money no loan claims: an unmatched Pix's arrival, its
 * return), in the transaction that writes the receipt transaction. As `postEntries`: refused
 * unless balanced, and checked again at commit.
 */
export async function postReceiptEntries(
  tx: DbOrTx,
  receipt: { id: string; environment: Environment; occurredAt: Date },
  entries: readonly LedgerEntry[],
): Promise<void> {
  if (!isBalanced(entries)) throw new UnbalancedTransactionError(entries);
  await tx.insert(ledgerEntries).values(
    entries.map((entry) => ({
      receiptTransactionId: receipt.id,
      environment: receipt.environment,
      account: entry.account,
      direction: entry.direction,
      amount: entry.amount,
      occurredAt: receipt.occurredAt,
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
    const id = row.transactionId!; // the rows of these loan transactions
    const entries = byTransaction.get(id) ?? [];
    entries.push({ account: row.account, direction: row.direction, amount: row.amount });
    byTransaction.set(id, entries);
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

/** Each account's debits, credits and balance over one loan's entries, in one query. */
export async function loanAccountBalances(db: DbOrTx, loanId: string): Promise<AccountBalance[]> {
  const rows = await db
    .select({ account: ledgerEntries.account, ...sums })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.loanId, loanId))
    .groupBy(ledgerEntries.account)
    .orderBy(asc(ledgerEntries.account));
  return rows.map(balanceOf);
}

/** Each account's balance (debits − credits) by account: what a posting builds on. */
export const balancesByAccount = (
  rows: readonly AccountBalance[],
): Partial<Record<LedgerAccount, number>> =>
  Object.fromEntries(rows.map((row) => [row.account, row.balance]));

/** A reconciliation finding: what does not hold, and where. */
export interface LedgerFinding {
  check:
    | 'transaction_balances'
    | 'ledger_balances'
    | 'principal_matches_rows'
    | 'refund_due_matches_ledger'
    | 'unidentified_matches_unmatched_pix'
    | 'refinancing_clearing_settles'
    | 'assignment_receivable_matches_sales'
    | 'assignment_price_settles_receivable'
    | 'payable_to_assignee_not_negative';
  /** The loan transaction or loan concerned (none for the whole ledger). */
  subject: string | null;
  message: string;
}

/**
 * The ledger's invariants (contract §13), read back from the database: every transaction's
 * debits equal its credits; the sum over all accounts is zero; each disbursed loan's
 * `loan_principal` balance equals the principal its rows still owe (`loans.repayment`, or the
 * schedule's balance for a loan paid before §13), and what it shows as due back to its borrower
 * is its `refunds_payable` (contract §14). Returns what fails; empty when all holds.
 *
 * Its reads are one snapshot (a read-only, repeatable-read transaction; inside a caller's
 * transaction, that one's): money keeps moving while it reads, and a loan disbursed between the
 * read of the ledger and the read of the loans read as a principal the ledger lacked.
 */
export async function reconcileLedger(db: DbOrTx): Promise<LedgerFinding[]> {
  if ('rollback' in db) return reconcileIn(db);
  return db.transaction(reconcileIn, {
    isolationLevel: 'repeatable read',
    accessMode: 'read only',
  });
}

async function reconcileIn(db: DbOrTx): Promise<LedgerFinding[]> {
  const findings: LedgerFinding[] = [];
  const signed = sql<string>`sum(case when ${ledgerEntries.direction} = 'debit' then ${ledgerEntries.amount} else -${ledgerEntries.amount} end)`;
  const transaction = sql<string>`coalesce(${ledgerEntries.transactionId}, ${ledgerEntries.receiptTransactionId}, ${ledgerEntries.assignmentTransactionId})`;
  const unbalanced = await db
    .select({ transactionId: transaction, imbalance: signed })
    .from(ledgerEntries)
    .groupBy(transaction)
    .having(sql`${signed} <> 0`);
  for (const row of unbalanced)
    findings.push({
      check: 'transaction_balances',
      subject: row.transactionId,
      message: `debits − credits = ${row.imbalance}`,
    });
  const [total] = await db.select({ imbalance: signed }).from(ledgerEntries);
  if (Number(total?.imbalance ?? 0) !== 0)
    findings.push({
      check: 'ledger_balances',
      subject: null,
      message: `the accounts sum to ${total!.imbalance}, not 0`,
    });
  const principal = await db
    .select({ loanId: ledgerEntries.loanId, balance: signed })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.account, 'loan_principal'))
    .groupBy(ledgerEntries.loanId);
  const balances = new Map(principal.map((row) => [row.loanId, Number(row.balance)]));
  const owedBack = await db
    .select({ loanId: ledgerEntries.loanId, balance: signed })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.account, 'refunds_payable'), isNotNull(ledgerEntries.loanId)))
    .groupBy(ledgerEntries.loanId);
  const refunds = new Map(owedBack.map((row) => [row.loanId!, -Number(row.balance)]));
  const withRefunds = await db
    .select({ id: loans.id, refundDueAmount: loans.refundDueAmount })
    .from(loans)
    .where(sql`${loans.refundDueAmount} <> 0`);
  for (const loanId of new Set([...refunds.keys(), ...withRefunds.map((row) => row.id)])) {
    const shown = withRefunds.find((row) => row.id === loanId)?.refundDueAmount ?? 0;
    const posted = refunds.get(loanId) ?? 0;
    if (shown !== posted)
      findings.push({
        check: 'refund_due_matches_ledger',
        subject: loanId,
        message: `refunds_payable owes ${posted} centavos back; the loan shows ${shown}`,
      });
  }
  // Money no loan claims: what `unidentified_receipts` holds is the Pix still unmatched — and
  // those ops matched to a loan whose `pix/{e2e}` workflow has not booked them yet (`received`
  // again, the arrival's receipt transaction on them): the money leaves the account when the
  // booking does, moments after the match commits. What it owes back of returned ones, what was
  // returned and not yet sent.
  const [unclaimed] = await db.execute<{ held: string; unmatched: string; owed: string }>(sql`
    select
      (select coalesce(-sum(case when direction = 'debit' then amount else -amount end), 0)
         from ${ledgerEntries} where account = 'unidentified_receipts') as held,
      (select coalesce(sum(pix.amount), 0) from ${receivedPix} pix
         where pix.status = 'unmatched'
            or (pix.status = 'received' and exists (
                  select 1 from ${receiptTransactions} arrival
                   where arrival.end_to_end_id = pix.end_to_end_id
                     and arrival.type = 'received'))) as unmatched,
      (select coalesce(-sum(case when direction = 'debit' then amount else -amount end), 0)
         from ${ledgerEntries}
         where account = 'refunds_payable' and receipt_transaction_id is not null) as owed`);
  if (unclaimed && Number(unclaimed.held) !== Number(unclaimed.unmatched))
    findings.push({
      check: 'unidentified_matches_unmatched_pix',
      subject: null,
      message: `unidentified_receipts holds ${unclaimed.held} centavos; the Pix unmatched or matched and not yet booked are ${unclaimed.unmatched}`,
    });
  if (unclaimed && Number(unclaimed.owed) !== 0)
    findings.push({
      check: 'refund_due_matches_ledger',
      subject: null,
      message: `refunds_payable owes ${unclaimed.owed} centavos of returned Pix never sent`,
    });
  // Contract §17: a refinancing's release credits what its old loans' payoffs debit, in one
  // database transaction: the account never holds anything.
  const [refinancing] = await db
    .select({ balance: signed })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.account, 'refinancing_clearing'));
  if (Number(refinancing?.balance ?? 0) !== 0)
    findings.push({
      check: 'refinancing_clearing_settles',
      subject: null,
      message: `refinancing_clearing holds ${refinancing!.balance} centavos; releases and payoffs differ`,
    });
  // Contract §19: a sale's money between the lender and its buyer (assignment-ledger.ts).
  findings.push(...(await assignmentFindings(db)));
  const disbursed = await db.select().from(loans).where(isNotNull(loans.disbursedAt));
  for (const loan of disbursed) {
    // A withdrawn loan (contract §14) owes nothing: the withdrawal closed its principal; nor does
    // one whose payout came back (§16).
    // A written-off loan's principal left the book for `credit_losses` (contract §17); a sold
    // one's, for its buyer (§19): the borrower still owes it, to the buyer.
    const owed =
      loan.cancellationReason === 'withdrawal' ||
      loan.cancellationReason === 'payout_returned' ||
      loan.writtenOffAt !== null ||
      loan.assignmentId !== null
        ? 0
        : repaymentOf(loan).principal_outstanding;
    const posted = balances.get(loan.id) ?? 0;
    if (posted !== owed)
      findings.push({
        check: 'principal_matches_rows',
        subject: loan.id,
        message: `loan_principal is ${posted} centavos; its rows owe ${owed}`,
      });
  }
  return findings;
}

/** Debits − credits over every entry, per environment: always 0 (the metric ops alert on). */
export async function ledgerImbalance(db: DbOrTx): Promise<Record<Environment, number>> {
  const rows = await db
    .select({
      environment: ledgerEntries.environment,
      imbalance: sql<string>`coalesce(sum(case when ${ledgerEntries.direction} = 'debit' then ${ledgerEntries.amount} else -${ledgerEntries.amount} end), 0)`,
    })
    .from(ledgerEntries)
    .groupBy(ledgerEntries.environment);
  const out: Record<Environment, number> = { production: 0, sandbox: 0 };
  for (const row of rows) out[row.environment] = Number(row.imbalance);
  return out;
}

/**
 * `npm run ledger:check`'s report: one line per finding (check, subject, what does not hold), then
 * a verdict; `ok` when every check holds.
 */
export async function ledgerCheckReport(db: DbOrTx): Promise<{ ok: boolean; lines: string[] }> {
  const findings = await reconcileLedger(db);
  return {
    ok: findings.length === 0,
    lines: [
      ...findings.map((f) => `${f.check}\t${f.subject ?? '-'}\t${f.message}`),
      findings.length === 0 ? 'ledger: every check holds' : `${findings.length} findings`,
    ],
  };
}
