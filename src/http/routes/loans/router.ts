import { z } from 'zod';
import { createLoan } from '../../../commands/create-loan.js';
import { cancelLoan, quotePayoff } from '../../../commands/loan-commands.js';
import { loanNotFound, type LoanDeps } from '../../../commands/loan-deps.js';
import { entriesOf } from '../../../db/queries/ledger.js';
import { findLoan, listLoans, listLoanTransactions } from '../../../db/queries/loans.js';
import type { ApiRouter } from '../../api-router.js';
import { tenantOf, type AppContext } from '../../context.js';
import { presentPage } from '../../list.js';
import { presentLoanTransaction } from '../../../presenters/loans.js';
import {
  cancelLoanBody,
  createLoanBody,
  loanList,
  loanListQuery,
  loanParams,
  loanSchema,
  loanTransactionList,
  loanTransactionListQuery,
  payoffQuery,
  payoffSchema,
} from './schema.js';

import { loanResponse, presenter, sendContract, tag } from './shared.js';

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
        'Takes an `available` offer and one of its unexpired simulations: the loan has the simulation’s figures and schedule, the contract (CCB) is generated, the offer becomes `accepted` and `loan.created` is emitted, all at once. Each signer — the customer and up to four more — signs on `signing_url`. 409 `credit_offer_unavailable` / `simulation_expired`; 404 for an offer or a simulation not found (a simulation of another offer is not found). With `refinances` (contract §17, docs/refinancing.md) the offer is the one the refinanced loan accepted and stays its own until the release, the simulation must be that refinancing’s (409 `refinancing_changed` once a payment moved a payoff), and each loan is checked: 422 `validation_error` (`duplicate_refinanced_loan`, `too_many_refinanced_loans`), 404 `loan_not_found`, 409 `refinanced_loan_not_active`, `refinanced_loan_written_off`, `loan_already_being_refinanced`, `refinanced_loan_in_agreement`, 422 `refinancing_not_covered`. At the release the loans are paid off and `finished` (`finished_reason: "refinanced"`) and only the rest reaches `disbursement_account`; a loan changed meanwhile cancels this one (`refinanced_loan_changed`).',
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
        'The loan’s money movements, oldest first: its `disbursement`, then each `payment` (and a `payoff`), each with its double-entry `entries` (debits equal credits; contract §13). A sale of the loan (contract §19) is not listed: its price is between the lender and the buyer; payments after it credit `payable_to_assignee`.',
      tag,
      security: 'partner',
      params: loanParams,
      query: loanTransactionListQuery,
      responses: { 200: { description: 'A page of transactions.', schema: loanTransactionList } },
      errors: [400, 404],
    },
    async (ctx, { params, query }) => {
      const loan = await load(ctx, params.loan_id);
      const page = await listLoanTransactions(
        deps.db,
        tenantOf(ctx),
        loan.id,
        { ...query, sort: 'created_at', order: 'asc' },
        ['assignment'],
      );
      const entries = await entriesOf(
        deps.db,
        page.rows.map((transaction) => transaction.id),
      );
      ctx.body = presentPage(page, (transaction) =>
        presentLoanTransaction(transaction, entries.get(transaction.id) ?? []),
      );
    },
  );

  api.add(
    {
      method: 'get',
      path: '/loans/{loan_id}/payoff',
      operationId: 'getLoanPayoff',
      summary: 'Quote an early settlement',
      description:
        'What settles every unpaid installment on `date` (today in São Paulo by default, at most 30 days ahead; no fee): each pending row discounted to `date` at the contract’s monthly rate on calendar days, (1 + i)^(d/30); a row due by then at its amount due, late charges included. While a payment agreement takes payments (`pending_entry`, `active`), `agreement` quotes its rows, `rows` are the ones it does not cover and `payoff_amount` settles both (contract §17). Only while `active` (else 409 `invalid_state`). Settle with the ops or sandbox payoff command.',
      tag,
      security: 'partner',
      params: loanParams,
      query: payoffQuery,
      responses: { 200: { description: 'The quote.', schema: payoffSchema } },
      errors: [404, 409],
    },
    async (ctx, { params, query }) => {
      const loan = await load(ctx, params.loan_id);
      const quote = await quotePayoff(deps, loan, query.date);
      ctx.body = {
        loan_id: loan.id,
        date: quote.date,
        payoff_amount: quote.payoffAmount,
        discount_amount: quote.discountAmount,
        rows: quote.rows,
        agreement: quote.agreement && {
          id: quote.agreement.id,
          payoff_amount: quote.agreement.payoffAmount,
          rows: quote.agreement.rows,
        },
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
