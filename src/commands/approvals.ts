import type { Approval, ApprovalKind, ApprovalReader } from '../db/queries/approvals.js';
import {
  findApproval,
  insertApproval,
  isAssignmentApproval,
  isMoneyApproval,
  isPixApproval,
  isStaffApproval,
} from '../db/queries/approvals.js';
import { findLoanForOps, type LoanView } from '../db/queries/loans.js';
import { proveDecision } from '../domain/approvals/decision-proof.js';
import { newId } from '../domain/ids.js';
import type { KeyRing } from '../domain/key-ring.js';
import {
  hasRole,
  isBreakGlass,
  type Actors,
  type Operator,
  type OperatorRole,
} from '../domain/operators.js';
import { ProblemError, problems } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  dispatchWorkflowStart,
  enqueueWorkflowStart,
  updateWithStart,
  type WorkflowStart,
} from '../temporal/outbox.js';
import { updateProblem } from '../temporal/update-problems.js';
import { workflowIds, workflowTypes } from '../temporal/workflow-ids.js';
import { decideUpdate, type ApprovalInput } from '../../workflows/approval/messages.js';
import { loanNotFound } from './loan-deps.js';
import {
  recordPayment,
  reportDisbursement,
  settleLoan,
  type LoanCommandDeps,
} from './loan-commands.js';
import { settleAssignment } from './assignment-settlement.js';
import { runDevolucaoRefund } from './devolucoes.js';
import { recordRefund, type RefundCommand } from './refunds.js';
import { runStaffCommand, type StaffCommandDeps } from './staff-changes.js';
import { runPixCommand } from './unmatched-pix.js';

/** Who may approve each kind: the desk that moves that money, or the administrators for staff. */
export const approvalRoles: Record<ApprovalKind, OperatorRole> = {
  disbursement: 'disbursement',
  payment: 'payments',
  payoff: 'payments',
  refund: 'payments',
  devolucao: 'payments',
  pix_match: 'payments',
  pix_return: 'payments',
  operator_creation: 'admin',
  role_change: 'admin',
  operator_reactivation: 'admin',
  token_rotation: 'admin',
  assignment: 'payments',
};

/**
 * Who reads approvals (issue 37): an operator reads the kinds it could decide — a desk its
 * money's, an administrator staff administration (not the money desks': the audit trail is the
 * administrators' view of those) — and whatever it asked for itself.
 */
export const approvalReader = (operator: Operator): ApprovalReader => ({
  kinds: (Object.keys(approvalRoles) as ApprovalKind[]).filter((kind) =>
    hasRole(operator, [approvalRoles[kind]]),
  ),
  operatorId: operator.actor.id,
});

export interface ApprovalDeps extends LoanCommandDeps {
  logger: Logger;
  /** APPROVAL_TTL: how long a pending approval waits for its second operator. */
  approvalTtlMs: number;
  /** APPROVAL_DECISION_KEYS: the proof of each decision, which the worker verifies. */
  approvalDecisionKeys: KeyRing;
}

const approvalStart = (approval: Approval, taskQueue: string): WorkflowStart => ({
  workflowId: workflowIds.approval(approval.id),
  workflowType: workflowTypes.approval,
  taskQueue,
  args: [
    {
      approvalId: approval.id,
      makerId: approval.makerId,
      expiresAt: approval.expiresAt.getTime(),
    } satisfies ApprovalInput,
  ],
  ...(isPixApproval(approval)
    ? {
        ...(approval.loanId
          ? {
              searchAttributes: {
                PartnerId: approval.partnerId!,
                Environment: approval.environment!,
                LoanId: approval.loanId,
              },
            }
          : {}),
        summary: `Approval ${approval.id}: ${approval.kind} of Pix ${approval.endToEndId}${approval.loanId ? ` to loan ${approval.loanId}` : ''}`,
      }
    : isMoneyApproval(approval)
      ? {
          searchAttributes: {
            PartnerId: approval.partnerId,
            Environment: approval.environment,
            LoanId: approval.loanId,
          },
          summary: `Approval ${approval.id}: ${approval.kind} on loan ${approval.loanId}`,
        }
      : isAssignmentApproval(approval)
        ? {
            summary: `Approval ${approval.id}: settlement of assignment ${String(approval.request.assignment_id)}`,
          }
        : {
            summary: `Approval ${approval.id}: ${approval.kind} of operator ${approval.operatorId}`,
          }),
});

/** What a pending approval needs to be asked for: its row and its workflow's start. */
export type ApprovalRequestDeps = Pick<
  ApprovalDeps,
  'db' | 'temporal' | 'taskQueue' | 'clock' | 'logger' | 'approvalTtlMs'
>;

/**
 * What an approval is about: a production loan's money, a Pix no charge claimed (and the loan it
 * is matched to), or an operator (staff).
 */
export type ApprovalSubject =
  | { loan: LoanView }
  | { pix: string; loan?: LoanView }
  | { operatorId: string }
  | { assignmentId: string };

/**
 * Dual control (contract §15, issue 37): a maker's command that moves money on a production loan,
 * or administers staff, is checked now and held as a pending approval; its workflow runs it once
 * another operator approves, or expires it. The approval and its workflow's start commit together
 * (the outbox).
 */
export async function requestApproval(
  deps: ApprovalRequestDeps,
  maker: Operator,
  kind: ApprovalKind,
  subject: ApprovalSubject,
  request: Record<string, unknown>,
): Promise<Approval> {
  const now = deps.clock();
  const { approval, start } = await deps.db.transaction(async (tx) => {
    const approval = await insertApproval(tx, {
      id: newId('apr'),
      kind,
      ...('operatorId' in subject
        ? { operatorId: subject.operatorId }
        : 'assignmentId' in subject
          ? { environment: 'production' as const }
          : {
              ...('pix' in subject ? { endToEndId: subject.pix } : {}),
              ...(subject.loan
                ? {
                    loanId: subject.loan.id,
                    partnerId: subject.loan.partnerId,
                    environment: subject.loan.environment,
                  }
                : { environment: 'production' as const }),
            }),
      request,
      makerId: maker.actor.id,
      status: 'pending',
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.approvalTtlMs),
    });
    return {
      approval,
      start: await enqueueWorkflowStart(tx, approvalStart(approval, deps.taskQueue)),
    };
  });
  await dispatchWorkflowStart(deps, start);
  return approval;
}

/** A second operator approves or rejects; the approval as it then stands. */
export async function decideApproval(
  deps: ApprovalDeps,
  checker: Operator,
  approvalId: string,
  decision: { decision: 'approve' | 'reject'; reason: string | null },
): Promise<Approval> {
  const approval = await findApproval(deps.db, approvalId);
  if (!approval) throw problems.notFound('approval_not_found', `No approval ${approvalId}.`);
  // A decision is a named person's: the break-glass token holds every role but decides nothing.
  if (isBreakGlass(checker))
    throw new ProblemError(
      'break_glass_limited',
      'The break-glass token decides no approval: a named operator with the role must.',
    );
  const role = approvalRoles[approval.kind];
  if (!hasRole(checker, [role])) throw problems.roleRequired([role]);
  if (checker.actor.id === approval.makerId) throw makerRefused();
  if (approval.operatorId === checker.actor.id)
    throw new ProblemError(
      'self_administration',
      'Nobody decides staff administration about themselves; another administrator must.',
    );
  if (approval.status !== 'pending') {
    // The same checker's same decision again (a retry after a 503): the approval as it stands.
    const taken =
      decision.decision === 'approve'
        ? ['executing', 'approved', 'failed'].includes(approval.status)
        : approval.status === 'rejected';
    if (taken && approval.checkerId === checker.actor.id) return approval;
    throw new ProblemError('invalid_state', `The approval is ${approval.status}.`);
  }
  try {
    await updateWithStart(
      deps.temporal,
      approvalStart(approval, deps.taskQueue),
      decideUpdate,
      [
        {
          decision: decision.decision,
          checkerId: checker.actor.id,
          reason: decision.reason,
          // Made only here, after the checks above: the workflow runs nothing without it.
          proof: proveDecision(deps.approvalDecisionKeys, {
            approvalId: approval.id,
            decision: decision.decision,
            checkerId: checker.actor.id,
          }),
        },
      ],
      `decide:${approval.id}`,
    );
  } catch (error) {
    const ended = async () => (await findApproval(deps.db, approvalId))?.status ?? 'ended';
    const status = await ended();
    throw updateProblem(error, {
      workflow: 'The approval’s workflow',
      closed: () => new ProblemError('invalid_state', `The approval is ${status}.`),
      byType: {
        invalid_state: (message) => new ProblemError('invalid_state', message),
        approval_expired: (message) => new ProblemError('invalid_state', message),
        approval_by_maker: () => makerRefused(),
      },
    });
  }
  return (await findApproval(deps.db, approvalId))!;
}

const makerRefused = () =>
  new ProblemError(
    'approval_by_maker',
    'The operator who asked for this cannot decide it; another operator must.',
  );

/** What the worker's activity gives an approved command to run with. */
export type ApprovedCommandDeps = LoanCommandDeps &
  StaffCommandDeps & {
    logger: Logger;
    present: (loan: LoanView) => Record<string, unknown>;
  };

/**
 * Runs an approved command (the approval's workflow, through its activity). Each kind is
 * idempotent on its own, so a retry after it landed changes nothing: a payment or refund by its
 * reference, a disbursement by the loan's having been disbursed, staff administration by the
 * approval's id (src/commands/staff.ts).
 */
export async function runApprovedCommand(
  deps: ApprovedCommandDeps,
  approval: Approval,
): Promise<void> {
  if (isStaffApproval(approval)) return runStaffCommand(deps, approval);
  if (isAssignmentApproval(approval))
    return settleAssignment(deps, approval, {
      actor: { type: 'operator', id: approval.makerId },
      ...(approval.checkerId ? { approvedBy: { type: 'operator', id: approval.checkerId } } : {}),
    });
  if (isPixApproval(approval)) return runPixCommand(deps, approval);
  if (!isMoneyApproval(approval)) throw new Error(`approval ${approval.id}: unknown kind`);
  const loan = await findLoanForOps(deps.db, approval.loanId);
  if (!loan) throw loanNotFound(approval.loanId);
  const request = approval.request;
  const actors: Actors = {
    actor: { type: 'operator', id: approval.makerId },
    ...(approval.checkerId ? { approvedBy: { type: 'operator', id: approval.checkerId } } : {}),
  };
  switch (approval.kind) {
    case 'disbursement':
      if (loan.disbursedAt) return;
      // Dated when the maker reported it: the money went out then, whenever the approval came.
      await reportDisbursement(
        deps,
        loan,
        { outcome: 'confirmed', at: typeof request.at === 'string' ? request.at : undefined },
        actors,
      );
      return;
    case 'payment':
      await recordPayment(deps, loan, request, actors);
      return;
    case 'payoff':
      await settleLoan(deps, loan, request, actors);
      return;
    case 'refund':
      await recordRefund(deps, loan.id, request as unknown as RefundCommand, deps.present, actors);
      return;
    case 'devolucao':
      await runDevolucaoRefund(deps, approval, actors);
      return;
  }
}
