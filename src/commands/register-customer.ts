import { findCustomerByIdentity, insertCustomer, type Customer } from '../db/queries/customers.js';
import { findErasedIdentity } from '../db/queries/erasure.js';
import { identityHashes } from '../domain/customers/erasure.js';
import { initialKyc } from '../domain/customers/kyc.js';
import { newId } from '../domain/ids.js';
import { ProblemError } from '../errors.js';
import type { Tenant } from '../domain/tenant.js';
import { presentCustomer } from '../presenters/customers.js';
import { onboardingStart } from '../temporal/customer-workflows.js';
import { dispatchWorkflowStart, enqueueWorkflowStart } from '../temporal/outbox.js';
import { recordAndFanOut, startDeliveries } from '../webhooks/fan-out.js';
import type { CustomerDeps } from './customer-deps.js';

/** `customer.created` carries the customer as the API shows it, without `kyc` and timestamps. */
function createdEventData(customer: Customer): Record<string, unknown> {
  const {
    kyc: _kyc,
    created_at: _created,
    updated_at: _updated,
    ...data
  } = presentCustomer(customer);
  return data;
}

export interface Registration {
  cpf: string;
  cnpj: string | null;
  name: string;
  email: string;
  phone: string;
  trading_name: string | null;
  external_id: string | null;
}

/**
 * Registers a customer: the row, its `customer.created` event and its onboarding workflow start,
 * in one transaction. The identity (cpf, cnpj) already registered with the same `external_id`
 * answers the existing customer; with another `external_id`, 409 — also when two requests race,
 * since the unique index decides and the loser reads the winner's row.
 */
export async function registerCustomer(
  deps: CustomerDeps,
  tenant: Tenant,
  input: Registration,
): Promise<{ customer: Customer; created: boolean }> {
  const outcome = await deps.db.transaction(async (tx) => {
    // An identity erased before is recognized by its keyed hash: the new customer names the old.
    const previousCustomerId = await findErasedIdentity(
      tx,
      tenant,
      identityHashes(deps.dataKeys, input),
    );
    const customer = await insertCustomer(tx, {
      id: newId('cust'),
      partnerId: tenant.partnerId,
      environment: tenant.environment,
      status: 'pending_kyc',
      cpf: input.cpf,
      cnpj: input.cnpj,
      name: input.name,
      email: input.email,
      phone: input.phone,
      tradingName: input.trading_name,
      externalId: input.external_id,
      kyc: initialKyc(input.cnpj !== null),
      previousCustomerId: previousCustomerId ?? null,
    });
    if (!customer) {
      const existing = await findCustomerByIdentity(tx, tenant, input);
      if (!existing) throw new Error('identity conflict without an existing customer');
      if (existing.externalId !== input.external_id) {
        throw new ProblemError(
          'customer_already_exists',
          `A customer with this cpf/cnpj exists (${existing.id}) with a different external_id.`,
        );
      }
      return { customer: existing, created: false, outbox: undefined, deliveries: [] };
    }
    const deliveries = await recordAndFanOut(
      tx,
      tenant,
      [
        {
          id: newId('evt'),
          type: 'customer.created',
          createdAt: customer.createdAt,
          data: createdEventData(customer),
        },
      ],
      deps.taskQueue,
    );
    const outbox = await enqueueWorkflowStart(
      tx,
      onboardingStart(customer, deps.taskQueue, deps.sandboxReviewDelayMs),
    );
    return { customer, created: true, outbox, deliveries };
  });
  if (outcome.outbox) await dispatchWorkflowStart(deps, outcome.outbox);
  await startDeliveries(deps, outcome.deliveries);
  return { customer: outcome.customer, created: outcome.created };
}
