import { z } from 'zod';
import {
  AGREEMENT_MAX_DAYS_TO_FIRST_DUE,
  AGREEMENT_MAX_INSTALLMENTS,
  agreementStatuses,
} from '../../../domain/loans/agreements.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';

const centavos = (description: string) => z.int().min(0).meta({ description });
const calendarDate = (description: string) => z.iso.date().meta({ description });
const instant = (description: string) => z.iso.datetime().meta({ description });

export const agreementBody = z
  .strictObject({
    rows: z.enum(['overdue', 'all']).meta({
      description:
        '`overdue`: the rows late today, with their late charges; `all`: also every other unpaid row, at its present value today (as a payoff values it).',
    }),
    discount_percentage: z.number().gt(0).max(100).multipleOf(0.01).optional().meta({
      description:
        'Percent (0–100, two decimals) of the interest and late charges in the debt taken off. Never principal. Not with `discount_amount`.',
    }),
    discount_amount: z.int().min(0).max(100_000_000_000).optional().meta({
      description:
        'Centavos taken off the interest and late charges in the debt, at most their sum (422 `discount_above_charges` above it). Not with `discount_percentage`.',
    }),
    installments: z
      .int()
      .min(1)
      .max(AGREEMENT_MAX_INSTALLMENTS)
      .meta({
        description: `The agreement’s rows, 1–${AGREEMENT_MAX_INSTALLMENTS}.`,
      }),
    first_due_date: calendarDate(
      `The first row’s due date (the entry): from today to ${AGREEMENT_MAX_DAYS_TO_FIRST_DUE} days ahead, on the customer’s clock; the others fall on its day of each following month.`,
    ),
  })
  .superRefine((body, ctx) => {
    if (body.discount_percentage !== undefined && body.discount_amount !== undefined)
      ctx.addIssue({
        code: 'custom',
        params: { code: 'invalid_value' },
        path: ['discount_amount'],
        message: 'Either `discount_percentage` or `discount_amount`, not both.',
      });
  })
  .meta({ id: 'AgreementSimulationRequest' });

export const createAgreementBody = z
  .strictObject({
    simulation_id: idField('ags'),
  })
  .meta({ id: 'AgreementRequest' });

const row = z.object({
  number: z.int().meta({ description: 'The agreement’s row, from 1.' }),
  due_date: calendarDate('Its due date.'),
  installment_amount: centavos('The row’s installment.'),
  principal_amount: centavos('Its principal part (of the agreed balance).'),
  interest_amount: centavos('Its interest, at the contract rate on calendar days.'),
  balance_amount: centavos('The agreed balance left after it.'),
});

const coveredRow = z.object({
  number: z.int().meta({ description: 'The loan’s row.' }),
  due_date: calendarDate('Its due date.'),
  status: z.enum(['overdue', 'pending']).meta({
    description:
      '`overdue`: late on the agreement’s date; `pending`: not yet (valued at present value).',
  }),
  installment_amount: centavos('What is left of its installment, face value.'),
  late_fee_amount: centavos('Its late fee on the agreement’s date.'),
  late_interest_amount: centavos('Its late interest on the agreement’s date.'),
  value_amount: centavos(
    'What it counts for in the debt: its installment (present value for a pending row) and late charges.',
  ),
});

const figures = {
  currency: z.literal('BRL'),
  date: calendarDate('The agreement’s date: the customer’s today when simulated.'),
  rows: z.enum(['overdue', 'all']).meta({ description: 'The rows asked for: `overdue` or `all`.' }),
  covered_rows: z.array(coveredRow).meta({ description: 'The loan’s rows the agreement covers.' }),
  principal_amount: centavos('The principal those rows carry.'),
  interest_amount: centavos('The interest accrued in them.'),
  late_fee_amount: centavos('Their late fees.'),
  late_interest_amount: centavos('Their late interest.'),
  debt_amount: centavos('principal + interest + late fees + late interest.'),
  discount_amount: centavos(
    'Taken off the interest and late charges (late interest first, then late fee, then interest).',
  ),
  agreed_amount: centavos('debt − discount: what the agreement’s rows repay.'),
  installments: z.int().meta({ description: 'The agreement’s rows.' }),
  first_due_date: calendarDate('The first row’s due date.'),
  monthly_interest_rate: z.number().meta({ description: 'The loan’s contract rate.' }),
  total_amount: centavos('Σ the rows’ installments.'),
  total_interest_amount: centavos('Σ the rows’ interest.'),
  schedule: z.array(row).meta({
    description:
      'Price on calendar days at the contract rate over the agreed balance, from the agreement’s date (contract §7’s rounding; no IOF).',
  }),
};

export const agreementSimulationSchema = z
  .object({
    id: idField('ags'),
    loan_id: idField('ln'),
    ...figures,
    valid_until: instant(
      'The end of the agreement’s date (customer’s clock): later, or once the loan changed, simulate again.',
    ),
    created_at: instant('When it was simulated.'),
  })
  .meta({ id: 'AgreementSimulation' });

export const agreementSchema = z
  .object({
    id: idField('agr'),
    loan_id: idField('ln'),
    simulation_id: idField('ags'),
    status: z.enum(agreementStatuses).meta({
      description:
        '`pending_acceptance` → `pending_entry` (accepted) → `active` (its first row paid by its due date) → `fulfilled`; `lapsed` (not accepted, or the entry not paid, in time: nothing changed on the loan); `broken` (a row overdue more than AGREEMENT_BREAK_DAYS: the loan’s rows come back). While `pending_entry` or `active`, a payment on the loan goes to the agreement’s rows first, then to the rows it does not cover (docs/agreements.md).',
    }),
    ...figures,
    schedule: z
      .array(
        row.extend({
          paid_amount: centavos(
            'What the row has received: installment parts (at their value when paid) and late charges.',
          ),
          paid_at: z.iso
            .datetime({ offset: true })
            .nullable()
            .meta({ description: 'When the payment that completed the row was made.' }),
        }),
      )
      .meta({
        description:
          'Price on calendar days at the contract rate over the agreed balance, from the agreement’s date (contract §7’s rounding; no IOF), each row with what payments on the loan paid of it (they reach these rows first while the agreement is `pending_entry` or `active`).',
      }),
    acceptance_url: z.url().meta({
      description:
        'The hosted page where the borrower accepts (contract §17): a code sent to their e-mail on record opens it, it shows the terms and the term’s PDF, and accepts that term. Hand it to the borrower; it opens nothing without the code, and takes an acceptance only while `pending_acceptance`.',
    }),
    term_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable()
      .meta({
        description:
          'SHA-256 (hex) of the term’s PDF the borrower is shown and accepts, fixed when the agreement is made (the page serves the same bytes every time). Null only on an agreement made before terms existed, until its page first shows one.',
      }),
    acceptance_deadline: instant(
      'Not accepted, or its entry not paid, by then (the end of the first row’s due date, the customer’s clock): `lapsed` at that instant by the loan’s workflow.',
    ),
    accepted_at: instant('When the borrower accepted.').nullable(),
    active_at: instant('When its entry was paid.').nullable(),
    ended_at: instant('When it was fulfilled, lapsed or broken.').nullable(),
    created_at: instant('When it was made.'),
    updated_at: instant('When it last changed.'),
  })
  .meta({ id: 'Agreement' });

export const agreementParams = z.object({ agreement_id: pathId('agr', 'agreement_not_found') });
export const agreementListQuery = listQuery('agr', ['created_at']);
export const agreementList = listEnvelope(agreementSchema, 'AgreementList');
