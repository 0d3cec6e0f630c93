import { requestApproval, type ApprovalRequestDeps } from '../../../commands/approvals.js';
import { checkDevolucaoRequest } from '../../../commands/devolucoes.js';
import { loanNotFound } from '../../../commands/loan-deps.js';
import type { Db } from '../../../db/client.js';
import { devolucoesOfLoan, devolucoesWithStatus } from '../../../db/queries/devolucoes.js';
import { pageOf } from '../../../db/pagination.js';
import { problems } from '../../../errors.js';
import { presentPage } from '../../list.js';
import { findLoanForOps } from '../../../db/queries/loans.js';
import type { ApiRouter } from '../../api-router.js';
import { answerHeld, approvalSchema } from '../approvals/schema.js';
import { loanParams } from '../loans/schema.js';
import {
  devolucaoList,
  devolucaoListQuery,
  devolucaoRequestBody,
  presentDevolucao,
} from './schema.js';

/** The most devoluções one loan lists (newest first): far more than a loan's refunds make. */
const LISTED = 100;

/**
 * Money due back on a production loan, returned to its payer by devolução at the PSP (contract
 * §16): `POST /ops/v1/loans/{id}/devolucoes` asks for a refund (dual control: held for a second
 * operator of the `payments` desk), `GET` lists the loan's devoluções with how each ended — a
 * failed one with the PSP's `motivo`, its money still due back for a new request.
 */
export function refundRoutes(
  api: ApiRouter,
  deps: ApprovalRequestDeps & { db: Db; pspConfigured: boolean },
): void {
  api.add(
    {
      method: 'post',
      path: '/loans/{loan_id}/devolucoes',
      operationId: 'requestLoanDevolucao',
      summary: 'Return money due back by devolução',
      description:
        'Money due back (`refund_due_amount`) goes back to the payer by devolução at the PSP (`PUT /pix/{e2eid}/devolucao/{id}`) on the Pix that brought it: the loan’s newest Pix first, each at most what it brought less its earlier devoluções, then the next older one. Checked now and held for another operator’s approval (202; the `payments` desk); once approved, the refund’s workflow asks the PSP, and each devolução is booked (a `refund` transaction, `loan.refund_sent`) when the PSP reports it `DEVOLVIDO`. `NAO_REALIZADO` leaves the money due back, listed here with its `motivo`. 404 for an unknown loan; 409 `psp_not_configured` without a PSP; 422 `not_a_production_loan` for a sandbox loan, `above_refund_due` above what is due back and not on its way, `above_returnable` above what the Pix can return.',
      tag: 'Loan operations',
      security: 'ops',
      roles: ['payments'],
      idempotent: true,
      params: loanParams,
      body: devolucaoRequestBody,
      responses: {
        202: {
          description:
            'Held for another operator’s approval (`POST /ops/v1/approvals/{id}/approve`): nothing asked of the PSP yet.',
          schema: approvalSchema,
          headers: { Location: 'Path of the approval.' },
        },
      },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await findLoanForOps(deps.db, params.loan_id);
      if (!loan) throw loanNotFound(params.loan_id);
      const amount = await checkDevolucaoRequest(deps, loan, body.amount);
      const approval = await requestApproval(
        deps,
        ctx.state.operator!,
        'devolucao',
        { loan },
        {
          amount,
        },
      );
      answerHeld(ctx, approval, deps.clock(), { loan_id: loan.id, amount });
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/devolucoes',
      operationId: 'listLoanDevolucoes',
      summary: 'A loan’s devoluções',
      description:
        'Every devolução asked of the PSP for the loan, newest first (at most 100): automatic (REFUND_AFTER after the money became due) or asked by ops, where each stands, the `motivo` of one that failed.',
      tag: 'Loan operations',
      security: 'ops',
      params: loanParams,
      responses: { 200: { description: 'The loan’s devoluções.', schema: devolucaoList } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const loan = await findLoanForOps(deps.db, params.loan_id);
      if (!loan) throw loanNotFound(params.loan_id);
      const rows = await devolucoesOfLoan(
        deps.db,
        { partnerId: loan.partnerId, environment: loan.environment },
        loan.id,
      );
      ctx.body = {
        data: rows.slice(0, LISTED).map(presentDevolucao),
        has_more: rows.length > LISTED,
      };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/devolucoes',
      operationId: 'listDevolucoes',
      summary: 'Devoluções by status',
      description:
        'Every loan’s devoluções in one status, newest first: by default the `failed` ones (`NAO_REALIZADO` or refused when asked, with the PSP’s `motivo`), whose money is still due back until ops ask again or record it sent by hand.',
      tag: 'Loan operations',
      security: 'ops',
      query: devolucaoListQuery,
      responses: { 200: { description: 'A page of devoluções.', schema: devolucaoList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      const rows = await devolucoesWithStatus(
        deps.db,
        query.status,
        query.limit + 1,
        query.starting_after,
      );
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      ctx.body = presentPage(pageOf(rows, query.limit), presentDevolucao);
    },
  );
}
