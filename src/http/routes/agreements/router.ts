import {
  acceptAgreementInSandbox,
  agreementNotFound,
  createLoanAgreement,
  simulateLoanAgreement,
} from '../../../commands/agreements.js';
import { loanNotFound, type LoanDeps } from '../../../commands/loan-deps.js';
import { findAgreement, listLoanAgreements } from '../../../db/queries/agreements.js';
import { findLoan } from '../../../db/queries/loans.js';
import { presentAgreement, presentAgreementSimulation } from '../../../presenters/agreements.js';
import type { ApiRouter } from '../../api-router.js';
import { sandboxTenantOf, tenantOf } from '../../context.js';
import { presentPage } from '../../list.js';
import { loanParams } from '../loans/schema.js';
import {
  agreementBody,
  agreementList,
  agreementListQuery,
  agreementParams,
  agreementSchema,
  agreementSimulationSchema,
  createAgreementBody,
} from './schema.js';

const tag = 'Agreements';

/**
 * Payment agreements (contract §17; docs/agreements.md): `/v3/loans/{id}/agreements/simulations`,
 * `/v3/loans/{id}/agreements`, and `/v3/agreements/{id}` (a record with its own id is read at the
 * top level, as a charge is).
 */
export function agreementRoutes(api: ApiRouter, deps: LoanDeps): void {
  api.add(
    {
      method: 'post',
      path: '/loans/{loan_id}/agreements/simulations',
      operationId: 'simulateAgreement',
      summary: 'Simulate a payment agreement',
      description:
        'The debt of an `active` loan today (the customer’s clock) — the overdue rows with their late charges, or with `rows: "all"` every unpaid row (the others at present value, as a payoff) — its discount on the interest and late charges (never principal), and the agreement’s rows: Price on calendar days at the contract rate over the agreed balance (docs/agreements.md has a worked example). Valid until the end of the day, while the loan does not change. 409 `invalid_state` unless `active`; 422 `nothing_overdue` (`rows: "overdue"` with nothing late), `discount_above_charges`, `out_of_range` for `first_due_date`.',
      tag,
      security: 'partner',
      params: loanParams,
      body: agreementBody,
      responses: {
        201: { description: 'The simulation.', schema: agreementSimulationSchema },
      },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const simulation = await simulateLoanAgreement(deps, tenantOf(ctx), params.loan_id, body);
      ctx.status = 201;
      ctx.body = presentAgreementSimulation(simulation);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/loans/{loan_id}/agreements',
      operationId: 'createAgreement',
      summary: 'Make a payment agreement',
      description:
        'The agreement of a simulation, `pending_acceptance` until the borrower accepts it on `acceptance_url` (at the latest by the end of its first row’s due date): a code e-mailed to them opens the page, which shows the terms and the term’s PDF (`term_sha256`) and records the acceptance with its evidence; `loan.agreement_created`. One live agreement per loan: 409 `agreement_exists`; 409 `loan_already_being_refinanced` while a new loan refinances it (until that loan is cancelled); 409 `loan_assigned` once the lender sold the loan (`assigned_to`: its buyer agrees such terms); 409 `simulation_expired` past the simulation’s day or once the loan changed after it; 409 `invalid_state` unless the loan is `active`.',
      tag,
      security: 'partner',
      idempotent: true,
      params: loanParams,
      body: createAgreementBody,
      responses: {
        201: {
          description: 'The agreement, `pending_acceptance`.',
          schema: agreementSchema,
          headers: { Location: 'Path of the agreement.' },
        },
      },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const agreement = await createLoanAgreement(
        deps,
        tenantOf(ctx),
        params.loan_id,
        body.simulation_id,
      );
      ctx.status = 201;
      ctx.set('Location', `/v3/agreements/${agreement.id}`);
      ctx.body = presentAgreement(agreement, deps.agreements.acceptanceUrl);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/agreements',
      operationId: 'listLoanAgreements',
      summary: 'List a loan’s agreements',
      tag,
      security: 'partner',
      params: loanParams,
      query: agreementListQuery,
      responses: {
        200: { description: 'A page of the loan’s agreements.', schema: agreementList },
      },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      const loan = await findLoan(deps.db, tenantOf(ctx), params.loan_id);
      if (!loan) throw loanNotFound(params.loan_id);
      ctx.body = presentPage(
        await listLoanAgreements(deps.db, tenantOf(ctx), loan.id, query),
        (agreement) => presentAgreement(agreement, deps.agreements.acceptanceUrl),
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/agreements/{agreement_id}',
      operationId: 'getAgreement',
      summary: 'Retrieve an agreement',
      tag,
      security: 'partner',
      params: agreementParams,
      responses: { 200: { description: 'The agreement.', schema: agreementSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const agreement = await findAgreement(deps.db, tenantOf(ctx), params.agreement_id);
      if (!agreement) throw agreementNotFound(params.agreement_id);
      ctx.body = presentAgreement(agreement, deps.agreements.acceptanceUrl);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/sandbox/agreements/{agreement_id}/acceptance',
      operationId: 'sandboxAcceptAgreement',
      summary: 'Accept an agreement as the borrower (sandbox)',
      description:
        'Sandbox only (a production agreement is accepted by its borrower on `acceptance_url`). Records the borrower’s acceptance of the agreement’s term (`term_sha256`) as the hosted page does once they entered the e-mailed code (channel `sandbox_api`), now on the customer’s clock: `pending_entry`, `loan.agreement_accepted`. The same acceptance again answers the agreement as it is. 409 `invalid_state` once it lapsed (not accepted by the end of its first row’s due date) or ended. Then a payment on the loan goes to the agreement’s rows first: its first row paid by its due date makes it `active` (docs/agreements.md).',
      tag: 'Sandbox',
      security: 'partner',
      idempotent: true,
      params: agreementParams,
      responses: { 200: { description: 'The agreement, accepted.', schema: agreementSchema } },
      errors: [404, 409],
    },
    async (ctx, { params }) => {
      const agreement = await acceptAgreementInSandbox(
        deps,
        sandboxTenantOf(ctx),
        params.agreement_id,
        { ipAddress: ctx.ip || null, userAgent: ctx.get('User-Agent') || null },
      );
      ctx.body = presentAgreement(agreement, deps.agreements.acceptanceUrl);
    },
  );
}
