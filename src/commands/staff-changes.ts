import type { Db, DbOrTx } from '../db/client.js';
import type { Approval, StaffApproval, StaffApprovalKind } from '../db/queries/approvals.js';
import { enrollmentOfApproval, insertEnrollment } from '../db/queries/operator-enrollments.js';
import {
  findOperator,
  findOperatorByEmail,
  insertOperator,
  reactivateOperator,
  revokeOperatorTokens,
  setOperatorRoles,
} from '../db/queries/operators.js';
import type { OperatorRole } from '../domain/operators.js';
import { ProblemError, problems } from '../errors.js';
import { mailEnrollmentCode, type EnrollmentMailDeps } from './operator-enrollment.js';

/** What an approved staff change runs with (the worker's activity gives it). */
export type StaffCommandDeps = EnrollmentMailDeps & { db: Db };

export const operatorNotFound = (id: string) =>
  problems.notFound('operator_not_found', `No operator ${id}, or it is deactivated.`);
export const operatorExists = (email: string) =>
  new ProblemError('operator_already_exists', `An operator uses ${email}.`);

/**
 * Runs an approved staff change (the approval's activity; retried until it lands). A change that
 * mails a code is done once its code is recorded, so a retry after that does nothing; one whose
 * operator moved on meanwhile (deactivated, its e-mail taken) is refused with a 4xx problem, which
 * ends the approval `failed`.
 */
export async function runStaffCommand(
  deps: StaffCommandDeps,
  approval: StaffApproval,
): Promise<void> {
  const kind: StaffApprovalKind = approval.kind;
  if (kind === 'role_change') {
    const { roles } = approval.request as { roles: OperatorRole[] };
    if (!(await setOperatorRoles(deps.db, approval.operatorId, roles)))
      throw operatorNotFound(approval.operatorId);
    return;
  }
  if (await enrollmentOfApproval(deps.db, approval.id)) return;
  const enroll = async (
    operator: { name: string; email: string; roles: readonly OperatorRole[] },
    reason: 'created' | 'reactivated' | 'rotated',
    change: (tx: DbOrTx) => Promise<boolean>,
  ) => {
    const code = await mailEnrollmentCode(deps, operator, reason);
    await deps.db.transaction(async (tx) => {
      if (!(await change(tx))) throw refusalFor(kind, approval, operator.email);
      await insertEnrollment(tx, {
        operatorId: approval.operatorId,
        approvalId: approval.id,
        ...code,
      });
    });
  };
  if (kind === 'operator_creation') {
    const request = approval.request as { name: string; email: string; roles: OperatorRole[] };
    const taken = await findOperatorByEmail(deps.db, request.email);
    if (taken && taken.id !== approval.operatorId) throw operatorExists(request.email);
    await enroll(request, 'created', async (tx) =>
      Boolean(
        await insertOperator(tx, {
          id: approval.operatorId,
          ...request,
          createdBy: { type: 'operator', id: approval.makerId },
        }),
      ),
    );
    return;
  }
  const operator = await findOperator(deps.db, approval.operatorId);
  if (!operator) throw operatorNotFound(approval.operatorId);
  if (kind === 'operator_reactivation') {
    if (!operator.deactivatedAt)
      throw new ProblemError('invalid_state', `Operator ${operator.id} is active.`);
    await enroll(operator, 'reactivated', async (tx) =>
      Boolean(await reactivateOperator(tx, operator.id)),
    );
    return;
  }
  if (operator.deactivatedAt) throw operatorNotFound(operator.id);
  await enroll(operator, 'rotated', (tx) => revokeOperatorTokens(tx, operator.id, deps.clock()));
}

/** What a change that found its operator moved on (within its transaction) answers. */
function refusalFor(kind: StaffApprovalKind, approval: Approval, email: string): ProblemError {
  if (kind === 'operator_creation') return operatorExists(email);
  if (kind === 'operator_reactivation')
    return new ProblemError('invalid_state', `Operator ${approval.operatorId} is active.`);
  return operatorNotFound(approval.operatorId ?? '');
}
