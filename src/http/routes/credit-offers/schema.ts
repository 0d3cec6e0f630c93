import { z } from 'zod';
import { creditOfferStatuses } from '../../../domain/credit/offers.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';

// The one id helper (its description names the record).
const id = idField;
const centavos = (description: string) => z.int().min(0).meta({ description });
const rate = (description: string) => z.number().min(0).meta({ description });
const calendarDate = (description: string) => z.iso.date().meta({ description });

export const creditOfferSchema = z
  .object({
    id: id('co'),
    customer_id: id('cust'),
    status: z.enum(creditOfferStatuses).meta({
      description:
        '`available` (simulate and take it), `accepted` (a loan was taken from it), `expired` (past `valid_until`), `cancelled` (the customer denied or erased).',
    }),
    currency: z.literal('BRL'),
    approved_amount: centavos('Largest amount the customer may request, in centavos.'),
    min_amount: centavos('Smallest amount the customer may request, in centavos.'),
    monthly_interest_rate: rate('Monthly interest rate, e.g. 0.0199 = 1.99 % a month.'),
    annual_interest_rate: rate('(1 + monthly)^12 − 1, to 4 decimals.'),
    min_installments: z.int().min(1).meta({ description: 'Fewest installments a loan may have.' }),
    max_installments: z.int().min(1).meta({ description: 'Most installments a loan may have.' }),
    valid_until: z.iso.datetime().meta({ description: 'The offer expires at this instant.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'CreditOffer' });

export const creditOfferParams = z.object({
  credit_offer_id: pathId('co', 'credit_offer_not_found'),
});
export const simulationParams = creditOfferParams.extend({
  simulation_id: pathId('sim', 'simulation_not_found'),
});

const sorts = ['created_at', 'valid_until'] as const;
const status = z
  .enum(creditOfferStatuses)
  .optional()
  .meta({ description: 'Only offers in this status.' });
export const customerCreditOfferListQuery = listQuery('co', sorts, { status });
export const creditOfferListQuery = listQuery('co', sorts, {
  customer_id: id('cust').optional().meta({ description: 'Only this customer’s offers.' }),
  status,
});
export const creditOfferList = listEnvelope(creditOfferSchema, 'CreditOfferList');

export const simulateBody = z
  .strictObject({
    amount: z.int().min(1).max(100_000_000_000).meta({
      description:
        'What the customer receives, in centavos, between the offer’s `min_amount` and `approved_amount`. IOF is financed on top of it.',
      example: 1_000_000,
    }),
    installments: z.int().min(1).max(420).meta({
      description: 'Number of monthly installments, between the offer’s bounds.',
      example: 12,
    }),
    first_due_date: calendarDate(
      'Due date of the first installment (America/Sao_Paulo), 7 to 45 days after today; default today + 30 days. Later installments fall on the same day of each month, or the month’s last day.',
    ).optional(),
  })
  .meta({ id: 'SimulateRequest' });

export const scheduleRowSchema = z
  .object({
    number: z.int().min(1).meta({ description: 'The installment’s number, from 1.' }),
    due_date: calendarDate('Due date (America/Sao_Paulo).'),
    installment_amount: centavos('What this installment charges.'),
    principal_amount: z.int().meta({
      description:
        'Principal repaid by this installment. Negative only when a long first period’s interest exceeds the installment (the difference is added to the balance).',
    }),
    interest_amount: centavos('Interest in this installment.'),
    balance_amount: centavos('Principal still owed after this installment.'),
  })
  .meta({ id: 'ScheduleRow' });

export const simulationSchema = z
  .object({
    id: id('sim'),
    credit_offer_id: id('co'),
    customer_id: id('cust'),
    currency: z.literal('BRL'),
    requested_amount: centavos('What the customer receives.'),
    iof_amount: centavos('IOF, financed: `principal_amount` − `requested_amount`.'),
    principal_amount: centavos('The amount financed: requested plus IOF.'),
    installments: z.int().min(1).meta({ description: 'How many monthly installments.' }),
    installment_amount: centavos(
      'The regular installment (the last may differ by a few centavos).',
    ),
    total_amount: centavos('Sum of every installment.'),
    total_interest_amount: centavos('Sum of every installment’s interest.'),
    monthly_interest_rate: rate('Monthly interest rate.'),
    annual_interest_rate: rate('(1 + monthly)^12 − 1, to 4 decimals.'),
    cet_monthly: rate('(1 + cet_annual)^(1/12) − 1, to 4 decimals.'),
    cet_annual: rate(
      'Custo Efetivo Total (Res. CMN 4.881/2020): the annual rate at which the installments on their dates are worth `requested_amount` on `release_date`, to 4 decimals.',
    ),
    release_date: calendarDate('The day the money is assumed released (America/Sao_Paulo).'),
    first_due_date: calendarDate('Due date of the first installment.'),
    schedule: z.array(scheduleRowSchema).meta({
      description: 'Every installment: its date, amount, and the principal and interest in it.',
    }),
    valid_until: z.iso.datetime().meta({
      description:
        'A loan can be taken from this simulation until then (24 h, at most the offer’s).',
    }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Simulation' });
