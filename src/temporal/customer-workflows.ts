import type { Client } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { Customer } from '../db/queries/customers.js';
import { ProblemError } from '../errors.js';
import type { OnboardingInput } from '../../workflows/customer-onboarding/messages.js';
import { updateWithStart, type WorkflowStart } from './outbox.js';
import { updateProblem } from './update-problems.js';
import { workflowIds, workflowTypes } from './workflow-ids.js';

export function onboardingInput(customer: Customer, sandboxReviewDelayMs: number): OnboardingInput {
  return {
    customerId: customer.id,
    partnerId: customer.partnerId,
    environment: customer.environment,
    externalId: customer.externalId,
    initial: { status: customer.status, kyc: customer.kyc },
    sandboxReviewDelayMs: customer.environment === 'sandbox' ? sandboxReviewDelayMs : null,
  };
}

const onboardingSearchAttributes = (customer: Customer) => ({
  PartnerId: customer.partnerId,
  Environment: customer.environment,
  CustomerId: customer.id,
});

const onboardingSummary = (customer: Customer) =>
  `Onboarding of ${customer.id} (partner ${customer.partnerId}, ${customer.environment})`;

/** The outbox entry that starts a new customer's onboarding after the registration commits. */
export function onboardingStart(
  customer: Customer,
  taskQueue: string,
  sandboxReviewDelayMs: number,
): WorkflowStart {
  return {
    workflowId: workflowIds.customerOnboarding(customer.id),
    workflowType: workflowTypes.customerOnboarding,
    taskQueue,
    args: [onboardingInput(customer, sandboxReviewDelayMs)],
    searchAttributes: onboardingSearchAttributes(customer),
    summary: onboardingSummary(customer),
  };
}

/**
 * Hands a change to the customer's onboarding workflow and waits until it is written. Starts the
 * workflow if its outbox start has not happened yet (update-with-start), so a change never waits on
 * the sweeper. Rule violations come back as the matching problem: 409 `invalid_state` both for an
 * item the customer does not owe and for one whose state forbids the change.
 */
export async function changeCustomer<Args extends unknown[]>(
  deps: { temporal: Client; taskQueue: string; sandboxReviewDelayMs: number },
  customer: Customer,
  update: UpdateDefinition<void, Args>,
  args: Args,
): Promise<void> {
  try {
    await updateWithStart(
      deps.temporal,
      onboardingStart(customer, deps.taskQueue, deps.sandboxReviewDelayMs),
      update,
      args,
    );
  } catch (error) {
    throw toProblem(error, customer);
  }
}

const invalidState = (detail: string) => new ProblemError('invalid_state', detail);

/** A customer workflow's failure as the partner reads it (exported for its tests). */
export function toProblem(error: unknown, customer: Pick<Customer, 'status'>): unknown {
  return updateProblem(error, {
    workflow: 'The customer’s workflow',
    // Only a closed workflow refuses: the customer is denied, which is final.
    closed: () =>
      invalidState(`The customer is ${customer.status === 'denied' ? 'denied' : 'closed'}.`),
    byType: {
      // The schema admits only real item types, so one this customer does not owe (or no longer
      // owes) is refused for its state, like an item that is not open.
      unknown_type: invalidState,
      invalid_state: invalidState,
      customer_already_exists: (message) => new ProblemError('customer_already_exists', message),
    },
  });
}
