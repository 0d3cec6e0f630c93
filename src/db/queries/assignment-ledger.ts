/**
 * The ledger of a sale's money between the lender and its buyer (contract §19,
 * docs/assignments.md, "The money of the sale"): the entries of an assignment transaction (the
 * buyer's payment of the price, a day's remittance to the buyer), and the reconciliation's checks
 * of them — `npm run ledger:check` runs them with the rest (`reconcileLedger`).
 */
import { sql } from 'drizzle-orm';
import {
  isBalanced,
  UnbalancedTransactionError,
  type LedgerEntry,
} from '../../domain/ledger/postings.js';
import type { DbOrTx } from '../client.js';
import { ledgerEntries } from '../schema/index.js';
import type { LedgerFinding } from './ledger.js';

/**
 * Posts an assignment transaction's entries, in the transaction that writes it (production's:
 * only production loans are sold). As `postEntries`: refused unless balanced, checked at commit.
 */
export async function postAssignmentEntries(
  tx: DbOrTx,
  transaction: { id: string; occurredAt: Date },
  entries: readonly LedgerEntry[],
): Promise<void> {
  if (!isBalanced(entries)) throw new UnbalancedTransactionError(entries);
  await tx.insert(ledgerEntries).values(
    entries.map((entry) => ({
      assignmentTransactionId: transaction.id,
      environment: 'production' as const,
      account: entry.account,
      direction: entry.direction,
      amount: entry.amount,
      occurredAt: transaction.occurredAt,
    })),
  );
}

/**
 * What does not hold of the sales' money: `assignment_receivable` holds the prices of the batches
 * settled and not yet paid; a batch's receivable (its loans' sales less the buyer's payment) is
 * its price until paid and 0 after; what was remitted to a batch's buyer never exceeds what its
 * loans collected for the buyer (`payable_to_assignee` never below 0 by a remittance).
 */
export async function assignmentFindings(db: DbOrTx): Promise<LedgerFinding[]> {
  const findings: LedgerFinding[] = [];
  const batches = await db.execute<{
    id: string;
    price: string;
    paid: boolean;
    receivable: string;
    collected: string;
    remitted: string;
  }>(sql`
    with moves as (
      select al.assignment_id, e.account, e.amount, e.direction, false as remittance
        from ledger_entries e
        join assignment_loans al on al.loan_id = e.loan_id and al.live
        where e.account in ('assignment_receivable', 'payable_to_assignee')
      union all
      select t.assignment_id, e.account, e.amount, e.direction, t.type = 'remitted'
        from ledger_entries e
        join assignment_transactions t on t.id = e.assignment_transaction_id
    )
    select a.id, a.price,
      exists (select 1 from assignment_transactions t
               where t.assignment_id = a.id and t.type = 'price_received') as paid,
      coalesce(sum(case when m.direction = 'debit' then m.amount else -m.amount end)
        filter (where m.account = 'assignment_receivable'), 0) as receivable,
      coalesce(sum(case when m.direction = 'credit' then m.amount else -m.amount end)
        filter (where m.account = 'payable_to_assignee' and not m.remittance), 0) as collected,
      coalesce(sum(m.amount) filter (where m.remittance and m.direction = 'debit'), 0) as remitted
    from assignments a
    left join moves m on m.assignment_id = a.id
    where a.status = 'settled'
    group by a.id, a.price
    order by a.id`);
  let unpaid = 0;
  for (const batch of batches) {
    const price = Number(batch.price);
    const expected = batch.paid ? 0 : price;
    if (!batch.paid) unpaid += price;
    if (Number(batch.receivable) !== expected)
      findings.push({
        check: 'assignment_price_settles_receivable',
        subject: batch.id,
        message: `assignment_receivable holds ${batch.receivable} centavos of the batch; sold for ${price}, ${batch.paid ? 'its price received' : 'its price not received'}: ${expected} expected`,
      });
    const remitted = Number(batch.remitted);
    if (remitted > 0 && remitted > Number(batch.collected))
      findings.push({
        check: 'payable_to_assignee_not_negative',
        subject: batch.id,
        message: `${remitted} centavos remitted to the buyer; its loans collected ${batch.collected} for it`,
      });
  }
  const signed = sql<string>`coalesce(sum(case when ${ledgerEntries.direction} = 'debit' then ${ledgerEntries.amount} else -${ledgerEntries.amount} end), 0)`;
  const [receivable] = await db
    .select({ balance: signed })
    .from(ledgerEntries)
    .where(sql`${ledgerEntries.account} = 'assignment_receivable'`);
  if (Number(receivable?.balance ?? 0) !== unpaid)
    findings.push({
      check: 'assignment_receivable_matches_sales',
      subject: null,
      message: `assignment_receivable holds ${receivable?.balance ?? 0} centavos; the batches settled and not yet paid were sold for ${unpaid}`,
    });
  return findings;
}
