import { z } from 'zod';
import { requestApproval, type ApprovalRequestDeps } from '../../../commands/approvals.js';
import { checkPixMatch, checkPixReturn, pixNotFound } from '../../../commands/unmatched-pix.js';
import type { Db } from '../../../db/client.js';
import { pageOf } from '../../../db/pagination.js';
import { findReceivedPix, unmatchedPix, type ReceivedPix } from '../../../db/queries/charges.js';
import { findLoanForOps } from '../../../db/queries/loans.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import type { AppContext } from '../../context.js';
import { idField } from '../../ids.js';
import { pageLimit, presentPage } from '../../list.js';
import { answerHeld, approvalSchema } from '../approvals/schema.js';

const endToEndId = z.string().regex(/^[a-zA-Z0-9]{32}$/);

const unmatchedPixSchema = z
  .object({
    end_to_end_id: z.string().meta({ description: 'The payment system’s id of the Pix.' }),
    txid: z
      .string()
      .nullable()
      .meta({ description: 'The txid it came with: no charge has it (null: none).' }),
    amount: z.int().meta({ description: 'Centavos received.' }),
    currency: z.literal('BRL'),
    paid_at: z.iso.datetime().meta({ description: 'When it was paid, as the PSP said.' }),
    received_at: z.iso.datetime().meta({ description: 'When the service stored it.' }),
  })
  .meta({ id: 'UnmatchedPix' });

const unmatchedPixList = z
  .object({ data: z.array(unmatchedPixSchema), has_more: z.boolean() })
  .meta({ id: 'UnmatchedPixList' });

const unmatchedPixQuery = z.strictObject({
  limit: pageLimit,
  starting_after: endToEndId
    .optional()
    .meta({ description: 'The `end_to_end_id` of the last item of the previous page.' }),
});

const present = (pix: ReceivedPix) => ({
  end_to_end_id: pix.endToEndId,
  txid: pix.txid,
  amount: pix.amount,
  currency: 'BRL' as const,
  paid_at: pix.paidAt.toISOString(),
  received_at: pix.receivedAt.toISOString(),
});

const receivedPixSchema = z
  .object({
    end_to_end_id: z.string().meta({ description: 'The payment system’s id of the Pix.' }),
    status: z.enum(['unmatched', 'received', 'recorded', 'returned']).meta({
      description:
        '`unmatched`: no charge claimed it (its money in `unidentified_receipts`); `received`: it names its loan, booked there shortly; `recorded`: booked (`transaction_id`); `returned`: sent back to its payer.',
    }),
    txid: z.string().nullable().meta({ description: 'The txid it came with (null: none).' }),
    amount: z.int().meta({ description: 'Centavos received.' }),
    currency: z.literal('BRL'),
    paid_at: z.iso.datetime().meta({ description: 'When it was paid, as the PSP said.' }),
    received_at: z.iso.datetime().meta({ description: 'When the service stored it.' }),
    loan_id: z.string().nullable().meta({ description: 'The loan it was booked on (or is for).' }),
    transaction_id: z
      .string()
      .nullable()
      .meta({ description: 'The loan transaction that booked it, once `recorded`.' }),
  })
  .meta({ id: 'ReceivedPix' });

const presentReceived = (pix: ReceivedPix) => ({
  ...present(pix),
  status: pix.status,
  loan_id: pix.loanId,
  transaction_id: pix.transactionId,
});

const pixParams = z.object({
  end_to_end_id: endToEndId.meta({ description: 'The Pix’s end-to-end id.' }),
});

const matchPixBody = z
  .strictObject({
    loan_id: idField('ln').meta({
      description: 'The production loan the Pix was meant for (it must have taken money).',
    }),
  })
  .meta({ id: 'MatchPixRequest' });

const returnPixBody = z
  .strictObject({
    reference: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\x21-\x7e]+$/)
      .meta({
        description:
          'The devolução that sent the money back to its payer (its id at the PSP), 1–64 printable characters.',
      }),
  })
  .meta({ id: 'ReturnPixRequest' });

const held = {
  202: {
    description:
      'Held for another operator’s approval (`POST /ops/v1/approvals/{id}/approve`, the `payments` desk): nothing moved yet.',
    schema: approvalSchema,
    headers: { Location: 'Path of the approval.' },
  },
};

/**
 * `GET /ops/v1/unmatched-pix`: Pix whose txid named no charge of production (contract §14), oldest
 * first: money on the lender's account that no loan booked, kept until ops return or place it.
 * `POST …/{e2e}/match` books one on the loan it was meant for, `POST …/{e2e}/return` records it
 * sent back to its payer: money moved by hand, each held for a second operator (dual control).
 * `GET /ops/v1/received-pix/{e2e}` reads any Pix received.
 */
export function unmatchedPixRoutes(api: ApiRouter, deps: ApprovalRequestDeps & { db: Db }): void {
  /** Dual control: the checked request held as a pending approval (202). */
  const hold = async (
    ctx: AppContext,
    kind: 'pix_match' | 'pix_return',
    endToEndId: string,
    request: Record<string, unknown>,
  ) => {
    const loan =
      typeof request.loan_id === 'string'
        ? await findLoanForOps(deps.db, request.loan_id)
        : undefined;
    const approval = await requestApproval(
      deps,
      ctx.state.operator!,
      kind,
      { pix: endToEndId, ...(loan ? { loan } : {}) },
      request,
    );
    answerHeld(ctx, approval, deps.clock(), { end_to_end_id: endToEndId });
  };

  api.add(
    {
      method: 'post',
      path: '/unmatched-pix/{end_to_end_id}/match',
      operationId: 'matchUnmatchedPix',
      summary: 'Book an unmatched Pix on its loan',
      description:
        'The Pix was meant for this production loan (one that took money): once another operator of the `payments` desk approves, it is booked there as any Pix — a payment of contract §13 dated when it was paid, anything the loan does not owe due back — drawing on `unidentified_receipts`, where its money has been since it arrived. Held for approval (202). 404 for an unknown Pix or loan; 409 `invalid_state` unless the Pix is `unmatched`; 422 `not_a_production_loan`.',
      tag: 'Pix',
      security: 'ops',
      roles: ['payments'],
      idempotent: true,
      params: pixParams,
      body: matchPixBody,
      responses: held,
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      await checkPixMatch(deps, params.end_to_end_id, body.loan_id);
      await hold(ctx, 'pix_match', params.end_to_end_id, { loan_id: body.loan_id });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/unmatched-pix/{end_to_end_id}/return',
      operationId: 'returnUnmatchedPix',
      summary: 'Record an unmatched Pix sent back to its payer',
      description:
        'Ops sent the Pix back by a devolução (`reference`, its id at the PSP): once another operator of the `payments` desk approves, what it brought moves from `unidentified_receipts` to `refunds_payable` and leaves (`disbursement_clearing`), and the Pix is `returned`. Held for approval (202). 404 for an unknown Pix; 409 `invalid_state` unless it is `unmatched`.',
      tag: 'Pix',
      security: 'ops',
      roles: ['payments'],
      idempotent: true,
      params: pixParams,
      body: returnPixBody,
      responses: held,
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      await checkPixReturn(deps, params.end_to_end_id);
      await hold(ctx, 'pix_return', params.end_to_end_id, { reference: body.reference });
    },
  );

  api.add(
    {
      method: 'get',
      path: '/received-pix/{end_to_end_id}',
      operationId: 'getReceivedPix',
      summary: 'A Pix received',
      description:
        'Any Pix the PSP (or the sandbox) told of, by end-to-end id: whether it was booked, on which loan and by which transaction, or is still unmatched, or was returned.',
      tag: 'Pix',
      security: 'ops',
      params: pixParams,
      responses: { 200: { description: 'The Pix.', schema: receivedPixSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const pix = await findReceivedPix(deps.db, params.end_to_end_id);
      if (!pix) throw pixNotFound(params.end_to_end_id);
      ctx.body = presentReceived(pix);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/unmatched-pix',
      operationId: 'listUnmatchedPix',
      summary: 'Pix that matched no charge',
      description:
        'Pix the PSP notified whose `txid` names no charge (or that came without one), oldest first. Never dropped: each stays here, and counts in the `unmatched_pix` gauge of `/metrics`, until ops deal with it.',
      tag: 'Pix',
      security: 'ops',
      query: unmatchedPixQuery,
      responses: { 200: { description: 'A page of unmatched Pix.', schema: unmatchedPixList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      const rows = await unmatchedPix(deps.db, query.limit + 1, query.starting_after);
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      ctx.body = presentPage(pageOf(rows, query.limit), present);
    },
  );
}
