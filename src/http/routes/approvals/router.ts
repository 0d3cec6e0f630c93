import { z } from 'zod';
import { approvalReader, decideApproval, type ApprovalDeps } from '../../../commands/approvals.js';
import type { LoanDeps } from '../../../commands/loan-deps.js';
import { findReadableApproval, listApprovals } from '../../../db/queries/approvals.js';
import { findLoanForOps } from '../../../db/queries/loans.js';
import { pageOf } from '../../../db/pagination.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { idField } from '../../ids.js';
import { listEnvelope, pageLimit, presentPage } from '../../list.js';
import { loanSchema } from '../loans/schema.js';
import { presenter } from '../loans/shared.js';
import { approvalParams, approvalSchema, presentApproval } from './schema.js';

const tag = 'Approvals';
const decidedApproval = approvalSchema
  .extend({ loan: loanSchema.nullable() })
  .meta({ id: 'DecidedApproval' });

/**
 * Dual control (contract §15, issue 37): the approvals that money moved by hand and staff
 * administration wait on, and the second operator's decision. An operator reads the approvals it
 * could decide and those it asked for (`approvalReader`). Deciding needs the kind's role (the
 * money's desk, `disbursement` or `payments`; `admin` for staff), a named operator other than the
 * maker and than the operator a staff change is about.
 */
export function approvalRoutes(api: ApiRouter, deps: ApprovalDeps & LoanDeps): void {
  const presentLoan = presenter(deps);
  api.add(
    {
      method: 'get',
      path: '/approvals',
      operationId: 'listApprovals',
      summary: 'List approvals',
      description:
        'The approvals you could decide (your desk’s money; staff administration for an administrator) and those you asked for, newest first.',
      tag,
      security: 'ops',
      query: z.strictObject({
        limit: pageLimit,
        starting_after: idField('apr').optional(),
        status: z
          .enum(['pending', 'executing', 'approved', 'failed', 'rejected', 'expired'])
          .optional(),
      }),
      responses: {
        200: {
          description: 'Newest first.',
          schema: listEnvelope(approvalSchema, 'ApprovalList'),
        },
      },
      errors: [400],
    },
    async (ctx, { query }) => {
      const rows = await listApprovals(deps.db, approvalReader(ctx.state.operator!), {
        limit: query.limit,
        startingAfter: query.starting_after,
        status: query.status,
      });
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      const now = deps.clock();
      ctx.body = presentPage(pageOf(rows, query.limit), (row) => presentApproval(row, now));
    },
  );

  api.add(
    {
      method: 'get',
      path: '/approvals/{approval_id}',
      operationId: 'getApproval',
      summary: 'Retrieve an approval',
      description:
        'One you could decide or asked for; any other is 404 `approval_not_found`, as if it did not exist.',
      tag,
      security: 'ops',
      params: approvalParams,
      responses: { 200: { description: 'The approval.', schema: approvalSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const approval = await findReadableApproval(
        deps.db,
        approvalReader(ctx.state.operator!),
        params.approval_id,
      );
      if (!approval)
        throw problems.notFound('approval_not_found', `No approval ${params.approval_id}.`);
      ctx.body = presentApproval(approval, deps.clock());
    },
  );

  for (const decision of ['approve', 'reject'] as const)
    api.add(
      {
        method: 'post',
        path: `/approvals/{approval_id}/${decision}`,
        operationId: decision === 'approve' ? 'approveApproval' : 'rejectApproval',
        summary: decision === 'approve' ? 'Approve: the command runs' : 'Reject: it never runs',
        description:
          (decision === 'approve'
            ? 'Runs the held command now and answers the approval as it ended: `approved`, or `failed` with the loan’s refusal in `outcome` (the loan moved on meanwhile). '
            : 'Closes the approval; the command never runs. ') +
          'By a named operator (not the break-glass token: 403 `break_glass_limited`) with the deciding role — the money’s desk (`disbursement` for a disbursement, `payments` otherwise), `admin` for staff administration — other than the maker (403 `approval_by_maker`) and than the operator a staff change is about (403 `self_administration`); 409 `invalid_state` once decided or expired.',
        tag,
        security: 'ops',
        params: approvalParams,
        ...(decision === 'reject'
          ? {
              body: z
                .strictObject({ reason: z.string().trim().min(1).max(1000).optional() })
                .meta({ id: 'RejectApprovalRequest' }),
            }
          : {}),
        responses: {
          200: {
            description:
              'The approval, decided; `loan`: the loan after a money command, once approved (null otherwise).',
            schema: decidedApproval,
          },
        },
        errors: [403, 404, 409],
      },
      async (ctx, input) => {
        const body = (input as { body?: { reason?: string } }).body;
        const approval = await decideApproval(deps, ctx.state.operator!, input.params.approval_id, {
          decision,
          reason: body?.reason ?? null,
        });
        ctx.state.auditDetail = {
          approval_id: approval.id,
          loan_id: approval.loanId,
          kind: approval.kind,
          maker_id: approval.makerId,
          status: approval.status,
        };
        const loan =
          approval.status === 'approved' && approval.loanId
            ? await findLoanForOps(deps.db, approval.loanId)
            : undefined;
        ctx.body = {
          ...presentApproval(approval, deps.clock()),
          loan: loan ? presentLoan(loan) : null,
        };
      },
    );
}
