import { z } from 'zod';
import type { Approval } from '../../../db/queries/approvals.js';
import type { AppContext } from '../../context.js';
import {
  assignmentApprovalKinds,
  moneyApprovalKinds,
  pixApprovalKinds,
  staffApprovalKinds,
} from '../../../db/schema/index.js';
import { pathId } from '../../ids.js';

const actor = z
  .object({ type: z.literal('operator'), id: z.string() })
  .meta({ description: 'An operator (`op_…`) or `break_glass`.' });

export const approvalSchema = z
  .object({
    id: z.string(),
    kind: z
      .enum([
        ...moneyApprovalKinds,
        ...pixApprovalKinds,
        ...staffApprovalKinds,
        ...assignmentApprovalKinds,
      ])
      .meta({
        description:
          'Money moved by hand on a production loan (`disbursement`, `payment`, `payoff`, `refund`: decided by that desk, `disbursement` or `payments`), money due back returned by devolução at the PSP (`devolucao`: `payments`), a Pix no charge claimed booked on a loan or returned to its payer (`pix_match`, `pix_return`: decided by `payments`), the settlement of a batch of loans sold (`assignment`, contract §19: `request.assignment_id`; decided by `payments`), or staff administration (`operator_creation`, `role_change`, `operator_reactivation`, `token_rotation`: decided by an administrator other than the operator concerned).',
      }),
    loan_id: z
      .string()
      .nullable()
      .meta({ description: 'The loan of a money approval, or the one a `pix_match` books on.' }),
    end_to_end_id: z
      .string()
      .nullable()
      .meta({ description: 'The Pix of a `pix_match` or `pix_return`; null otherwise.' }),
    operator_id: z.string().nullable().meta({
      description:
        'The operator staff administration is about (the id a new one will have); null on money.',
    }),
    request: z.record(z.string(), z.unknown()).meta({
      description:
        'The command as it will run (`paid_at` fixed when it was asked for; a new operator’s `name`, `email` and `roles`; the `roles` a change sets).',
    }),
    status: z.enum(['pending', 'executing', 'approved', 'failed', 'rejected', 'expired']).meta({
      description:
        '`pending` until another operator decides or `expires_at` passes; `approved`: the command ran; `failed`: approved, but the loan refused it then (`outcome` says why); `rejected`, `expired`: it never runs.',
    }),
    maker: actor,
    checker: actor.nullable(),
    outcome: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.iso.datetime(),
    expires_at: z.iso.datetime(),
    decided_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Approval' });

export const approvalParams = z.object({ approval_id: pathId('apr', 'approval_not_found') });

const operatorActor = (id: string) => ({ type: 'operator' as const, id });

export function presentApproval(approval: Approval, now: Date) {
  const lapsed = approval.status === 'pending' && approval.expiresAt <= now;
  return {
    id: approval.id,
    kind: approval.kind,
    loan_id: approval.loanId,
    end_to_end_id: approval.endToEndId,
    operator_id: approval.operatorId,
    request: approval.request,
    status: lapsed ? ('expired' as const) : approval.status,
    maker: operatorActor(approval.makerId),
    checker: approval.checkerId ? operatorActor(approval.checkerId) : null,
    outcome: approval.outcome ?? null,
    created_at: approval.createdAt.toISOString(),
    expires_at: approval.expiresAt.toISOString(),
    decided_at: approval.decidedAt?.toISOString() ?? null,
  };
}

/**
 * Answers a command held for a second operator (dual control): 202, where its approval lives, the
 * approval; the audit row names it with `detail` (what it is about).
 */
export function answerHeld(
  ctx: AppContext,
  approval: Approval,
  now: Date,
  detail: Record<string, unknown>,
): void {
  ctx.state.auditDetail = { approval_id: approval.id, kind: approval.kind, ...detail };
  ctx.status = 202;
  ctx.set('Location', `/ops/v1/approvals/${approval.id}`);
  ctx.body = presentApproval(approval, now);
}
