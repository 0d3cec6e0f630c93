import { z } from 'zod';
import type { ApprovalRequestDeps } from '../../../commands/approvals.js';
import { payRemittance, receivePrice } from '../../../commands/assignment-money.js';
import {
  assignmentNotFound,
  cancelAssignment,
  createAssignment,
  requestSettlement,
  submitAssignment,
} from '../../../commands/assignments.js';
import type { Db } from '../../../db/client.js';
import {
  findAssignment,
  listAssignments,
  loansOfAssignment,
  moneyOfAssignment,
  remittancesOn,
  soldInstallments,
} from '../../../db/queries/assignments.js';
import type { ApiRouter } from '../../api-router.js';
import { pageLimit } from '../../list.js';
import { answerHeld, approvalSchema } from '../approvals/schema.js';
import {
  assignmentList,
  assignmentParams,
  assignmentSchema,
  installmentsCsv,
  newAssignmentBody,
  presentAssignment,
  presentRemittances,
  pricePaymentBody,
  remittancePaymentBody,
  remittancePaymentParams,
  remittanceQuery,
  remittanceReport,
} from './schema.js';

const tag = 'Assignments';

/**
 * Assignments (cessão, contract §19; docs/assignments.md): batches of production loans sold to a
 * fund or another institution. The `payments` desk makes, submits, settles (held for another
 * operator of the desk: dual control) and cancels them, and reads what servicing after the sale
 * owes the buyer. Every command is audited; so is the installments' export (borrowers' cpfs).
 */
export function assignmentRoutes(api: ApiRouter, deps: ApprovalRequestDeps & { db: Db }): void {
  const answer = async (id: string) => {
    const assignment = await findAssignment(deps.db, id);
    if (!assignment) throw assignmentNotFound(id);
    const [sold, money] = await Promise.all([
      loansOfAssignment(deps.db, id),
      moneyOfAssignment(deps.db, id),
    ]);
    return presentAssignment(assignment, sold, money);
  };
  /** The day's report, with its payment to the buyer if made. */
  const report = async (id: string, date: string) => {
    const [rows, money] = await Promise.all([
      remittancesOn(deps.db, id, date),
      moneyOfAssignment(deps.db, id),
    ]);
    const paid = money.find((row) => row.type === 'remitted' && row.remittanceDate === date);
    return presentRemittances(id, date, rows, paid);
  };
  const roles = ['payments'] as const;

  api.add(
    {
      method: 'post',
      path: '/assignments',
      operationId: 'createAssignment',
      summary: 'Make a batch of loans to sell',
      description:
        'A `draft` batch of production loans sold to one buyer (contract §19), priced as its loans stand: per loan Σ its unpaid rows’ present values at `discount_rate_monthly` to `settlement_date`, (1 + r)^(d/30) on calendar days, half-even per row. 422 `validation_error` for a bad field (a CNPJ whose check digits fail, a rate out of bounds, a settlement date in the past: `out_of_range`, a loan listed twice: `duplicate`) or a loan that cannot be sold (`loan_not_assignable`, each at its place in `loan_ids`); nothing is written then.',
      tag,
      security: 'ops',
      roles,
      idempotent: true,
      body: newAssignmentBody,
      responses: {
        201: {
          description: 'The draft.',
          schema: assignmentSchema,
          headers: { Location: 'Path of the assignment.' },
        },
      },
      errors: [409],
    },
    async (ctx, { body }) => {
      const created = await createAssignment(deps, ctx.state.operator!, body);
      ctx.state.auditDetail = {
        assignment_id: created.id,
        loans: body.loan_ids.length,
        price: created.price,
      };
      ctx.status = 201;
      ctx.set('Location', `/ops/v1/assignments/${created.id}`);
      ctx.body = await answer(created.id);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/assignments',
      operationId: 'listAssignments',
      summary: 'List assignments',
      description: 'The newest batches first (without their loans: read one for them).',
      tag,
      security: 'ops',
      roles,
      query: z.strictObject({ limit: pageLimit }),
      responses: { 200: { description: 'Newest first.', schema: assignmentList } },
    },
    async (ctx, { query }) => {
      const rows = await listAssignments(deps.db, query.limit);
      ctx.body = {
        data: rows.slice(0, query.limit).map((row) => {
          const { loans: _loans, price_payment: _paid, ...rest } = presentAssignment(row, []);
          return rest;
        }),
        has_more: rows.length > query.limit,
      };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/assignments/{assignment_id}',
      operationId: 'getAssignment',
      summary: 'Retrieve an assignment',
      description: 'The batch, its loans, the rows each sold with their present values.',
      tag,
      security: 'ops',
      roles,
      params: assignmentParams,
      responses: { 200: { description: 'The assignment.', schema: assignmentSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = await answer(params.assignment_id);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/assignments/{assignment_id}/submit',
      operationId: 'submitAssignment',
      summary: 'Freeze and price a batch',
      description:
        'A `draft` becomes `submitted`: its loans are checked and priced again as they stand now. 409 `invalid_state` unless a draft; 422 for a settlement date now past, or a loan that can no longer be sold.',
      tag,
      security: 'ops',
      roles,
      params: assignmentParams,
      responses: { 200: { description: 'The submitted batch.', schema: assignmentSchema } },
      errors: [404, 409],
    },
    async (ctx, { params }) => {
      const submitted = await submitAssignment(deps, ctx.state.operator!, params.assignment_id);
      ctx.state.auditDetail = { assignment_id: submitted.id, price: submitted.price };
      ctx.body = await answer(submitted.id);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/assignments/{assignment_id}/settle',
      operationId: 'settleAssignment',
      summary: 'Settle a batch: held for a second operator',
      description:
        'On the settlement date (São Paulo), a `submitted` batch’s settlement is held for another operator of the `payments` desk (202, an approval of kind `assignment`). Approved, each loan leaves the book in one transaction — `loan_principal` and the interest and late charges accrued that day against `assignment_receivable`, the difference to `assignment_result` — shows `assigned_to` and `assignment_id`, and `loan.assigned` goes to its partner; the batch is `settled`. The approval ends `failed` (nothing changed) if the batch was cancelled, the day passed, or a loan changed since it was priced (`assignment_loans_changed`). 409 `assignment_not_due` on another day, `invalid_state` unless submitted or while a settlement already waits.',
      tag,
      security: 'ops',
      roles,
      params: assignmentParams,
      responses: {
        202: {
          description:
            'Held for another operator’s approval (`POST /ops/v1/approvals/{id}/approve`).',
          schema: approvalSchema,
          headers: { Location: 'Path of the approval.' },
        },
      },
      errors: [404, 409],
    },
    async (ctx, { params }) => {
      const { approval, assignment } = await requestSettlement(
        deps,
        ctx.state.operator!,
        params.assignment_id,
      );
      answerHeld(ctx, approval, deps.clock(), {
        assignment_id: assignment.id,
        price: assignment.price,
      });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/assignments/{assignment_id}/cancel',
      operationId: 'cancelAssignment',
      summary: 'Cancel a batch',
      description:
        'A `draft` or `submitted` batch is `cancelled`; its loans may be sold in another. Again on a cancelled one: the batch as it is. 409 `invalid_state` once settled (a sale is not undone).',
      tag,
      security: 'ops',
      roles,
      params: assignmentParams,
      responses: { 200: { description: 'The cancelled batch.', schema: assignmentSchema } },
      errors: [404, 409],
    },
    async (ctx, { params }) => {
      const cancelled = await cancelAssignment(deps, params.assignment_id);
      ctx.state.auditDetail = { assignment_id: cancelled.id };
      ctx.body = await answer(cancelled.id);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/assignments/{assignment_id}/remittances',
      operationId: 'getAssignmentRemittances',
      summary: 'What a day’s money owes the buyer',
      description:
        'The servicing report of one business day (São Paulo): each loan transaction of the batch’s loans that moved `payable_to_assignee` that day — a payment, a withdrawal (CDC art. 49: the money the borrower returned is the buyer’s) — and what it owes the buyer, with the day’s total to remit.',
      tag,
      security: 'ops',
      roles,
      params: assignmentParams,
      query: remittanceQuery,
      responses: { 200: { description: 'The day’s report.', schema: remittanceReport } },
      errors: [404],
    },
    async (ctx, { params, query }) => {
      const assignment = await findAssignment(deps.db, params.assignment_id);
      if (!assignment) throw assignmentNotFound(params.assignment_id);
      ctx.body = await report(assignment.id, query.date);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/assignments/{assignment_id}/price-payment',
      operationId: 'receiveAssignmentPrice',
      summary: 'Record the buyer’s payment of the price',
      description:
        'The buyer paid a `settled` batch’s whole price: booked as cash in (`collections_clearing`) against `assignment_receivable`, which the batch then no longer holds. Once per batch: the same `reference` again answers the batch and records nothing; another, 409 `assignment_price_received`. 422 `not_the_price` for another amount, `paid_at` in the future (`in_the_future`) or before the settlement date (`out_of_range`); 409 `invalid_state` unless settled.',
      tag,
      security: 'ops',
      roles,
      params: assignmentParams,
      body: pricePaymentBody,
      responses: {
        200: { description: 'The batch, its `price_payment` set.', schema: assignmentSchema },
      },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const { received } = await receivePrice(
        deps,
        ctx.state.operator!,
        params.assignment_id,
        body,
      );
      ctx.state.auditDetail = {
        assignment_id: params.assignment_id,
        amount: received.amount,
        reference: received.reference,
      };
      ctx.body = await answer(params.assignment_id);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/assignments/{assignment_id}/remittances/{date}/payment',
      operationId: 'payAssignmentRemittance',
      summary: 'Record a day’s remittance paid to the buyer',
      description:
        'The day’s collections on a `settled` batch’s loans — its remittances report’s `total` — were sent to the buyer: booked as `payable_to_assignee` against cash out (`disbursement_clearing`); the report shows the `payment` from then on. A day is paid once it is over (São Paulo; 409 `remittance_day_open` before) and once: the same `reference` again answers the report and records nothing; another, 409 `remittance_paid`. 409 `nothing_to_remit` for a day that owes the buyer nothing, `invalid_state` unless settled.',
      tag,
      security: 'ops',
      roles,
      params: remittancePaymentParams,
      body: remittancePaymentBody,
      responses: {
        200: { description: 'The day’s report, its `payment` set.', schema: remittanceReport },
      },
      errors: [404, 409],
    },
    async (ctx, { params, body }) => {
      const paid = await payRemittance(
        deps,
        ctx.state.operator!,
        params.assignment_id,
        params.date,
        body.reference,
      );
      ctx.state.auditDetail = {
        assignment_id: params.assignment_id,
        date: params.date,
        amount: paid.amount,
        reference: paid.reference,
      };
      ctx.body = await report(params.assignment_id, params.date);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/assignments/{assignment_id}/installments.csv',
      operationId: 'getAssignmentInstallments',
      summary: 'The installments sold, as CSV',
      description:
        'One line per installment sold (RFC 4180, UTF-8, CRLF): `loan_id`, `contract_sha256` (the contract signed), `cpf` (the borrower’s), `installment_number`, `due_date`, `amount` and `present_value` in centavos. Borrowers’ data leaves here: every export is audited.',
      tag,
      security: 'ops',
      roles,
      auditReads: true,
      params: assignmentParams,
      responses: {
        200: { description: 'The CSV.', contentType: 'text/csv', schema: z.string() },
      },
      errors: [404],
    },
    async (ctx, { params }) => {
      const assignment = await findAssignment(deps.db, params.assignment_id);
      if (!assignment) throw assignmentNotFound(params.assignment_id);
      ctx.state.auditDetail = { assignment_id: assignment.id };
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Disposition', `attachment; filename="${assignment.id}-installments.csv"`);
      ctx.type = 'text/csv; charset=utf-8';
      ctx.body = installmentsCsv(await soldInstallments(deps.db, assignment.id));
    },
  );
}
