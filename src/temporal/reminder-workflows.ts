import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { findLoanForOps, type LoanView } from '../db/queries/loans.js';
import type { RemindersInput } from '../../workflows/reminders/messages.js';
import { clockAt } from '../../workflows/sandbox-clock/messages.js';
import { enqueueWorkflowStarts, type WorkflowStart } from './outbox.js';
import { workflowIds, workflowTypes } from './workflow-ids.js';

/**
 * The outbox entry that starts a loan's reminders workflow (contract §17), written in the
 * transaction that makes the loan `active`; on the customer's clock as it reads then.
 */
export function remindersStart(loan: LoanView, taskQueue: string): WorkflowStart {
  const input: RemindersInput = {
    loanId: loan.id,
    customerId: loan.customerId,
    partnerId: loan.partnerId,
    environment: loan.environment,
    ...(loan.clockOffsetMs > 0 ? { clock: clockAt(loan.clockOffsetMs) } : {}),
  };
  return {
    workflowId: workflowIds.reminders(loan.id),
    workflowType: workflowTypes.reminders,
    taskQueue,
    args: [input],
    searchAttributes: {
      PartnerId: loan.partnerId,
      Environment: loan.environment,
      CustomerId: loan.customerId,
      LoanId: loan.id,
    },
    summary: `Reminders of loan ${loan.id} (partner ${loan.partnerId}, ${loan.environment})`,
  };
}

/** How many loans one round of `queueMissingReminders` looks at. */
const MISSING_REMINDERS_PER_ROUND = 500;

/**
 * Active loans with no reminders workflow queued: those the previous release made active during a
 * rolling deploy (its disbursement wrote no reminders start), or after a rollback to it. The
 * worker's housekeeping queues their start through the outbox, as the migration did for the loans
 * active before reminders existed; a start that finds the workflow already there counts as
 * started. Returns how many it queued.
 */
export async function queueMissingReminders(db: Db, taskQueue: string): Promise<number> {
  const missing = await db.execute<{ id: string }>(sql`
    select l.id from loans l
    where l.status = 'active'
      and not exists (
        select 1 from workflow_outbox o where o.workflow_id = 'reminders/' || l.id
      )
    limit ${MISSING_REMINDERS_PER_ROUND}`);
  const starts: WorkflowStart[] = [];
  for (const { id } of missing) {
    const loan = await findLoanForOps(db, id);
    if (loan?.status === 'active') starts.push(remindersStart(loan, taskQueue));
  }
  await enqueueWorkflowStarts(db, starts);
  return starts.length;
}
