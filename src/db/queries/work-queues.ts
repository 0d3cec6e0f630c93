import { and, asc, desc, eq, gt, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import {
  customerErasures,
  customers,
  documents,
  loans,
  reconciliationReports,
} from '../schema/index.js';
import type { Erasure } from './erasure.js';
import type { ReconciliationReport } from './reconciliation.js';
import type { Customer } from './customers.js';
import type { Document } from './documents.js';
import type { Loan } from './loans.js';

/**
 * The back office's work queues (contract §18): what waits for staff across every partner, in
 * production — the sandbox's partners decide their own. Each is oldest first, `limit + 1` rows
 * past the cursor (an id; `undefined` when it names nothing in the queue), as the ops API's lists.
 */

/** Production customers whose KYC waits for a reviewer, or whose credit waits for a decision. */
export async function customersAwaitingReview(
  db: DbOrTx,
  params: { limit: number; startingAfter?: string | undefined },
): Promise<Customer[] | undefined> {
  const waiting = and(
    eq(customers.environment, 'production'),
    isNull(customers.erasedAt),
    or(
      eq(customers.status, 'under_review'),
      and(
        sql`${customers.creditAnalysis}->>'status' = 'manual_review_required'`,
        sql`${customers.status} <> 'denied'`,
      ),
    ),
  );
  return afterCursor(db, customers, waiting, params, async (after) =>
    db
      .select()
      .from(customers)
      .where(and(waiting, after))
      .orderBy(asc(customers.updatedAt), asc(customers.id))
      .limit(params.limit + 1),
  );
}

/** Production loans signed and waiting for their money (`processing`), claimed or not. */
export async function loansAwaitingDisbursement(
  db: DbOrTx,
  params: { limit: number; startingAfter?: string | undefined },
): Promise<Loan[] | undefined> {
  const waiting = and(
    eq(loans.environment, 'production'),
    eq(loans.status, 'processing'),
    isNull(loans.erasedAt),
  );
  return afterCursor(db, loans, waiting, params, async (after) =>
    db
      .select()
      .from(loans)
      .where(and(waiting, after))
      .orderBy(asc(loans.createdAt), asc(loans.id))
      .limit(params.limit + 1),
  );
}

/** A customer's documents, newest first (a resubmission comes before what it replaced). */
export async function documentsOfCustomer(db: DbOrTx, customerId: string): Promise<Document[]> {
  return db
    .select()
    .from(documents)
    .where(eq(documents.customerId, customerId))
    .orderBy(desc(documents.createdAt), desc(documents.id));
}

/** Ops only: one document of a customer, named by both ids. */
export async function findDocumentForOps(
  db: DbOrTx,
  customerId: string,
  documentId: string,
): Promise<Document | undefined> {
  const [row] = await db
    .select()
    .from(documents)
    .where(and(eq(documents.customerId, customerId), eq(documents.id, documentId)))
    .limit(1);
  return row;
}

type Queued = typeof customers | typeof loans;

/** Rows past the cursor's (sort key, id), the cursor found within the same queue. */
async function afterCursor<Row>(
  db: DbOrTx,
  table: Queued,
  waiting: SQL | undefined,
  params: { startingAfter?: string | undefined },
  read: (after: SQL | undefined) => Promise<Row[]>,
): Promise<Row[] | undefined> {
  if (params.startingAfter === undefined) return read(undefined);
  const sortColumn = table === customers ? customers.updatedAt : loans.createdAt;
  const idColumn = table === customers ? customers.id : loans.id;
  const [cursor] = await db
    .select({ sortValue: sortColumn, id: idColumn })
    .from(table)
    .where(and(waiting, eq(idColumn, params.startingAfter)))
    .limit(1);
  if (!cursor) return undefined;
  return read(
    or(
      gt(sortColumn, cursor.sortValue),
      and(eq(sortColumn, cursor.sortValue), gt(idColumn, cursor.id)),
    ),
  );
}

/**
 * Erasures (LGPD art. 18), newest first, `limit + 1` past the cursor (a customer id; `undefined`
 * when it names no erasure). The ops API reads one customer's; the back office lists them.
 */
export async function recentErasures(
  db: DbOrTx,
  params: { limit: number; startingAfter?: string | undefined },
): Promise<Erasure[] | undefined> {
  let after: SQL | undefined;
  if (params.startingAfter !== undefined) {
    const [cursor] = await db
      .select({ erasedAt: customerErasures.erasedAt, id: customerErasures.customerId })
      .from(customerErasures)
      .where(eq(customerErasures.customerId, params.startingAfter))
      .limit(1);
    if (!cursor) return undefined;
    after = or(
      lt(customerErasures.erasedAt, cursor.erasedAt),
      and(
        eq(customerErasures.erasedAt, cursor.erasedAt),
        lt(customerErasures.customerId, cursor.id),
      ),
    );
  }
  return db
    .select()
    .from(customerErasures)
    .where(after)
    .orderBy(desc(customerErasures.erasedAt), desc(customerErasures.customerId))
    .limit(params.limit + 1);
}

/** The reconciliation reports of the latest business dates, newest first. */
export async function recentReconciliations(
  db: DbOrTx,
  limit: number,
): Promise<Pick<ReconciliationReport, 'date' | 'status' | 'runs' | 'completedAt'>[]> {
  return db
    .select({
      date: reconciliationReports.date,
      status: reconciliationReports.status,
      runs: reconciliationReports.runs,
      completedAt: reconciliationReports.completedAt,
    })
    .from(reconciliationReports)
    .orderBy(desc(reconciliationReports.date))
    .limit(limit);
}
