import { sendFile } from '../../send-file.js';
import { clockNow } from '../../../commands/customer-clock.js';
import { z } from 'zod';
import {
  cancelLoan,
  createLoan,
  loanNotFound,
  quotePayoff,
  recordPayment,
  reportDisbursement,
  settleLoan,
  signLoan,
  type LoanDeps,
} from '../../../commands/loans.js';
import { businessDate } from '../../../domain/business-date.js';
import {
  findLoan,
  findLoanForOps,
  listLoans,
  listLoanTransactions,
  type LoanView,
} from '../../../db/queries/loans.js';
import type { ApiRouter } from '../../api-router.js';
import { sandboxTenantOf, tenantOf, type AppContext } from '../../context.js';
import { presentPage } from '../../list.js';
import { presentLoan, presentLoanTransaction } from '../../../presenters/loans.js';
import {
  cancelLoanBody,
  createLoanBody,
  disbursementBody,
  loanList,
  loanListQuery,
  loanParams,
  loanSchema,
  loanTransactionList,
  loanTransactionListQuery,
  paymentBody,
  payoffBody,
  payoffQuery,
  payoffSchema,
  sandboxPaymentBody,
  signLoanBody,
} from './schema.js';

const tag = 'Loans';

/** Presents a loan as it stands today on its customer's clock (late charges grow by the day). */
const presenter = (deps: LoanDeps) => (loan: LoanView) =>
  presentLoan(loan, deps.signingUrl, businessDate(clockNow(loan, deps.clock())));
const loanResponse = (description: string) => ({ 200: { description, schema: loanSchema } });

/** Sends the contract PDF of a loan (the partner's download and the signing page's link). */
export async function sendContract(
  ctx: AppContext,
  deps: LoanDeps,
  loan: LoanView,
  disposition: 'inline' | 'attachment' = 'inline',
) {
  const file = await deps.files.open(loan.contractKey);
  if (!file) throw new Error(`contract of ${loan.id} missing from the file store`);
  sendFile(ctx, file, 'application/pdf', `${disposition}; filename="ccb-${loan.id}.pdf"`);
}

/** The partner's loan endpoints (`/v3/loans…`). */
export function loanRoutes(api: ApiRouter, deps: LoanDeps): void {
  const present = presenter(deps);
  const load = async (ctx: AppContext, loanId: string) => {
    const loan = await findLoan(deps.db, tenantOf(ctx), loanId);
    if (!loan) throw loanNotFound(loanId);
    return loan;
  };

  api.add(
    {
      method: 'post',
      path: '/loans',
      operationId: 'createLoan',
      summary: 'Accept an offer and create a loan',
      description:
        'Takes an `available` offer and one of its unexpired simulations: the loan has the simulation’s figures and schedule, the contract (CCB) is generated, the offer becomes `accepted` and `loan.created` is emitted, all at once. Each signer — the customer and up to four more — signs on `signing_url`. 409 `credit_offer_unavailable` / `simulation_expired`; 404 for an offer or a simulation not found (a simulation of another offer is not found).',
      tag,
      security: 'partner',
      idempotent: true,
      body: createLoanBody,
      responses: {
        201: {
          description: 'The loan, `awaiting_signatures`.',
          schema: loanSchema,
          headers: { Location: 'Path of the loan.' },
        },
      },
      errors: [404, 409],
    },
    async (ctx, { body }) => {
      const loan = await createLoan(deps, tenantOf(ctx), body);
      ctx.status = 201;
      ctx.set('Location', `/v3/loans/${loan.id}`);
      ctx.body = present(loan);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans',
      operationId: 'listLoans',
      summary: 'List loans',
      tag,
      security: 'partner',
      query: loanListQuery,
      responses: { 200: { description: 'A page of loans.', schema: loanList } },
      errors: [400],
    },
    async (ctx, { query }) => {
      ctx.body = presentPage(await listLoans(deps.db, tenantOf(ctx), query), present);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}',
      operationId: 'getLoan',
      summary: 'Retrieve a loan',
      tag,
      security: 'partner',
      params: loanParams,
      responses: loanResponse('The loan.'),
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = present(await load(ctx, params.loan_id));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/loans/{loan_id}/cancel',
      operationId: 'cancelLoan',
      summary: 'Cancel a loan before its disbursement',
      description:
        'While `awaiting_signatures` or `processing` (before the disbursement is confirmed); later, 409 `invalid_state`. Emits `loan.cancelled`; the offer becomes `available` again (or `expired` past its `valid_until`).',
      tag,
      security: 'partner',
      idempotent: true,
      params: loanParams,
      body: cancelLoanBody,
      responses: loanResponse('The cancelled loan.'),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await cancelLoan(deps, tenantOf(ctx), params.loan_id, body.reason);
      ctx.body = present(loan);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/transactions',
      operationId: 'listLoanTransactions',
      summary: 'List a loan’s transactions',
      description:
        'The ledger, oldest first: one `disbursement`, then one `payment` per paid installment.',
      tag,
      security: 'partner',
      params: loanParams,
      query: loanTransactionListQuery,
      responses: { 200: { description: 'A page of transactions.', schema: loanTransactionList } },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      const loan = await load(ctx, params.loan_id);
      const page = await listLoanTransactions(deps.db, tenantOf(ctx), loan.id, {
        ...query,
        sort: 'created_at',
        order: 'asc',
      });
      ctx.body = presentPage(page, presentLoanTransaction);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/payoff',
      operationId: 'getLoanPayoff',
      summary: 'Quote an early settlement',
      description:
        'What settles every unpaid installment on `date` (today in São Paulo by default, at most 30 days ahead; no fee): each pending row discounted to `date` at the contract’s monthly rate on calendar days, (1 + i)^(d/30); a row due by then at its amount due, late charges included. Only while `active` (else 409 `invalid_state`). Settle with the ops or sandbox payoff command.',
      tag,
      security: 'partner',
      params: loanParams,
      query: payoffQuery,
      responses: { 200: { description: 'The quote.', schema: payoffSchema } },
      errors: [404, 409],
    },
    async (ctx, { params, query }) => {
      const loan = await load(ctx, params.loan_id);
      const quote = quotePayoff(deps, loan, query.date);
      ctx.body = {
        loan_id: loan.id,
        date: quote.date,
        payoff_amount: quote.payoffAmount,
        discount_amount: quote.discountAmount,
        rows: quote.rows,
      };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/contract',
      operationId: 'getLoanContract',
      summary: 'Download the loan’s contract (CCB)',
      description: 'The PDF generated at creation; its SHA-256 is the loan’s `contract_sha256`.',
      tag,
      security: 'partner',
      params: loanParams,
      responses: {
        200: {
          description: 'The contract.',
          contentType: 'application/pdf',
          schema: z.string().meta({ format: 'binary' }),
        },
      },
      errors: [404],
    },
    async (ctx, { params }) => {
      await sendContract(ctx, deps, await load(ctx, params.loan_id));
    },
  );
}

/**
 * Back-office commands on loans: ops (`/ops/v1/loans/…`, any partner's loan) report the
 * disbursement and record payments; sandbox twins (`/v3/sandbox/loans/…`) let a partner do the
 * same to its sandbox loans, and sign as any signer.
 */
export function loanCommandRoutes(
  api: ApiRouter,
  deps: LoanDeps,
  audience: 'ops' | 'sandbox',
): void {
  const present = presenter(deps);
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
  const id = (name: string) =>
    audience === 'ops' ? name : `sandbox${name[0]!.toUpperCase()}${name.slice(1)}`;

  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/disbursement`,
      operationId: id('reportLoanDisbursement'),
      summary: 'Report the disbursement’s outcome',
      description:
        'While `processing`: `confirmed` makes the loan `active` (a `disbursement` transaction, `loan.active`); `failed` ends it in `error` (`loan.error`, code `disbursement_failed`) and frees the offer. Else 409 `invalid_state`.',
      tag: tagName,
      security,
      idempotent: true,
      params: loanParams,
      body: disbursementBody,
      responses: loanResponse('The loan after the report.'),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await reportDisbursement(deps, await resolve(ctx, params.loan_id), body);
      ctx.body = present(loan);
    },
  );

  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/payments`,
      operationId: id('recordLoanPayment'),
      summary: 'Record a payment of the oldest unpaid installment',
      description:
        'The amount must equal that installment’s amount due on the day of `paid_at` — its `installment_amount`, plus late charges once it is late (422 naming the amount due)' +
        (audience === 'sandbox' ? '; it defaults to it here' : '') +
        '. The last payment finishes the loan. Only while `active` (else 409 `invalid_state`).',
      tag: tagName,
      security,
      idempotent: true,
      params: loanParams,
      body: audience === 'ops' ? paymentBody : sandboxPaymentBody,
      responses: loanResponse('The loan after the payment.'),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await recordPayment(
        deps,
        await resolve(ctx, params.loan_id),
        body,
        ctx.get('Idempotency-Key') || undefined,
      );
      ctx.body = present(loan);
    },
  );

  api.add(
    {
      method: 'post',
      path: `${prefix}/{loan_id}/payoff`,
      operationId: id('settleLoan'),
      summary: 'Settle the loan early',
      description:
        'Every unpaid installment at once, for the payoff amount of the day of `paid_at` (default now; see `GET /v3/loans/{id}/payoff`): one `payoff` transaction, every row paid, `loan.finished`. Only while `active` (else 409 `invalid_state`).',
      tag: tagName,
      security,
      idempotent: true,
      params: loanParams,
      body: payoffBody,
      responses: loanResponse('The finished loan.'),
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const loan = await settleLoan(
        deps,
        await resolve(ctx, params.loan_id),
        body,
        ctx.get('Idempotency-Key') || undefined,
      );
      ctx.body = present(loan);
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
