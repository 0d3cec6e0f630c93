/**
 * Pix charges (contract §14): the partner asks for one (or for a withdrawal's), the loan's workflow
 * writes it. The request is checked here first, against the loan as it stands, so a refusal is a
 * 422 or 409 naming the field; the workflow checks the same again under the loan's lock.
 */
import { chargeAmountOf } from './agreements.js';
import { findCharge, type Charge } from '../db/queries/charges.js';
import { findCustomer } from '../db/queries/customers.js';
import { findLoan, type LoanView } from '../db/queries/loans.js';
import { businessDate } from '../domain/business-date.js';
import { newId } from '../domain/ids.js';
import {
  chargeExpiry,
  withdrawalRefusal,
  type ChargeRequest,
  type ChargeScope,
} from '../domain/loans/charges.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems } from '../errors.js';
import { changeLoan } from '../temporal/loan-workflows.js';
import { createChargeUpdate } from '../../workflows/loan/messages.js';
import { clockNow } from './customer-clock.js';
import { loanNotFound, type LoanDeps } from './loan-deps.js';

export const chargeNotFound = (id: string) =>
  problems.notFound('charge_not_found', `No charge ${id}.`);

export interface ChargeCommand {
  scope: Exclude<ChargeScope, 'withdrawal'>;
  amount?: number | undefined;
  expires_at?: string | undefined;
}

async function activeLoan(deps: LoanDeps, tenant: Tenant, loanId: string): Promise<LoanView> {
  const loan = await findLoan(deps.db, tenant, loanId);
  if (!loan) throw loanNotFound(loanId);
  if (loan.status !== 'active')
    throw new ProblemError(
      'invalid_state',
      `The loan is ${loan.status}; only an active loan takes charges.`,
    );
  return loan;
}

const hasCnpj = async (deps: LoanDeps, tenant: Tenant, loan: LoanView) =>
  Boolean((await findCustomer(deps.db, tenant, loan.customerId))?.cnpj);

/** A new charge for the loan, replacing its active one. Answers the charge as written. */
export async function createCharge(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
  command: ChargeCommand,
): Promise<Charge> {
  const loan = await activeLoan(deps, tenant, loanId);
  const now = clockNow(loan, deps.clock());
  const priced = await chargeAmountOf(
    deps.db,
    loan,
    command.scope,
    businessDate(now),
    command.amount,
  );
  if (!priced.ok)
    throw problems.validation([
      {
        path: priced.code === 'nothing_overdue' ? 'body.scope' : 'body.amount',
        code: priced.code,
        message: priced.message,
      },
    ]);
  const expiry = chargeExpiry(
    command.scope,
    now,
    command.expires_at === undefined ? undefined : new Date(command.expires_at),
  );
  if (!expiry.ok)
    throw problems.validation([
      { path: 'body.expires_at', code: 'out_of_range', message: expiry.message },
    ]);
  return written(deps, tenant, loan, {
    chargeId: newId('chg'),
    scope: command.scope,
    ...(command.amount === undefined ? {} : { amount: command.amount }),
    ...(command.expires_at === undefined ? {} : { expiresAt: command.expires_at }),
    hasCnpj: false,
  });
}

/**
 * The borrower withdraws (CDC art. 49): a charge of scope `withdrawal` for the amount released
 * less what was paid, until the window closes — or, when what was paid already reaches the amount
 * released, the loan withdrawn at once (anything paid above it due back). 409 for a customer with
 * a cnpj or after the window.
 */
export async function requestWithdrawal(
  deps: LoanDeps,
  tenant: Tenant,
  loanId: string,
): Promise<{ charge: Charge } | { withdrawn: LoanView }> {
  const loan = await activeLoan(deps, tenant, loanId);
  const company = await hasCnpj(deps, tenant, loan);
  const refusal = withdrawalRefusal(loan, company, clockNow(loan, deps.clock()));
  if (refusal) throw new ProblemError('invalid_state', refusal);
  const chargeId = newId('chg');
  const created = await changeLoan(
    deps,
    loan,
    createChargeUpdate,
    [{ chargeId, scope: 'withdrawal', hasCnpj: company }],
    chargeId,
  );
  if ('withdrawn' in created) {
    const after = await findLoan(deps.db, tenant, loan.id);
    if (!after) throw loanNotFound(loan.id);
    return { withdrawn: after };
  }
  return { charge: await chargeWritten(deps, tenant, created.chargeId) };
}

async function written(
  deps: LoanDeps,
  tenant: Tenant,
  loan: LoanView,
  request: ChargeRequest & { hasCnpj: boolean },
): Promise<Charge> {
  const created = await changeLoan(deps, loan, createChargeUpdate, [request], request.chargeId);
  // Only a withdrawal is ever withdrawn at once.
  if ('withdrawn' in created)
    throw new Error(`loan ${loan.id} withdrawn by a ${request.scope} charge`);
  return chargeWritten(deps, tenant, created.chargeId);
}

async function chargeWritten(deps: LoanDeps, tenant: Tenant, chargeId: string): Promise<Charge> {
  const charge = await findCharge(deps.db, tenant, chargeId);
  if (!charge) throw new Error(`charge ${chargeId} not found after its creation`);
  return charge;
}
