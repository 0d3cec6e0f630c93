/**
 * The refinancing steps of `POST /v3/loans {refinances}` (contract §17; docs/refinancing.md):
 * which offer it is made on, its pricing checked against the simulation, the old loans read
 * again under their locks, and the `loan_refinancings` rows written with the loan.
 */
import type { DbOrTx } from '../db/client.js';
import type { Customer } from '../db/queries/customers.js';
import type { Simulation } from '../db/queries/credit-offers.js';
import { insertRefinancings } from '../db/queries/refinancings.js';
import simulateHere from '../domain/credit/simulation-worker.js';
import type { SimulationFigures } from '../domain/credit/simulation.js';
import type { Tenant } from '../domain/tenant.js';
import { ProblemError } from '../errors.js';
import type { LoanDeps } from './loan-deps.js';
import { refinancingTerms, type RefinancingTerms } from './refinancing.js';

/**
 * A refinancing is made on the offer its refinanced loan accepted: while a loan repays, the
 * customer's one live offer is that loan's (decisions, "Credit offers"). 409
 * `credit_offer_unavailable` for any other.
 */
export function assertRefinancingOffer(
  offer: { status: string; loanId: string | null; spentAt: Date | null },
  refinances: readonly string[],
): void {
  if (
    offer.status === 'accepted' &&
    !offer.spentAt &&
    offer.loanId &&
    refinances.includes(offer.loanId)
  )
    return;
  throw new ProblemError(
    'credit_offer_unavailable',
    offer.status === 'accepted' && offer.loanId && !offer.spentAt
      ? `The credit offer is loan ${offer.loanId}'s, which this loan does not refinance.`
      : `The credit offer is ${offer.status}: a refinancing is made on the offer its refinanced loan accepted.`,
  );
}

/** The figures a refinancing's pricing gives, as the simulation stored them. */
const samePricing = (a: SimulationFigures, b: SimulationFigures) =>
  a.principal_amount === b.principal_amount &&
  a.iof_amount === b.iof_amount &&
  a.requested_amount === b.requested_amount &&
  a.schedule.length === b.schedule.length &&
  a.schedule.every((row, j) => row.installment_amount === b.schedule[j]?.installment_amount);

const refinancingChanged = (detail: string) =>
  new ProblemError('refinancing_changed', `${detail} Simulate again.`);

/**
 * The old loans checked and their payoffs on the simulation's release date, and the simulation's
 * figures priced again by §17's IOF from its own inputs: the loan takes the simulation's figures
 * only when they are the refinancing's (409 `refinancing_changed` otherwise: a payment since the
 * simulation, or a simulation not priced for these loans).
 */
export async function priceRefinancing(
  deps: Pick<LoanDeps, 'db' | 'iof'>,
  tenant: Tenant,
  customer: Pick<Customer, 'id' | 'cnpj'>,
  simulation: Simulation,
  refinances: readonly string[],
): Promise<RefinancingTerms> {
  const { figures } = simulation;
  const terms = await refinancingTerms(deps.db, tenant, {
    customerId: customer.id,
    ids: refinances,
    requestedAmount: figures.requested_amount,
    releaseDate: figures.release_date,
  });
  const priced = simulateHere({
    requestedAmount: figures.requested_amount,
    installments: figures.installments,
    monthlyInterestRate: String(figures.monthly_interest_rate),
    releaseDate: figures.release_date,
    firstDueDate: figures.first_due_date,
    borrower: customer.cnpj ? 'mei' : 'individual',
    iof: deps.iof,
    refinanced: terms.balances.map((balance) => ({
      ...balance,
      paidThroughDays: balance.paidThroughDays.toString(),
    })),
  });
  if (!samePricing(priced, figures))
    throw refinancingChanged(
      `Simulation ${simulation.id} is not priced for refinancing ${refinances.join(', ')} as they stand (IOF ${priced.iof_amount} centavos, not ${figures.iof_amount}).`,
    );
  return terms;
}

/**
 * The old loans read again under their row locks, in the loan's transaction: each must pass the
 * checks still, with the payoff priced (a payment committed since changes it: 409
 * `refinancing_changed`). The locks hold until the loan and its refinancings are written.
 */
export async function holdRefinancedLoans(
  tx: DbOrTx,
  tenant: Tenant,
  customerId: string,
  simulation: Simulation,
  priced: RefinancingTerms,
): Promise<void> {
  const now = await refinancingTerms(tx, tenant, {
    customerId,
    ids: priced.payoffs.map((payoff) => payoff.loanId),
    requestedAmount: simulation.figures.requested_amount,
    releaseDate: simulation.figures.release_date,
    lock: true,
  });
  for (const [k, payoff] of now.payoffs.entries())
    if (payoff.payoffAmount !== priced.payoffs[k]!.payoffAmount)
      throw refinancingChanged(
        `Loan ${payoff.loanId}'s payoff on ${simulation.figures.release_date} is now ${payoff.payoffAmount} centavos, not ${priced.payoffs[k]!.payoffAmount}.`,
      );
}

/** The loan's refinancings, `pending` until its release (the live index refuses a second). */
export async function recordRefinancings(
  tx: DbOrTx,
  tenant: Tenant,
  loanId: string,
  simulation: Simulation,
  priced: RefinancingTerms,
): Promise<void> {
  await insertRefinancings(
    tx,
    priced.payoffs.map((payoff) => ({
      loanId,
      refinancedLoanId: payoff.loanId,
      partnerId: tenant.partnerId,
      environment: tenant.environment,
      payoffAmount: payoff.payoffAmount,
      payoffDate: simulation.figures.release_date,
      paidThroughDays: payoff.paidThroughDays.toString(),
    })),
  );
}
