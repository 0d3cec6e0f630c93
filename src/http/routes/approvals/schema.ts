import { z } from 'zod';
import type { Approval } from '../../../db/queries/approvals.js';
import { moneyApprovalKinds, staffApprovalKinds } from '../../../db/schema/index.js';
import { pathId } from '../../ids.js';

const actor = z
  .object({ type: z.literal('operator'), id: z.string() })
  .meta({ description: 'An operator (`op_…`) or `break_glass`.' });

export const approvalSchema = z
  .object({
    id: z.string(),
    kind: z.enum([...moneyApprovalKinds, ...staffApprovalKinds]).meta({
      description:
        'Money moved by hand on a production loan (`disbursement`, `payment`, `payoff`, `refund`: decided by that desk, `disbursement` or `payments`), or staff administration (`operator_creation`, `role_change`, `operator_reactivation`, `token_rotation`: decided by an administrator other than the operator concerned).',
    }),
    loan_id: z.string().nullable().meta({ description: 'The loan of a money approval.' }),
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
