import { z } from 'zod';
import {
  chargeScopes,
  chargeStatuses,
  MAX_AMOUNT_CHARGE_DAYS,
  requestableChargeScopes,
} from '../../../domain/loans/charges.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, listQuery } from '../../list.js';

const centavos = (description: string) => z.int().min(1).meta({ description });
const instant = (description: string) => z.iso.datetime().meta({ description });

export const chargeSchema = z
  .object({
    id: idField('chg'),
    loan_id: idField('ln'),
    status: z.enum(chargeStatuses).meta({
      description:
        '`active` until paid (`paid`), past `expires_at` (`expired`) or replaced by a newer charge (`cancelled`).',
    }),
    scope: z.enum(chargeScopes).meta({
      description: 'What it charges for: `next`, `overdue`, `payoff` or a stated `amount`.',
    }),
    amount: centavos('What the Pix must bring, fixed for the charge’s life.'),
    currency: z.literal('BRL'),
    br_code: z.string().meta({
      description:
        'The Pix “copia e cola” (EMV BR Code), CRC16 at the end; `GET /v3/charges/{id}/qr.png` draws it. Production: the lender’s PSP’s dynamic payload (`pixCopiaECola`), whose location the payer’s bank reads the charge from, so a charge removed at the PSP (cancelled or expired) can no longer be paid. Sandbox: a static code with a key no bank holds, the amount and the txid.',
    }),
    txid: z.string().meta({
      description:
        'The charge’s transaction id (at the PSP, for a production charge): how a Pix finds its charge.',
    }),
    expires_at: instant('After this, the charge is `expired` (`charge.expired`).'),
    paid_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When the Pix that paid it was paid.' }),
    payment_reference: z.string().nullable().meta({
      description: 'The paying Pix’s end-to-end id: the `reference` of its loan transaction.',
    }),
    created_at: instant('When the charge was made.'),
    updated_at: instant('When it last changed.'),
  })
  .meta({ id: 'Charge' });

export const chargeParams = z.object({ charge_id: pathId('chg', 'charge_not_found') });

const expiresAt = z.iso
  .datetime({ offset: true })
  .optional()
  .meta({
    description: `RFC 3339, in the future; default the end of today (São Paulo). A charge for installments lasts until the end of today at most (what they owe changes daily); one of a stated \`amount\` up to ${MAX_AMOUNT_CHARGE_DAYS} days.`,
  });

/** A charge for installments: its amount comes from the loan. */
const rowsCharge = z.strictObject({
  scope: z
    .enum(
      requestableChargeScopes.filter((scope) => scope !== 'amount') as [
        'next',
        'overdue',
        'payoff',
      ],
    )
    .meta({
      description:
        '`next`: what pays the oldest unpaid installment in full today; `overdue`: every late installment with its late charges; `payoff`: the payoff amount.',
    }),
  expires_at: expiresAt,
});

/** A charge of a stated amount. */
const amountCharge = z.strictObject({
  scope: z.literal('amount').meta({ description: '`amount`: the `amount` stated.' }),
  amount: z.int().min(1).max(100_000_000_000).meta({
    description: 'Centavos, at most the payoff amount of today.',
  }),
  expires_at: expiresAt,
});

export const createChargeBody = z
  .discriminatedUnion('scope', [rowsCharge, amountCharge])
  .meta({ id: 'ChargeRequest' });

export const sandboxPayChargeBody = z
  .strictObject({
    amount: z.int().min(1).max(100_000_000_000).optional().meta({
      description:
        'Centavos the Pix brings; default the charge’s amount. Any amount: money received is never refused (contract §14).',
    }),
  })
  .meta({ id: 'SandboxChargePayment' });

export const chargeListQuery = listQuery('chg', ['created_at']);
export const chargeList = listEnvelope(chargeSchema, 'ChargeList');
