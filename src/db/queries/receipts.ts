import { and, eq, sql } from 'drizzle-orm';
import { unidentifiedReceiptEntries } from '../../domain/ledger/postings.js';
import type { DbOrTx } from '../client.js';
import { receiptTransactions, receivedPix, type ReceiptTransactionType } from '../schema/index.js';
import { postReceiptEntries } from './ledger.js';

export type ReceiptTransaction = typeof receiptTransactions.$inferSelect;

/**
 * One receipt transaction of a Pix no loan claims (its arrival, its return), keyed by the Pix and
 * its type: undefined when that step was written already (a retry writes nothing twice).
 */
export async function insertReceiptTransaction(
  tx: DbOrTx,
  row: typeof receiptTransactions.$inferInsert,
): Promise<ReceiptTransaction | undefined> {
  const [written] = await tx
    .insert(receiptTransactions)
    .values(row)
    .onConflictDoNothing()
    .returning();
  return written;
}

/** The receipt transaction of a Pix of one type, if it was written. */
export async function findReceiptTransaction(
  db: DbOrTx,
  endToEndId: string,
  type: ReceiptTransactionType,
): Promise<ReceiptTransaction | undefined> {
  const [row] = await db
    .select()
    .from(receiptTransactions)
    .where(and(eq(receiptTransactions.endToEndId, endToEndId), eq(receiptTransactions.type, type)));
  return row;
}

/**
 * Posts the arrival of any unmatched Pix whose money is not in the ledger yet — stored by an API of
 * the release before this one while a deploy rolled (this release posts it as it stores it, and the
 * migration posted those stored before). Dated as they would have been; answers how many. One
 * transaction: the entries balance at commit. Run by the worker's housekeeping.
 */
export async function postUnpostedReceipts(db: DbOrTx): Promise<number> {
  return db.transaction(async (tx) => {
    const posted = await tx.execute<{ id: string }>(sql`
      insert into ${receiptTransactions} (id, end_to_end_id, environment, type, amount, occurred_at)
      select 'txn_' || md5('received:' || p.end_to_end_id), p.end_to_end_id, 'production',
             'received', p.amount, least(p.paid_at, p.received_at)
        from ${receivedPix} p
       where p.status = 'unmatched'
         and not exists (select 1 from ${receiptTransactions} r
                          where r.end_to_end_id = p.end_to_end_id and r.type = 'received')
      on conflict do nothing
      returning id`);
    for (const { id } of posted) {
      const [receipt] = await tx
        .select()
        .from(receiptTransactions)
        .where(eq(receiptTransactions.id, id));
      await postReceiptEntries(tx, receipt!, unidentifiedReceiptEntries(receipt!.amount));
    }
    return posted.length;
  });
}
