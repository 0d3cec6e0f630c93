import { sql } from 'drizzle-orm';
import type { Approval } from '../db/queries/approvals.js';
import { insertEnrollment } from '../db/queries/operator-enrollments.js';
import {
  findOperator,
  findOperatorByEmail,
  insertOperator,
  usableAdministrators,
  type OperatorRecord,
} from '../db/queries/operators.js';
import { newId } from '../domain/ids.js';
import {
  BOOTSTRAP_ADMINISTRATORS,
  breakGlass,
  isBreakGlass,
  type Operator,
  type OperatorRole,
} from '../domain/operators.js';
import { ProblemError } from '../errors.js';
import { requestApproval, type ApprovalRequestDeps } from './approvals.js';
import { mailEnrollmentCode } from './operator-enrollment.js';
import { operatorExists, operatorNotFound, type StaffCommandDeps } from './staff-changes.js';

/**
 * Staff administration under dual control (issue 37): creating an operator, changing its roles,
 * reactivating it or rotating another's token is asked by one administrator and runs once another
 * approves (the approvals' workflow runs it through `runStaffCommand`). Nobody asks or decides it
 * about themselves; the break-glass token asks none of it (it may only start the first two
 * administrators, `startAdministrator`). A token such a change makes reaches its operator alone,
 * through a mailed one-time code (src/commands/operator-enrollment.ts).
 */

/** Any fixed 64-bit number: starting administrators one at a time, so two starts make two. */
const BOOTSTRAP_LOCK = 0x73746166666e21n;

const breakGlassLimited = (detail: string) => new ProblemError('break_glass_limited', detail);
const selfAdministration = () =>
  new ProblemError(
    'self_administration',
    'Nobody changes their own roles or asks staff administration about themselves; another administrator asks.',
  );

/**
 * The break-glass token starts an administrator, at once (there is nobody to approve it yet),
 * while fewer than two administrators can act: a third, or anything else, is an administrator's
 * request that another approves. Its code goes to the new administrator's address, so the
 * token's holder never holds the administrator's token either.
 */
export async function startAdministrator(
  deps: StaffCommandDeps,
  input: { name: string; email: string },
): Promise<OperatorRecord> {
  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK.toString()}::bigint)`);
    if ((await usableAdministrators(tx, deps.clock())) >= BOOTSTRAP_ADMINISTRATORS)
      throw breakGlassLimited(
        `${BOOTSTRAP_ADMINISTRATORS} administrators can act: the break-glass token starts no more; an administrator asks for a new operator and another approves.`,
      );
    if (await findOperatorByEmail(tx, input.email)) throw operatorExists(input.email);
    const roles: OperatorRole[] = ['admin'];
    // Mailed inside the transaction: a mail that fails leaves no administrator behind.
    const code = await mailEnrollmentCode(deps, { ...input, roles }, 'created');
    const operator = await insertOperator(tx, {
      id: newId('op'),
      ...input,
      roles,
      createdBy: breakGlass.actor,
    });
    if (!operator) throw operatorExists(input.email);
    await insertEnrollment(tx, { operatorId: operator.id, approvalId: null, ...code });
    return operator;
  });
}

/** What a maker may ask about an operator, checked now: the approval then held. */
export async function requestStaffChange(
  deps: ApprovalRequestDeps,
  maker: Operator,
  change:
    | { kind: 'operator_creation'; name: string; email: string; roles: OperatorRole[] }
    | { kind: 'role_change'; operatorId: string; roles: OperatorRole[] }
    | { kind: 'operator_reactivation'; operatorId: string }
    | { kind: 'token_rotation'; operatorId: string },
): Promise<Approval> {
  if (isBreakGlass(maker))
    throw breakGlassLimited(
      'The break-glass token only starts the first two administrators: an administrator asks for this, another approves.',
    );
  if (change.kind === 'operator_creation') {
    if (await findOperatorByEmail(deps.db, change.email)) throw operatorExists(change.email);
    return requestApproval(
      deps,
      maker,
      change.kind,
      { operatorId: newId('op') },
      { name: change.name, email: change.email, roles: change.roles },
    );
  }
  if (change.operatorId === maker.actor.id) throw selfAdministration();
  const operator = await findOperator(deps.db, change.operatorId);
  const deactivated = Boolean(operator?.deactivatedAt);
  if (!operator || deactivated !== (change.kind === 'operator_reactivation'))
    throw operator && change.kind === 'operator_reactivation'
      ? new ProblemError('invalid_state', `Operator ${operator.id} is active.`)
      : operatorNotFound(change.operatorId);
  const request = change.kind === 'role_change' ? { roles: change.roles } : {};
  return requestApproval(deps, maker, change.kind, { operatorId: operator.id }, request);
}
