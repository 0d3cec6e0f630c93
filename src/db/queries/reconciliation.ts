import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import type { Discrepancy, ReconciliationStatus } from '../../domain/reconciliation/report.js';
import type { DbOrTx } from '../client.js';
import { reconciliationDiscrepancies, reconciliationReports } from '../schema/index.js';

export type ReconciliationReport = typeof reconciliationReports.$inferSelect;
export type StoredDiscrepancy = typeof reconciliationDiscrepancies.$inferSelect;

/** A business day as instants: `from <= t < to`. */
export interface DayWindow {
  from: Date;
  to: Date;
}

/** A Pix the PSP notified (or the reconciliation stored) for the day, with what the ledger booked. */
export interface StoredPixOfDay {
  id: string;
  amount: number;
  /** Set when the reconciliation of that date stored it (no notification had). */
  reconciliationDate: string | null;
  /** Its `collections_clearing` debit (its booking); null while it is not booked. */
  clearingDebit: number | null;
}

/**
 * Every Pix of the PSP the service holds, paid within the day (`paid_at` is the PSP's `horario`,
 * so both sides put a Pix on the same day), with the `collections_clearing` debit that booked it:
 * the loan transaction named by its end-to-end id or, for one that came unmatched, its receipt
 * transaction. One statement, read in the caller's snapshot.
 */
export async function storedPixOfDay(db: DbOrTx, day: DayWindow): Promise<StoredPixOfDay[]> {
  const rows = await db.execute<{
    id: string;
    amount: string;
    reconciliation_date: string | null;
    clearing_debit: string | null;
  }>(sql`
    select r.end_to_end_id as id, r.amount, r.reconciliation_date,
      coalesce(
        (select sum(e.amount) from loan_transactions t
           join ledger_entries e on e.transaction_id = t.id
           where t.loan_id = r.loan_id and t.reference_source = 'pix'
             and t.reference = r.end_to_end_id
             and e.account = 'collections_clearing' and e.direction = 'debit'),
        (select sum(e.amount) from receipt_transactions rt
           join ledger_entries e on e.receipt_transaction_id = rt.id
           where rt.end_to_end_id = r.end_to_end_id and rt.type = 'received'
             and e.account = 'collections_clearing' and e.direction = 'debit')
      ) as clearing_debit
    from received_pix r
    where r.source = 'psp' and r.paid_at >= ${day.from.toISOString()}
      and r.paid_at < ${day.to.toISOString()}`);
  return rows.map((row) => ({
    id: row.id,
    amount: Number(row.amount),
    reconciliationDate: row.reconciliation_date,
    clearingDebit: row.clearing_debit === null ? null : Number(row.clearing_debit),
  }));
}

/** The end-to-end ids of the PSP's Pix the service holds for the day (what a run need not store). */
export async function storedPixIdsOfDay(db: DbOrTx, day: DayWindow): Promise<Set<string>> {
  const rows = await db.execute<{ id: string }>(sql`
    select end_to_end_id as id from received_pix
    where source = 'psp' and paid_at >= ${day.from.toISOString()}
      and paid_at < ${day.to.toISOString()}`);
  return new Set(rows.map((row) => row.id));
}

/** The clearing accounts' movement of the day (production), as `reconciliation_reports` keeps it. */
export interface ClearingOfDay {
  collectionsClearingDebits: number;
  /** The part posted for the PSP's Pix (a Pix's booking or its unmatched arrival). */
  collectionsClearingPixDebits: number;
  disbursementClearingCredits: number;
}

export async function clearingOfDay(db: DbOrTx, day: DayWindow): Promise<ClearingOfDay> {
  const [row] = await db.execute<{ all_debits: string; pix_debits: string; credits: string }>(sql`
    select
      coalesce(sum(e.amount) filter (where e.account = 'collections_clearing'
        and e.direction = 'debit'), 0) as all_debits,
      coalesce(sum(e.amount) filter (where e.account = 'collections_clearing'
        and e.direction = 'debit' and (t.reference_source = 'pix' or rt.type = 'received')), 0)
        as pix_debits,
      coalesce(sum(e.amount) filter (where e.account = 'disbursement_clearing'
        and e.direction = 'credit'), 0) as credits
    from ledger_entries e
      left join loan_transactions t on t.id = e.transaction_id
      left join receipt_transactions rt on rt.id = e.receipt_transaction_id
    where e.environment = 'production'
      and e.account in ('collections_clearing', 'disbursement_clearing')
      and e.occurred_at >= ${day.from.toISOString()} and e.occurred_at < ${day.to.toISOString()}`);
  return {
    collectionsClearingDebits: Number(row?.all_debits ?? 0),
    collectionsClearingPixDebits: Number(row?.pix_debits ?? 0),
    disbursementClearingCredits: Number(row?.credits ?? 0),
  };
}

/**
 * A run of `date` begins (ops' request, or the schedule's): the report is `running` (created if
 * the date was never run, its last figures kept meanwhile) and its run count goes up. Answers it.
 */
export async function beginReconciliationRun(
  db: DbOrTx,
  date: string,
): Promise<ReconciliationReport> {
  const [row] = await db
    .insert(reconciliationReports)
    .values({ date, status: 'running', runs: 1 })
    .onConflictDoUpdate({
      target: reconciliationReports.date,
      set: {
        status: 'running',
        runs: sql`${reconciliationReports.runs} + 1`,
        requestedAt: sql`now()`,
      },
    })
    .returning();
  if (!row) throw new Error(`reconciliation report ${date} not written`);
  return row;
}

/** The figures a run wrote (every total of `reconciliation_reports` but the date's own columns). */
export type ReconciliationFigures = Omit<
  typeof reconciliationReports.$inferInsert,
  'date' | 'status' | 'runs' | 'requestedAt' | 'completedAt' | 'failure'
>;

/**
 * A run's outcome replaces the date's report: figures, status and discrepancies together, under
 * the report's row lock (two runs of a date write one after the other, the later one standing).
 */
export async function writeReconciliationReport(
  tx: DbOrTx,
  date: string,
  status: ReconciliationStatus,
  figures: ReconciliationFigures,
  discrepancies: readonly Discrepancy[],
): Promise<void> {
  await tx
    .insert(reconciliationReports)
    .values({ date, status, runs: 1, ...figures, completedAt: sql`now()` })
    .onConflictDoUpdate({
      target: reconciliationReports.date,
      set: { status, ...figures, failure: null, completedAt: sql`now()` },
    });
  await tx.delete(reconciliationDiscrepancies).where(eq(reconciliationDiscrepancies.date, date));
  // In slices: a day whose notifications all went missing may hold a great many.
  for (let at = 0; at < discrepancies.length; at += 5_000)
    await tx
      .insert(reconciliationDiscrepancies)
      .values(discrepancies.slice(at, at + 5_000).map((d) => ({ date, ...d })));
}

/** The run could not finish (the PSP refused it): the last figures stay, the reason beside. */
export async function markReconciliationFailed(
  db: DbOrTx,
  date: string,
  failure: string,
): Promise<void> {
  await db
    .update(reconciliationReports)
    .set({ status: 'failed', failure: failure.slice(0, 1000) })
    .where(eq(reconciliationReports.date, date));
}

export async function findReconciliationReport(
  db: DbOrTx,
  date: string,
): Promise<{ report: ReconciliationReport; discrepancies: StoredDiscrepancy[] } | undefined> {
  const [report] = await db
    .select()
    .from(reconciliationReports)
    .where(eq(reconciliationReports.date, date));
  if (!report) return undefined;
  const discrepancies = await db
    .select()
    .from(reconciliationDiscrepancies)
    .where(eq(reconciliationDiscrepancies.date, date))
    .orderBy(reconciliationDiscrepancies.kind, reconciliationDiscrepancies.id);
  return { report, discrepancies };
}

/**
 * The latest date with a finished report, its status, and its discrepancies by kind: what
 * `/metrics` exports (`reconciliation_*`).
 */
export async function latestReconciliation(db: DbOrTx): Promise<
  | {
      date: string;
      status: ReconciliationStatus;
      discrepancies: { kind: string; count: number }[];
    }
  | undefined
> {
  const [latest] = await db
    .select({ date: reconciliationReports.date, status: reconciliationReports.status })
    .from(reconciliationReports)
    .where(and(isNotNull(reconciliationReports.completedAt)))
    .orderBy(desc(reconciliationReports.date))
    .limit(1);
  if (!latest) return undefined;
  const discrepancies = await db
    .select({
      kind: reconciliationDiscrepancies.kind,
      count: sql<number>`count(*)::int`,
    })
    .from(reconciliationDiscrepancies)
    .where(eq(reconciliationDiscrepancies.date, latest.date))
    .groupBy(reconciliationDiscrepancies.kind);
  return { ...latest, discrepancies };
}
