import { z } from 'zod';
import {
  assignmentStatuses,
  MAX_ASSIGNMENT_LOANS,
} from '../../../domain/assignments/assignments.js';
import {
  DISCOUNT_RATE_PATTERN,
  isDiscountRate,
  MAX_DISCOUNT_RATE,
} from '../../../domain/assignments/pricing.js';
import type {
  Assignment,
  AssignmentLoan,
  AssignmentTransaction,
  Remittance,
} from '../../../db/queries/assignments.js';
import { idField, pathId } from '../../ids.js';
import { trimmedText } from '../../text.js';
import { cnpj } from '../customers/schema.js';

const centavos = (description: string) => z.int().meta({ description });
const calendarDate = (description: string) => z.iso.date().meta({ description });

export const assignmentParams = z.object({
  assignment_id: pathId('asg', 'assignment_not_found'),
});

const assignee = z
  .strictObject({
    name: trimmedText(200).meta({ description: 'The buyer’s legal name (razão social).' }),
    cnpj,
  })
  .meta({ description: 'Who buys the loans: a fund (FIDC) or another institution.' });

export const newAssignmentBody = z
  .strictObject({
    assignee,
    discount_rate_monthly: z
      .string()
      .regex(DISCOUNT_RATE_PATTERN, 'A monthly rate as a decimal string, e.g. "0.015" for 1.5 %.')
      .refine(isDiscountRate, {
        params: { code: 'out_of_range' },
        message: `A monthly rate from 0 to ${MAX_DISCOUNT_RATE} (20 %).`,
      })
      .meta({
        description: `The monthly rate each row is discounted at to the settlement date, (1 + r)^(d/30) on calendar days: a decimal string from 0 to ${MAX_DISCOUNT_RATE}, at most 6 decimals (\`"0.015"\`: 1.5 % a month).`,
        example: '0.015',
      }),
    settlement_date: calendarDate(
      'The day the sale settles (São Paulo): today or later, within 366 days; the price is each row’s value that day.',
    ),
    loan_ids: z
      .array(idField('ln'))
      .min(1)
      .max(MAX_ASSIGNMENT_LOANS)
      .superRefine((ids, ctx) => {
        const seen = new Set<string>();
        ids.forEach((id, index) => {
          if (seen.has(id))
            ctx.addIssue({
              code: 'custom',
              params: { code: 'duplicate' },
              path: [index],
              message: `Loan ${id} is listed twice.`,
            });
          seen.add(id);
        });
      })
      .meta({
        description: `The production loans sold, 1 to ${MAX_ASSIGNMENT_LOANS}, each active with its disbursement confirmed, not written off, in no live agreement, refinancing or other assignment.`,
      }),
  })
  .meta({ id: 'NewAssignmentRequest' });

const soldRow = z.object({
  number: z.int().min(1).meta({ description: 'The installment’s number.' }),
  due_date: calendarDate('Its due date.'),
  amount: centavos('What is left of the installment (face value, centavos).'),
  present_value: centavos(
    '`amount` discounted to the settlement date at the batch’s rate (half-even, centavos); a row due by then is not discounted.',
  ),
});

export const assignmentSchema = z
  .object({
    id: z.string(),
    status: z.enum(assignmentStatuses).meta({
      description:
        '`draft` (priced as its loans stood when made), `submitted` (frozen, priced again), `settled` (sold: the loans show `assigned_to`), `cancelled` (its loans free again).',
    }),
    environment: z.literal('production'),
    assignee: z.object({ name: z.string(), cnpj: z.string() }),
    discount_rate_monthly: z.string(),
    settlement_date: calendarDate('The day it settles.'),
    price: centavos('Σ the loans’ prices (centavos): what the buyer pays.'),
    loans: z
      .array(
        z.object({
          loan_id: z.string(),
          price: centavos('Σ its rows’ present values.'),
          rows: z.array(soldRow).meta({ description: 'The unpaid installments sold.' }),
          carrying: z
            .object({
              principal: centavos('Principal taken off the book.'),
              interest: centavos('Interest accrued to the settlement date.'),
              late_fee: centavos('Late fees accrued.'),
              late_interest: centavos('Late interest accrued.'),
            })
            .nullable()
            .meta({
              description: 'What settlement took off the lender’s book; null until settled.',
            }),
        }),
      )
      .meta({ description: 'The loans sold, in loan id order.' }),
    price_payment: z
      .object({
        amount: centavos('The price, paid whole.'),
        paid_at: z.iso.datetime().meta({ description: 'When the buyer’s money arrived.' }),
        reference: z.string().meta({ description: 'The transfer’s identity, as ops gave it.' }),
        recorded_by: z.string().meta({ description: 'The operator who recorded it.' }),
        recorded_at: z.iso.datetime(),
      })
      .nullable()
      .meta({
        description:
          'The buyer’s payment of the price (`POST …/price-payment`); null until received.',
      }),
    created_by: z.string(),
    submitted_by: z.string().nullable(),
    approval_id: z
      .string()
      .nullable()
      .meta({ description: 'The approval that settled it (kind `assignment`).' }),
    created_at: z.iso.datetime(),
    submitted_at: z.iso.datetime().nullable(),
    settled_at: z.iso.datetime().nullable(),
    cancelled_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Assignment' });

export function presentAssignment(
  assignment: Assignment,
  sold: readonly AssignmentLoan[],
  money: readonly AssignmentTransaction[] = [],
) {
  const price = money.find((row) => row.type === 'price_received');
  return {
    id: assignment.id,
    status: assignment.status,
    environment: assignment.environment,
    assignee: { name: assignment.assigneeName, cnpj: assignment.assigneeCnpj },
    discount_rate_monthly: assignment.discountRateMonthly,
    settlement_date: assignment.settlementDate,
    price: assignment.price ?? 0,
    loans: sold.map((row) => ({
      loan_id: row.loanId,
      price: row.price ?? 0,
      rows: row.rows ?? [],
      carrying: row.carrying,
    })),
    price_payment: price
      ? {
          amount: price.amount,
          paid_at: price.paidAt.toISOString(),
          reference: price.reference,
          recorded_by: price.actor.id,
          recorded_at: price.createdAt.toISOString(),
        }
      : null,
    created_by: assignment.createdBy,
    submitted_by: assignment.submittedBy,
    approval_id: assignment.approvalId,
    created_at: assignment.createdAt.toISOString(),
    submitted_at: assignment.submittedAt?.toISOString() ?? null,
    settled_at: assignment.settledAt?.toISOString() ?? null,
    cancelled_at: assignment.cancelledAt?.toISOString() ?? null,
  };
}

export const assignmentList = z
  .object({
    data: z.array(assignmentSchema.omit({ loans: true, price_payment: true })),
    has_more: z.boolean(),
  })
  .meta({ id: 'AssignmentList' });

/** A transfer's identity at the bank, as ops give it: printable ASCII, 1–64 characters. */
const transferReference = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/,
    'Printable ASCII, no leading or trailing space.',
  );

export const pricePaymentBody = z
  .strictObject({
    amount: z.int().min(1).max(100_000_000_000).meta({
      description: 'Centavos: the batch’s whole `price` (422 `not_the_price` otherwise).',
    }),
    paid_at: z.iso.datetime({ offset: true }).meta({
      description:
        'When the buyer’s money arrived (RFC 3339): on the settlement date (São Paulo) or later, not in the future.',
    }),
    reference: transferReference.meta({
      description:
        'The transfer’s identity (e.g. its bank’s id): sent again with the same one, the batch is answered and nothing recorded; the price received under another, 409 `assignment_price_received`.',
      example: 'TED-20261128-000123',
    }),
  })
  .meta({ id: 'AssignmentPricePayment' });

export const remittancePaymentParams = assignmentParams.extend({
  date: z.iso.date().meta({ description: 'The day remitted (São Paulo), `YYYY-MM-DD`.' }),
});

export const remittancePaymentBody = z
  .strictObject({
    reference: transferReference.meta({
      description:
        'The transfer’s identity: sent again with the same one, the report is answered and nothing recorded; the day paid under another, 409 `remittance_paid`.',
      example: 'PIX-E12345678202611291200abcdef01',
    }),
  })
  .meta({ id: 'AssignmentRemittancePayment' });

export const remittanceQuery = z.strictObject({
  date: calendarDate('The business day (São Paulo) reported, `YYYY-MM-DD`.'),
});

export const remittanceReport = z
  .object({
    assignment_id: z.string(),
    date: calendarDate('The day reported.'),
    total: centavos('Σ `amount`: what the day’s money owes the buyer.'),
    remittances: z.array(
      z.object({
        loan_id: z.string(),
        transaction_id: z.string(),
        type: z.string().meta({ description: 'The loan transaction: a payment, a withdrawal…' }),
        amount: centavos(
          'What it owes the buyer (`payable_to_assignee`); negative: what the buyer owes back.',
        ),
        occurred_at: z.iso.datetime(),
      }),
    ),
    payment: z
      .object({
        amount: centavos('What was sent to the buyer: the day’s `total` when paid.'),
        reference: z.string().meta({ description: 'The transfer’s identity, as ops gave it.' }),
        paid_at: z.iso.datetime(),
        paid_by: z.string().meta({ description: 'The operator who recorded it.' }),
      })
      .nullable()
      .meta({
        description:
          'The day’s remittance to the buyer (`POST …/remittances/{date}/payment`); null until paid.',
      }),
  })
  .meta({ id: 'AssignmentRemittances' });

export const presentRemittances = (
  assignmentId: string,
  date: string,
  rows: Remittance[],
  paid: AssignmentTransaction | undefined,
) => ({
  assignment_id: assignmentId,
  date,
  total: rows.reduce((sum, row) => sum + row.amount, 0),
  payment: paid
    ? {
        amount: paid.amount,
        reference: paid.reference,
        paid_at: paid.paidAt.toISOString(),
        paid_by: paid.actor.id,
      }
    : null,
  remittances: rows.map((row) => ({
    loan_id: row.loanId,
    transaction_id: row.transactionId,
    type: row.type,
    amount: row.amount,
    occurred_at: row.occurredAt.toISOString(),
  })),
});

/** One CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180). */
const field = (value: string | number) => {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** The installments sold, one line each (RFC 4180, CRLF), amounts in centavos. */
export function installmentsCsv(
  rows: { loanId: string; contractSha256: string; cpf: string; rows: AssignmentLoan['rows'] }[],
): string {
  const lines = [
    [
      'loan_id',
      'contract_sha256',
      'cpf',
      'installment_number',
      'due_date',
      'amount',
      'present_value',
    ],
  ];
  for (const loan of rows)
    for (const row of loan.rows ?? [])
      lines.push([
        loan.loanId,
        loan.contractSha256,
        loan.cpf,
        String(row.number),
        row.due_date,
        String(row.amount),
        String(row.present_value),
      ]);
  return lines.map((line) => line.map(field).join(',')).join('\r\n') + '\r\n';
}
