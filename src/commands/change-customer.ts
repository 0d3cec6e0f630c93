import { findCustomer, findCustomerByIdentity, type Customer } from '../db/queries/customers.js';
import type { ReviewItem } from '../domain/customers/kyc.js';
import { ProblemError, problems } from '../errors.js';
import type { Tenant } from '../domain/tenant.js';
import { changeCustomer } from '../temporal/customer-workflows.js';
import {
  correctDataUpdate,
  denyUpdate,
  reviewUpdate,
  type CustomerFieldChanges,
} from '../../workflows/customer-onboarding/messages.js';
import type { CustomerDeps } from './customer-deps.js';

async function load(deps: CustomerDeps, tenant: Tenant, customerId: string): Promise<Customer> {
  const customer = await findCustomer(deps.db, tenant, customerId);
  if (!customer) throw problems.notFound('customer_not_found', `No customer ${customerId}.`);
  return customer;
}

async function reload(deps: CustomerDeps, customer: Customer): Promise<Customer> {
  return load(
    deps,
    { partnerId: customer.partnerId, environment: customer.environment },
    customer.id,
  );
}

/** Review decisions from ops (production) or from a sandbox partner; answers the customer after them. */
export async function reviewCustomer(
  deps: CustomerDeps,
  tenant: Tenant,
  customerId: string,
  items: ReviewItem[],
): Promise<Customer> {
  const customer = await load(deps, tenant, customerId);
  await changeCustomer(deps, customer, reviewUpdate, [{ items }]);
  return reload(deps, customer);
}

export async function denyCustomer(
  deps: CustomerDeps,
  tenant: Tenant,
  customerId: string,
  reason: string,
): Promise<Customer> {
  const customer = await load(deps, tenant, customerId);
  if (customer.status === 'denied')
    throw new ProblemError('invalid_state', 'The customer is already denied.');
  await changeCustomer(deps, customer, denyUpdate, [{ reason }]);
  return reload(deps, customer);
}

/**
 * A partner's PATCH. The workflow writes it, so a field with a `pending_correction` item goes back
 * to review in the same change; a new cnpj must not be another customer's identity.
 */
export async function updateCustomerData(
  deps: CustomerDeps,
  tenant: Tenant,
  customerId: string,
  fields: CustomerFieldChanges,
): Promise<Customer> {
  const customer = await load(deps, tenant, customerId);
  if (customer.status === 'denied')
    throw new ProblemError('invalid_state', 'The customer is denied.');
  if (fields.cnpj !== undefined && fields.cnpj !== customer.cnpj) {
    const holder = await findCustomerByIdentity(deps.db, tenant, {
      cpf: customer.cpf,
      cnpj: fields.cnpj,
    });
    if (holder)
      throw new ProblemError('customer_already_exists', `Customer ${holder.id} has this cpf/cnpj.`);
  }
  await changeCustomer(deps, customer, correctDataUpdate, [
    { fields, at: deps.clock().toISOString() },
  ]);
  return reload(deps, customer);
}
