import type { LoanView } from '../db/queries/loans.js';
import type { RemindersInput } from '../../workflows/reminders/messages.js';
import { clockAt } from '../../workflows/sandbox-clock/messages.js';
import type { WorkflowStart } from './outbox.js';
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
