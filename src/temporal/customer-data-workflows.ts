import type { Environment } from '../domain/environments.js';
import type { CustomerErasureInput } from '../../workflows/customer-data/messages.js';
import { clockAt } from '../../workflows/sandbox-clock/messages.js';
import type { WorkflowStart } from './outbox.js';
import { workflowIds, workflowTypes } from './workflow-ids.js';

interface CustomerRef {
  customerId: string;
  partnerId: string;
  environment: Environment;
}

const searchAttributes = (ref: CustomerRef) => ({
  PartnerId: ref.partnerId,
  Environment: ref.environment,
  CustomerId: ref.customerId,
});

/** The outbox entry of an erasure's workflow, written with the erasure (contract §15). */
export function customerErasureStart(
  input: Omit<CustomerErasureInput, 'clock'> & { clockOffsetMs: number },
  taskQueue: string,
): WorkflowStart {
  const { clockOffsetMs, ...rest } = input;
  return {
    workflowId: workflowIds.customerErasure(input.customerId),
    workflowType: workflowTypes.customerErasure,
    taskQueue,
    args: [{ ...rest, ...(clockOffsetMs > 0 ? { clock: clockAt(clockOffsetMs) } : {}) }],
    searchAttributes: searchAttributes(input),
    summary: `Erasure of ${input.customerId} (partner ${input.partnerId}, ${input.environment})`,
  };
}

/**
 * The outbox entry of a denied customer's documents' retention, written with the denial:
 * `deleteAt` is the denial plus DENIED_DOCUMENT_RETENTION on the customer's clock.
 */
export function deniedDocumentsStart(
  ref: CustomerRef & { deleteAt: number; clockOffsetMs: number },
  taskQueue: string,
): WorkflowStart {
  return {
    workflowId: workflowIds.deniedDocuments(ref.customerId),
    workflowType: workflowTypes.deniedDocuments,
    taskQueue,
    args: [
      {
        customerId: ref.customerId,
        deleteAt: ref.deleteAt,
        ...(ref.clockOffsetMs > 0 ? { clock: clockAt(ref.clockOffsetMs) } : {}),
      },
    ],
    searchAttributes: searchAttributes(ref),
    summary: `Documents of denied ${ref.customerId} (partner ${ref.partnerId}, ${ref.environment})`,
  };
}
