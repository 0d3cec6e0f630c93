import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import type { Actor } from '../../domain/operators.js';
import { devolucaoOrigins, devolucaoStatuses } from '../../domain/loans/devolucoes.js';
import { receivedPix } from './charges.js';
import { timestampColumn as ts } from './columns.js';
import { loans, loanTransactions } from './loans.js';
import { environments } from './partners.js';

/**
 * Money due back leaving by API (contract §16): each row is one devolução asked of the PSP on one
 * received Pix (`PUT /pix/{e2eid}/devolucao/{id}`, `id` ours and deterministic). A refund (`rfd_…`)
 * is one or more of them, on the loan's Pix newest first. `requested` until the PSP takes it,
 * `processing` while the PSP has it (`EM_PROCESSAMENTO`), then `returned` (`DEVOLVIDO`: booked as a
 * `refund` transaction, `transaction_id`) or `failed` (`NAO_REALIZADO`, or refused when asked:
 * `motivo` says why; the money stays due back). Its amount counts against what the loan has due
 * back while it is open, so two refunds never return the same money.
 */
export const devolucoes = pgTable(
  'devolucoes',
  {
    /** The devolução's id at the PSP: ≤ 35 of `[a-zA-Z0-9]`, derived from the refund's id. */
    id: text('id').primaryKey(),
    refundId: text('refund_id').notNull(),
    partnerId: text('partner_id').notNull(),
    environment: text('environment', { enum: environments }).notNull(),
    loanId: text('loan_id')
      .notNull()
      .references(() => loans.id),
    /** The Pix it returns (part of). */
    endToEndId: text('end_to_end_id')
      .notNull()
      .references(() => receivedPix.endToEndId),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    /** `automatic` (REFUND_AFTER after the money became due) or `ops` (asked and approved). */
    origin: text('origin', { enum: devolucaoOrigins }).notNull(),
    status: text('status', { enum: devolucaoStatuses }).notNull(),
    /** The return's end-to-end id in the payment system (`rtrId`), once the PSP took it. */
    rtrId: text('rtr_id'),
    /** Why it failed: the PSP's `motivo`, or its refusal when asked. */
    motivo: text('motivo'),
    /** The `refund` transaction that booked it, once `returned`. */
    transactionId: text('transaction_id').references(() => loanTransactions.id),
    actor: jsonb('actor').$type<Actor>(),
    approvedBy: jsonb('approved_by').$type<Actor>(),
    requestedAt: ts('requested_at').notNull().defaultNow(),
    /** When the PSP settled it (`horario.liquidacao`) or the service learnt it failed. */
    settledAt: ts('settled_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('devolucoes_loan_idx').on(t.loanId, t.requestedAt),
    index('devolucoes_refund_idx').on(t.refundId),
    index('devolucoes_pix_idx').on(t.endToEndId),
    index('devolucoes_failed_idx')
      .on(t.settledAt)
      .where(sql`${t.status} = 'failed'`),
  ],
);
