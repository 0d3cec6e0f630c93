import { z } from 'zod';
import { pageLimit } from '../../list.js';
import type { Devolucao } from '../../../db/queries/devolucoes.js';
import { devolucaoOrigins, devolucaoStatuses } from '../../../domain/loans/devolucoes.js';

export const devolucaoRequestBody = z
  .strictObject({
    amount: z.int().min(1).max(100_000_000_000).optional().meta({
      description:
        'Centavos to return, at most the loan’s `refund_due_amount` less what is on its way back already, and at most what its Pix can return. Default: all of it that can leave this way.',
    }),
  })
  .meta({ id: 'DevolucaoRequest' });

const actor = z
  .object({ type: z.enum(['operator', 'partner', 'system']), id: z.string() })
  .nullable();

export const devolucaoSchema = z
  .object({
    id: z.string().meta({
      description:
        'The devolução’s id at the PSP (`PUT /pix/{e2eid}/devolucao/{id}`): 35 characters, derived from the refund’s.',
    }),
    refund_id: z.string().meta({
      description: 'The refund it is part of (`rfd_…`): one or more devoluções, newest Pix first.',
    }),
    loan_id: z.string(),
    end_to_end_id: z.string().meta({ description: 'The Pix it returns (part of).' }),
    amount: z.int().meta({ description: 'Centavos.' }),
    currency: z.literal('BRL'),
    status: z.enum(devolucaoStatuses).meta({
      description:
        '`requested`: not yet taken by the PSP; `processing`: at the PSP (`EM_PROCESSAMENTO`); `returned`: the PSP reported it `DEVOLVIDO`, booked (`transaction_id`); `failed`: `NAO_REALIZADO` or refused when asked (`motivo`), the money still due back.',
    }),
    origin: z.enum(devolucaoOrigins).meta({
      description:
        '`automatic`: REFUND_AFTER after the money became due; `ops`: asked and approved.',
    }),
    rtr_id: z.string().nullable().meta({
      description: 'The return’s end-to-end id in the payment system, once the PSP took it.',
    }),
    motivo: z.string().nullable().meta({ description: 'Why it failed (the PSP’s words).' }),
    transaction_id: z
      .string()
      .nullable()
      .meta({ description: 'The `refund` transaction that booked it, once `returned`.' }),
    actor: actor.meta({ description: 'The operator who asked for it (null: automatic).' }),
    approved_by: actor.meta({ description: 'The operator who approved it.' }),
    requested_at: z.iso.datetime(),
    settled_at: z.iso
      .datetime()
      .nullable()
      .meta({ description: 'When it was returned, or found failed.' }),
  })
  .meta({ id: 'Devolucao' });

export const devolucaoList = z
  .object({ data: z.array(devolucaoSchema), has_more: z.boolean() })
  .meta({ id: 'DevolucaoList' });

export const presentDevolucao = (row: Devolucao): z.infer<typeof devolucaoSchema> => ({
  id: row.id,
  refund_id: row.refundId,
  loan_id: row.loanId,
  end_to_end_id: row.endToEndId,
  amount: row.amount,
  currency: 'BRL',
  status: row.status,
  origin: row.origin,
  rtr_id: row.rtrId,
  motivo: row.motivo,
  transaction_id: row.transactionId,
  actor: row.actor ?? null,
  approved_by: row.approvedBy ?? null,
  requested_at: row.requestedAt.toISOString(),
  settled_at: row.settledAt?.toISOString() ?? null,
});

export const devolucaoListQuery = z.strictObject({
  status: z.enum(devolucaoStatuses).default('failed').meta({
    description:
      'Which devoluções: `failed` (default: money still due back that ops must see to), `requested`, `processing` or `returned`.',
  }),
  limit: pageLimit,
  starting_after: z
    .string()
    .regex(/^[a-zA-Z0-9]{1,35}$/)
    .optional()
    .meta({ description: 'The `id` of the last devolução of the previous page.' }),
});
