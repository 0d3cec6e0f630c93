import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Tenant } from '../domain/tenant.js';
import {
  customerDeniedSignal,
  type CreditOffersInput,
} from '../../workflows/credit-offers/messages.js';
import { clockAt } from '../../workflows/sandbox-clock/messages.js';
import type { WorkflowStart } from './outbox.js';
import { workflowIds, workflowTypes } from './workflow-ids.js';

export interface OfferTiming {
  /** OFFER_VALIDITY */
  validityMs: number;
  /** OFFER_RENEWAL_DELAY */
  renewalDelayMs: number;
}

/** The outbox entry that starts a customer's credit-offers workflow once the customer is active. */
export function creditOffersStart(
  customer: Tenant & { customerId: string },
  taskQueue: string,
  timing: OfferTiming,
  /** The customer's sandbox clock offset, read by the starting transaction after its lock. */
  clockOffsetMs = 0,
): WorkflowStart {
  const input: CreditOffersInput = {
    customerId: customer.customerId,
    partnerId: customer.partnerId,
    environment: customer.environment,
    offerValidityMs: timing.validityMs,
    renewalDelayMs: timing.renewalDelayMs,
    ...(clockOffsetMs > 0 ? { clock: clockAt(clockOffsetMs) } : {}),
  };
  return {
    workflowId: workflowIds.creditOffers(customer.customerId),
    workflowType: workflowTypes.creditOffers,
    taskQueue,
    args: [input],
    searchAttributes: {
      PartnerId: customer.partnerId,
      Environment: customer.environment,
      CustomerId: customer.customerId,
    },
    summary: `Credit offers of ${customer.customerId} (partner ${customer.partnerId}, ${customer.environment})`,
  };
}

/**
 * Tells the customer's credit-offers workflow that the customer was denied. A customer who never
 * became active has none (and one whose start is still in the outbox checks the status itself
 * before issuing an offer), so a missing or closed workflow is not an error.
 */
export async function signalCustomerDenied(temporal: Client, customerId: string): Promise<void> {
  try {
    await temporal.workflow
      .getHandle(workflowIds.creditOffers(customerId))
      .signal(customerDeniedSignal, { customerId });
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
