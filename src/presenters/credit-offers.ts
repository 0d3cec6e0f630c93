import type { z } from 'zod';
import type { CreditOffer, Simulation } from '../db/queries/credit-offers.js';
import { annualInterestRate, type ScheduleRow } from '../domain/credit/simulation.js';
import type { creditOfferSchema, simulationSchema } from '../http/routes/credit-offers/schema.js';

/** The public offer: the API's answer and every `credit_offer.*` event's data. */
export function presentCreditOffer(offer: CreditOffer): z.infer<typeof creditOfferSchema> {
  return {
    id: offer.id,
    customer_id: offer.customerId,
    status: offer.status,
    currency: 'BRL',
    approved_amount: offer.approvedAmount,
    min_amount: offer.minAmount,
    monthly_interest_rate: Number(offer.monthlyInterestRate),
    annual_interest_rate: annualInterestRate(offer.monthlyInterestRate),
    min_installments: offer.minInstallments,
    max_installments: offer.maxInstallments,
    valid_until: offer.validUntil.toISOString(),
    created_at: offer.createdAt.toISOString(),
    updated_at: offer.updatedAt.toISOString(),
  };
}

/** A schedule row as simulations and loans show it, in the contract's order. */
export const presentScheduleRow = (row: ScheduleRow) => ({
  number: row.number,
  due_date: row.due_date,
  installment_amount: row.installment_amount,
  principal_amount: row.principal_amount,
  interest_amount: row.interest_amount,
  balance_amount: row.balance_amount,
});

/** The figures in the contract's order (jsonb keeps keys in an order of its own). */
export function presentSimulation(simulation: Simulation): z.infer<typeof simulationSchema> {
  const figures = simulation.figures;
  return {
    id: simulation.id,
    credit_offer_id: simulation.creditOfferId,
    customer_id: simulation.customerId,
    currency: 'BRL',
    requested_amount: figures.requested_amount,
    iof_amount: figures.iof_amount,
    principal_amount: figures.principal_amount,
    installments: figures.installments,
    installment_amount: figures.installment_amount,
    total_amount: figures.total_amount,
    total_interest_amount: figures.total_interest_amount,
    monthly_interest_rate: figures.monthly_interest_rate,
    annual_interest_rate: figures.annual_interest_rate,
    cet_monthly: figures.cet_monthly,
    cet_annual: figures.cet_annual,
    release_date: figures.release_date,
    first_due_date: figures.first_due_date,
    schedule: figures.schedule.map(presentScheduleRow),
    valid_until: simulation.validUntil.toISOString(),
    created_at: simulation.createdAt.toISOString(),
  };
}
