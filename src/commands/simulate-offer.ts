import {
  findCreditOfferForPricing,
  insertSimulation,
  type Simulation,
} from '../db/queries/credit-offers.js';
import type { Db } from '../db/client.js';
import { addDays, businessDate } from '../domain/business-date.js';
import type { IofRates } from '../domain/credit/simulation.js';
import type { SimulationPool } from '../domain/credit/simulation-pool.js';
import { newId } from '../domain/ids.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError, problems, type FieldError } from '../errors.js';
import { clockNow } from './customer-clock.js';
import { findLoan } from '../db/queries/loans.js';
import { refinancingTerms } from './refinancing.js';

export interface SimulationDeps {
  db: Db;
  iof: IofRates;
  clock: () => Date;
  /** Where the math runs: long simulations off the event loop. */
  simulations: SimulationPool;
}

export interface SimulationRequest {
  amount: number;
  installments: number;
  first_due_date?: string | undefined;
}

/** How long a simulation can be turned into a loan, never past its offer. */
const SIMULATION_VALIDITY_MS = 24 * 60 * 60 * 1000;
/** The first installment falls 7 to 45 days after release; 30 by default. */
export const FIRST_DUE_DAYS = { min: 7, max: 45, default: 30 } as const;

export const creditOfferNotFound = (id: string) =>
  problems.notFound('credit_offer_not_found', `No credit offer ${id}.`);

/**
 * Prices a request against an available offer and stores the result. The offer's status is read,
 * not changed: accepting it is the loan's business (through the offer's workflow), which checks it
 * again. The money is assumed released today (São Paulo).
 */
export async function simulateOffer(
  deps: SimulationDeps,
  tenant: Tenant,
  offerId: string,
  request: SimulationRequest,
): Promise<Simulation> {
  const offer = await findCreditOfferForPricing(deps.db, tenant, offerId);
  if (!offer) throw creditOfferNotFound(offerId);
  // Validity, the release date and the first due date's window are read off the customer's clock.
  const now = clockNow(offer, deps.clock());
  // Contract §17: while a loan repays, the customer's offer is that loan's; simulated, it prices
  // the loan's refinancing (docs/refinancing.md), whatever its `valid_until`.
  const refinanced = await refinancedByOffer(deps.db, tenant, offer);
  if (!refinanced && (offer.status !== 'available' || now >= offer.validUntil)) {
    const status = offer.status === 'available' ? 'expired' : offer.status;
    throw new ProblemError('credit_offer_unavailable', `The credit offer is ${status}.`);
  }

  const releaseDate = businessDate(now);
  const firstDueDate = request.first_due_date ?? addDays(releaseDate, FIRST_DUE_DAYS.default);
  const errors: FieldError[] = [];
  if (request.amount < offer.minAmount || request.amount > offer.approvedAmount)
    errors.push({
      path: 'body.amount',
      code: 'out_of_range',
      message: `Must be between ${offer.minAmount} and ${offer.approvedAmount} centavos for this offer.`,
    });
  if (request.installments < offer.minInstallments || request.installments > offer.maxInstallments)
    errors.push({
      path: 'body.installments',
      code: 'out_of_range',
      message: `Must be between ${offer.minInstallments} and ${offer.maxInstallments} for this offer.`,
    });
  const earliest = addDays(releaseDate, FIRST_DUE_DAYS.min);
  const latest = addDays(releaseDate, FIRST_DUE_DAYS.max);
  if (firstDueDate < earliest || firstDueDate > latest)
    errors.push({
      path: 'body.first_due_date',
      code: 'out_of_range',
      message: `Must be between ${earliest} and ${latest} (7 to 45 days after today, ${releaseDate}).`,
    });
  if (errors.length > 0) throw problems.validation(errors);

  const refinancing = refinanced
    ? await refinancingTerms(deps.db, tenant, {
        customerId: offer.customerId,
        ids: [refinanced],
        requestedAmount: request.amount,
        releaseDate,
      })
    : undefined;
  const figures = await deps.simulations.simulate({
    requestedAmount: request.amount,
    installments: request.installments,
    monthlyInterestRate: offer.monthlyInterestRate,
    releaseDate,
    firstDueDate,
    borrower: offer.customerHasCnpj ? 'mei' : 'individual',
    iof: deps.iof,
    ...(refinancing
      ? {
          refinanced: refinancing.balances.map((balance) => ({
            ...balance,
            paidThroughDays: balance.paidThroughDays.toString(),
          })),
        }
      : {}),
  });
  const expiry = refinanced
    ? now.getTime() + SIMULATION_VALIDITY_MS
    : Math.min(now.getTime() + SIMULATION_VALIDITY_MS, offer.validUntil.getTime());
  return insertSimulation(deps.db, {
    id: newId('sim'),
    partnerId: tenant.partnerId,
    environment: tenant.environment,
    creditOfferId: offer.id,
    customerId: offer.customerId,
    figures,
    validUntil: new Date(expiry),
  });
}

/**
 * The loan whose refinancing a simulation of this offer prices: the offer's loan when the offer is
 * `accepted`, not spent, and its loan `active` (contract §17). Otherwise none.
 */
export async function refinancedByOffer(
  db: Db,
  tenant: Tenant,
  offer: { status: string; loanId: string | null; spentAt: Date | null },
): Promise<string | undefined> {
  if (offer.status !== 'accepted' || !offer.loanId || offer.spentAt) return undefined;
  const loan = await findLoan(db, tenant, offer.loanId);
  return loan?.status === 'active' ? loan.id : undefined;
}
