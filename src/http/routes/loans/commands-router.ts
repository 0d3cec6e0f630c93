import { requestApproval } from '../../../commands/approvals.js';
import { clockNow } from '../../../commands/customer-clock.js';
import {
  checkPayment,
  claimDisbursement,
  recordPayment,
  refuseWhilePayoutInFlight,
  reportDisbursement,
  settleLoan,
  signLoan,
} from '../../../commands/loan-commands.js';
import { loanNotFound, type LoanDeps } from '../../../commands/loan-deps.js';
import type { Actors, OperatorRole } from '../../../domain/operators.js';
import { aboveRefundDue, recordRefund } from '../../../commands/refunds.js';
import { openDevolucaoAmount } from '../../../db/queries/devolucoes.js';
import type { ApprovalKind } from '../../../db/queries/approvals.js';
import {
  findLoan,
  findLoanForOps,
  findPaymentByReference,
  type LoanView,
} from '../../../db/queries/loans.js';
import { ProblemError } from '../../../errors.js';
import type { ApiRouter, ResponseSpec } from '../../api-router.js';
import { answerHeld, approvalSchema } from '../approvals/schema.js';
import { sandboxTenantOf, type AppContext } from '../../context.js';
import {
  disbursementBody,
  loanParams,
  paymentBody,
  payoffBody,
  refundBody,
  sandboxPaymentBody,
  sandboxPayoffBody,
  signLoanBody,
} from './schema.js';

import { loanResponse, presenter } from './shared.js';

/**
 * Back-office commands on loans: ops (`/ops/v1/loans/…`, any partner's loan) report the
 * disbursement and record payments; sandbox twins (`/v3/sandbox/loans/…`) let a partner do the
 * same to its sandbox loans, and sign as any signer.
 */
export function loanCommandRoutes(
  api: ApiRouter,
  deps: LoanDeps & { approvalTtlMs: number },
  audience: 'ops' | 'sandbox',
): void {
  const present = presenter(deps);
  /**
   * Dual control (contract §15): money an operator moves by hand on a production loan is checked
   * now and held for another operator's approval (202, the approval); a sandbox loan's moves no
   * money and runs at once, as the partner's own sandbox twin does.
   */
  const heldForApproval = async (
    ctx: AppContext,
    kind: ApprovalKind,
    loan: LoanView,
    request: Record<string, unknown>,
  ): Promise<boolean> => {
    if (audience !== 'ops' || loan.environment !== 'production') return false;
    const approval = await requestApproval(deps, ctx.state.operator!, kind, { loan }, request);
    answerHeld(ctx, approval, deps.clock(), { loan_id: loan.id });
    return true;
  };
  /** Who moves money by hand: the ops command's operator (recorded on the transaction and event). */
  const byHand = (ctx: AppContext): Actors =>
    audience === 'ops' && ctx.state.operator ? { actor: ctx.state.operator.actor } : {};
  /** What the ops twin of a money command may also answer: held for approval. */
  const orHeld = (responses: Record<number, ResponseSpec>) =>
    audience === 'ops'
      ? {
          ...responses,
          202: {
            description:
              'A production loan: held for another operator’s approval (`POST /ops/v1/approvals/{id}/approve`); nothing moved yet.',
            schema: approvalSchema,
            headers: { Location: 'Path of the approval.' },
          },
        }
      : responses;
  const prefix = audience === 'ops' ? '/loans' : '/sandbox/loans';
  const security = audience === 'ops' ? ('ops' as const) : ('partner' as const);
  const resolve = async (ctx: AppContext, loanId: string): Promise<LoanView> => {
    const loan =
      audience === 'ops'
        ? await findLoanForOps(deps.db, loanId)
        : await findLoan(deps.db, sandboxTenantOf(ctx), loanId);
    if (!loan) throw loanNotFound(loanId);
    return loan;
  };
  const tagName = audience === 'ops' ? 'Loan operations' : 'Sandbox';
  /** Who among staff may run an ops command; the sandbox twins are the partner's. */
  const roles = (role: OperatorRole) => (audience === 'ops' ? { roles: [role] } : {});
  const id = (name: string) =>
    audience === 'ops' ? name : `sandbox${name[0]!.toUpperCase()}${name.slice(1)}`;

  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/disbursement`,
      operationId: id('reportLoanDisbursement'),
      summary: 'Report the disbursement’s outcome',
      description:
        'While `processing`: `confirmed` makes the loan `active` (a `disbursement` transaction, `loan.active`); `failed` ends it in `error` (`loan.error`, code `disbursement_failed`) and frees the offer. Else 409 `invalid_state`.' +
        (audience === 'ops'
          ? ' A production loan whose claim sent a payout through the PSP (contract §16) is reported by the payout’s outcome: while it is `sending` or `pending` (`GET /ops/v1/loans/{id}/payout`), this is 409 `invalid_state`. By hand, under dual control, is the exception: a loan the PSP cannot pay (no PSP configured, a bank account).'
          : ''),
      tag: tagName,
      security,
      ...roles('disbursement'),
      idempotent: true,
      params: loanParams,
      body: disbursementBody,
      responses: orHeld(loanResponse('The loan after the report.')),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await resolve(ctx, params.loan_id);
      await refuseWhilePayoutInFlight(deps.db, loan);
      if (body.outcome === 'confirmed') {
        if (loan.status !== 'processing')
          throw new ProblemError('invalid_state', `The loan is ${loan.status}, not processing.`);
        const at = clockNow(loan, deps.clock()).toISOString(); // the money went out now
        if (await heldForApproval(ctx, 'disbursement', loan, { outcome: 'confirmed', at })) return;
      }
      ctx.body = present(await reportDisbursement(deps, loan, body, byHand(ctx)));
    },
  );

  if (audience === 'ops')
    api.add(
      {
        method: 'post',
        path: `${prefix}/{loan_id}/disbursement/claim`,
        operationId: 'claimLoanDisbursement',
        summary: 'Claim the disbursement before sending the money',
        description:
          'While `processing`: `disbursement_status` becomes `claimed`, and from then on the partner’s cancel is 409 `invalid_state` (send the Pix only after this answers 200). Claiming again answers the loan. Once the money could no longer arrive 7 days before the first due date, the loan is cancelled (`release_window_passed`) and the claim is 409. Report the outcome with `POST /ops/v1/loans/{id}/disbursement` (a confirmation without a claim claims too). A production loan paid to a Pix key, with a PSP configured, needs no report: the claim sends its payout through the PSP (contract §16; `GET /ops/v1/loans/{id}/payout`), whose outcome activates the loan, fails it or — returned later — cancels it.',
        tag: tagName,
        security,
        ...roles('disbursement'),
        idempotent: true,
        params: loanParams,
        responses: loanResponse('The loan, claimed.'),
        errors: [404, 409],
      },
      async (ctx, { params }) => {
        const loan = await claimDisbursement(deps, await resolve(ctx, params.loan_id));
        ctx.body = present(loan);
      },
    );

  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/payments`,
      operationId: id('recordLoanPayment'),
      summary: 'Record a payment',
      description:
        'Any amount up to the payoff amount of the day of `paid_at` (422 naming it), allocated as contract §13 says: overdue rows first, oldest first (late interest, late fee, installment), then pending rows by `apply_to` (`next`: oldest first; `last`: newest first, shortening the term), each at its present value on `paid_at` (the discount is on the transaction). A row the amount does not cover is paid in part. `reference` names the payment for good: the same payment again answers 200 and records nothing; anything else under it is 409 `payment_reference_conflict`. `paid_at`: never in the future nor before the latest payment (422); without it, the payment is dated when the loan books it, after any sent before it. Paying every row finishes the loan. Only while `active` (else 409 `invalid_state`).' +
        (audience === 'sandbox'
          ? ' Here `amount` defaults to what the oldest unpaid row owes and `reference` to a fresh one.'
          : ''),
      tag: tagName,
      security,
      ...roles('payments'),
      idempotent: true,
      params: loanParams,
      body: audience === 'ops' ? paymentBody : sandboxPaymentBody,
      responses: orHeld(loanResponse('The loan after the payment.')),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await resolve(ctx, params.loan_id);
      if (audience === 'ops' && loan.environment === 'production') {
        // Checked as sent (a repeat of a recorded payment is answered as recorded); held with
        // `paid_at` fixed now, the day the money came, whenever the approval comes.
        if ((await checkPayment(deps, loan, body, 'payment')) === 'new') {
          const paidAt = body.paid_at ?? clockNow(loan, deps.clock()).toISOString();
          if (await heldForApproval(ctx, 'payment', loan, { ...body, paid_at: paidAt })) return;
        }
      }
      ctx.body = present(await recordPayment(deps, loan, body, byHand(ctx)));
    },
  );

  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/payoff`,
      operationId: id('settleLoan'),
      summary: 'Settle the loan early',
      description:
        'A payment of the payoff amount of the day of `paid_at` (default: when the loan books it; see `GET /v3/loans/{id}/payoff`): one `payoff` transaction, every row paid, `loan.finished`. `reference` as for a payment' +
        (audience === 'sandbox' ? ' (a fresh one when none is sent)' : '') +
        '. Only while `active` (else 409 `invalid_state`).',
      tag: tagName,
      security,
      ...roles('payments'),
      idempotent: true,
      params: loanParams,
      body: audience === 'ops' ? payoffBody : sandboxPayoffBody,
      responses: orHeld(loanResponse('The finished loan.')),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await resolve(ctx, params.loan_id);
      if (audience === 'ops' && loan.environment === 'production') {
        // Checked as sent (a repeat of a recorded payment is answered as recorded); held with
        // `paid_at` fixed now, the day the money came, whenever the approval comes.
        if ((await checkPayment(deps, loan, body, 'payoff')) === 'new') {
          const paidAt = body.paid_at ?? clockNow(loan, deps.clock()).toISOString();
          if (await heldForApproval(ctx, 'payoff', loan, { ...body, paid_at: paidAt })) return;
        }
      }
      ctx.body = present(await settleLoan(deps, loan, body, byHand(ctx)));
    },
  );

  if (audience === 'ops')
    api.add(
      {
        method: 'post',
        path: '/loans/{loan_id}/refunds',
        operationId: 'recordLoanRefund',
        summary: 'Record a refund sent',
        description:
          'Money due back to the borrower (`refund_due_amount`: what a Pix brought above the payoff, after the loan ended, or above a withdrawal) was sent: `amount` at most what is due back (422 naming it), `reference` its identity on the loan (the same refund again answers 200 and records nothing; anything else under it is 409 `payment_reference_conflict`). Writes a `refund` transaction (`refunds_payable` debited), lowers `refund_due_amount` and emits `loan.refund_sent`.',
        tag: tagName,
        security,
        ...roles('payments'),
        idempotent: true,
        params: loanParams,
        body: refundBody,
        responses: orHeld(loanResponse('The loan after the refund.')),
        errors: [404, 409],
      },
      async (ctx, { params, body }) => {
        const loan = await resolve(ctx, params.loan_id);
        // A refund recorded already is answered as recorded (below); a new one on a production
        // loan is checked now and held for approval.
        const recorded = await findPaymentByReference(deps.db, loan.id, body.reference, 'manual');
        if (!recorded && loan.environment === 'production') {
          const open = await openDevolucaoAmount(deps.db, loan.id);
          if (body.amount > loan.refundDueAmount - open)
            throw aboveRefundDue(loan.refundDueAmount, open);
          if (await heldForApproval(ctx, 'refund', loan, body)) return;
        }
        ctx.body = present(await recordRefund(deps, params.loan_id, body, present, byHand(ctx)));
      },
    );

  if (audience !== 'sandbox') return;
  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/signatures`,
      operationId: 'sandboxSignLoan',
      summary: 'Sign as one of the loan’s signers',
      description:
        'Does what the signing page does when that signer confirms: idempotent per signer; a cpf that does not sign this loan is 422 and changes nothing; 409 `invalid_state` once the loan takes no signatures.',
      tag: tagName,
      security,
      idempotent: true,
      params: loanParams,
      body: signLoanBody,
      responses: loanResponse('The loan after the signature.'),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await signLoan(deps, await resolve(ctx, params.loan_id), body.cpf, {
        ipAddress: ctx.ip || null,
        userAgent: ctx.get('User-Agent') || null,
        channel: 'sandbox_api',
      });
      ctx.body = present(loan);
    },
  );
}
