import type { RefundInput } from '../../workflows/refund/messages.js';
import type { Tenant } from '../domain/tenant.js';
import type { WorkflowStart } from './outbox.js';
import { workflowIds, workflowTypes } from './workflow-ids.js';

/**
 * The start of a refund's workflow (`refund/{rfd_id}`), written to the outbox in the transaction
 * that makes the money due (an automatic refund, `notBefore` REFUND_AFTER later) or that writes an
 * approved ops refund's devoluções (at once). The id names the refund: starting it twice is one.
 */
export const refundStart = (
  tenant: Tenant,
  input: RefundInput,
  taskQueue: string,
): WorkflowStart => ({
  workflowId: workflowIds.refund(input.refundId),
  workflowType: workflowTypes.refund,
  taskQueue,
  args: [input],
  searchAttributes: {
    PartnerId: tenant.partnerId,
    Environment: tenant.environment,
    LoanId: input.loanId,
  },
  summary: `Refund ${input.refundId} of loan ${input.loanId} by devolução`,
});
