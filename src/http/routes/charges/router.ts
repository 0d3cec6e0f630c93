import { z } from 'zod';
import { chargeNotFound, createCharge, requestWithdrawal } from '../../../commands/charges.js';
import { clockNow } from '../../../commands/customer-clock.js';
import { loanNotFound, type LoanDeps } from '../../../commands/loan-deps.js';
import { receivePix, sandboxEndToEndId } from '../../../commands/receive-pix.js';
import { findCharge, listLoanCharges, type Charge } from '../../../db/queries/charges.js';
import { findLoan } from '../../../db/queries/loans.js';
import { qrPng } from '../../../domain/pix/br-code.js';
import { ProblemError } from '../../../errors.js';
import { presentCharge } from '../../../presenters/charges.js';
import { workflowIds } from '../../../temporal/workflow-ids.js';
import type { ApiRouter } from '../../api-router.js';
import { sandboxTenantOf, tenantOf, type AppContext } from '../../context.js';
import { presentPage } from '../../list.js';
import { loanParams, loanSchema } from '../loans/schema.js';
import { presenter } from '../loans/shared.js';
import {
  chargeList,
  chargeListQuery,
  chargeParams,
  chargeSchema,
  createChargeBody,
  sandboxPayChargeBody,
} from './schema.js';

const tag = 'Charges';
const chargeResponse = (description: string) => ({ 200: { description, schema: chargeSchema } });
const createdResponse = (description: string) => ({
  201: { description, schema: chargeSchema, headers: { Location: 'Path of the charge.' } },
});

/** Answers a charge just made: 201, where it lives, and the charge. */
function created(ctx: AppContext, charge: Charge): void {
  ctx.status = 201;
  ctx.set('Location', `/v3/charges/${charge.id}`);
  ctx.body = presentCharge(charge);
}

/**
 * Pix charges (contract §14): `/v3/loans/{id}/charges`, `/v3/charges/{id}` (and its QR code), the
 * withdrawal, and the sandbox's payment of a charge.
 */
export function chargeRoutes(api: ApiRouter, deps: LoanDeps): void {
  const present = presenter(deps);
  const loadLoan = async (ctx: AppContext, loanId: string) => {
    const loan = await findLoan(deps.db, tenantOf(ctx), loanId);
    if (!loan) throw loanNotFound(loanId);
    return loan;
  };
  const loadCharge = async (ctx: AppContext, chargeId: string) => {
    const charge = await findCharge(deps.db, tenantOf(ctx), chargeId);
    if (!charge) throw chargeNotFound(chargeId);
    return charge;
  };

  api.add(
    {
      method: 'post',
      path: '/loans/{loan_id}/charges',
      operationId: 'createCharge',
      summary: 'Charge by Pix',
      description:
        'A Pix charge for an `active` loan: a BR Code (“copia e cola”) for an amount fixed until `expires_at`. The loan’s active charge, if any, is `cancelled` (`charge.cancelled`); `charge.created`. The Pix that pays it is recorded by itself as a payment (`loan.payment_received`, `charge.paid`): no call marks an installment paid. A production charge comes from the lender’s PSP (Banco Central’s API Pix): an installment’s charge (`next`, `overdue`) is a charge with a due date (`cobv`) carrying the loan’s late fee (`multa`) and late interest (`juros`), any other an immediate charge (`cob`) expiring at `expires_at`; its `br_code` is the PSP’s dynamic payload, and once the charge is `cancelled` or `expired` it is removed at the PSP and can no longer be paid. A sandbox charge is a static BR Code for a key no bank holds. 409 `invalid_state` unless `active`; 422 `nothing_overdue` for an `overdue` charge when nothing is late, `above_payoff_amount`, `out_of_range` for an `expires_at` outside its window; 503 `psp_unavailable` (retry) or 502 `psp_refused` when the PSP did not register a production charge (nothing written).',
      tag,
      security: 'partner',
      idempotent: true,
      params: loanParams,
      body: createChargeBody,
      responses: createdResponse('The charge, `active`.'),
      errors: [404, 409, 502, 503],
    },
    async (ctx, { params, body }) => {
      created(ctx, await createCharge(deps, tenantOf(ctx), params.loan_id, body));
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/charges',
      operationId: 'listLoanCharges',
      summary: 'List a loan’s charges',
      tag,
      security: 'partner',
      params: loanParams,
      query: chargeListQuery,
      responses: { 200: { description: 'A page of the loan’s charges.', schema: chargeList } },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      const loan = await loadLoan(ctx, params.loan_id);
      ctx.body = presentPage(
        await listLoanCharges(deps.db, tenantOf(ctx), loan.id, query),
        presentCharge,
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/charges/{charge_id}',
      operationId: 'getCharge',
      summary: 'Retrieve a charge',
      tag,
      security: 'partner',
      params: chargeParams,
      responses: chargeResponse('The charge.'),
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = presentCharge(await loadCharge(ctx, params.charge_id));
    },
  );

  api.add(
    {
      method: 'get',
      path: '/charges/{charge_id}/qr.png',
      operationId: 'getChargeQrCode',
      summary: 'The charge’s QR code',
      description: 'The `br_code` drawn as a QR code (PNG), for a screen or a printed bill.',
      tag,
      security: 'partner',
      params: chargeParams,
      responses: {
        200: {
          description: 'The QR code.',
          contentType: 'image/png',
          schema: z.string().meta({ format: 'binary' }),
        },
      },
      errors: [404],
    },
    async (ctx, { params }) => {
      const charge = await loadCharge(ctx, params.charge_id);
      ctx.type = 'image/png';
      ctx.set('Cache-Control', 'private, max-age=300');
      ctx.body = await qrPng(charge.brCode);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/loans/{loan_id}/withdrawal',
      operationId: 'requestWithdrawal',
      summary: 'Withdraw from the loan (CDC art. 49)',
      description:
        'Within 7 calendar days of the disbursement, a customer without a cnpj may give the credit back: a charge of scope `withdrawal` for the amount released less what was already paid (no interest, no fee), expiring when the window closes (production: the PSP’s immediate charge, as for `POST /v3/loans/{loan_id}/charges`; 503 `psp_unavailable` or 502 `psp_refused` when the PSP did not register it). Paid by a Pix made before it expires, for at least its amount, the loan is `cancelled` (`cancellation_reason: "withdrawal"`, `loan.cancelled`), its IOF reversed in the ledger and anything above due back (`loan.refund_due`); a Pix on it for less, or after the window, is a payment like any other. When what was paid already reaches the amount released, nothing is charged: the loan is withdrawn at once (200 with the loan; what was paid above it is due back). 409 `invalid_state` for a company customer, after the window, or unless `active`.',
      tag,
      security: 'partner',
      idempotent: true,
      params: loanParams,
      responses: {
        ...createdResponse('The withdrawal’s charge.'),
        200: {
          description:
            'What was paid already reaches the amount released: nothing is charged and the loan is withdrawn at once, `cancelled`.',
          schema: loanSchema,
        },
      },
      errors: [404, 409, 502, 503],
    },
    async (ctx, { params }) => {
      const outcome = await requestWithdrawal(deps, tenantOf(ctx), params.loan_id);
      if ('charge' in outcome) created(ctx, outcome.charge);
      else ctx.body = present(outcome.withdrawn);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/sandbox/charges/{charge_id}/pay',
      operationId: 'sandboxPayCharge',
      summary: 'Pay a charge by Pix (sandbox)',
      description:
        'A Pix for the charge, `amount` centavos (default the charge’s), paid now on the customer’s clock: it arrives as the PSP’s notification does in production and is recorded by the same code (an amount other than the charge’s is allocated by contract §13; above the payoff amount, the rest is due back: `loan.refund_due`). Answers once it is recorded. 409 `invalid_state` unless the charge is `active`.',
      tag: 'Sandbox',
      security: 'partner',
      idempotent: true,
      params: chargeParams,
      body: sandboxPayChargeBody,
      responses: chargeResponse('The charge after the Pix.'),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const tenant = sandboxTenantOf(ctx);
      const charge = await findCharge(deps.db, tenant, params.charge_id);
      if (!charge) throw chargeNotFound(params.charge_id);
      if (charge.status !== 'active')
        throw new ProblemError('invalid_state', `The charge is ${charge.status}; it takes no Pix.`);
      const loan = await findLoan(deps.db, tenant, charge.loanId);
      const paidAt = loan ? clockNow(loan, deps.clock()) : deps.clock();
      const endToEndId = sandboxEndToEndId(paidAt);
      await receivePix(deps, 'sandbox', 'sandbox', [
        { endToEndId, txid: charge.txid, amount: body?.amount ?? charge.amount, paidAt },
      ]);
      await deps.temporal.workflow.getHandle(workflowIds.pix(endToEndId)).result();
      ctx.body = presentCharge((await findCharge(deps.db, tenant, charge.id))!);
    },
  );
}
