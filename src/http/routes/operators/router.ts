import { z } from 'zod';
import { pageOf } from '../../../db/pagination.js';
import type { ApprovalRequestDeps } from '../../../commands/approvals.js';
import { redeemEnrollmentCode } from '../../../commands/operator-enrollment.js';
import type { StaffCommandDeps } from '../../../commands/staff-changes.js';
import { requestStaffChange, startAdministrator } from '../../../commands/staff.js';
import type { Approval } from '../../../db/queries/approvals.js';
import {
  deactivateOperator,
  findOperator,
  listAudit,
  listOperators,
  rotateOperatorToken,
  type AuditEntry,
  type OperatorRecord,
} from '../../../db/queries/operators.js';
import { hasRole, isBreakGlass, operatorRoles } from '../../../domain/operators.js';
import { problems, ProblemError } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import type { AppContext } from '../../context.js';
import { answerHeld, approvalSchema } from '../approvals/schema.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, pageLimit, presentPage } from '../../list.js';
import { addDays, startOfBusinessDate } from '../../../domain/business-date.js';

const tag = 'Operators and audit';
const roles = z
  .array(z.enum(operatorRoles))
  .min(1)
  .max(operatorRoles.length)
  .refine((list) => new Set(list).size === list.length, {
    message: 'Each role once.',
    params: { code: 'duplicate' },
  })
  .meta({
    description:
      '`kyc_reviewer`: KYC reviews and credit decisions; `disbursement`: claims and reports disbursements; `payments`: payments, payoffs and refunds; `admin`: operators, partners, the audit, smoke checks.',
  });

const operatorSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    roles: z.array(z.enum(operatorRoles)),
    status: z.enum(['active', 'deactivated']),
    created_by: z
      .string()
      .meta({ description: 'The actor id of the administrator who created it.' }),
    created_at: z.iso.datetime(),
    deactivated_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Operator' });

const operatorWithToken = z
  .object({
    operator: operatorSchema,
    token: z.string().meta({
      description:
        'The operator’s bearer token for the ops API (`opk_…`). Shown only here (and, for your own rotation, in a replay of its Idempotency-Key to you); stored hashed.',
    }),
  })
  .meta({ id: 'OperatorWithToken' });

const auditSchema = z
  .object({
    id: z.string(),
    actor: z.object({ type: z.enum(['operator', 'partner', 'system']), id: z.string() }),
    operation_id: z.string(),
    method: z.string(),
    path: z.string(),
    request_id: z.string(),
    status: z
      .int()
      .nullable()
      .meta({ description: 'The answer’s status; null while it runs, or if its process died.' }),
    problem_code: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()).nullable(),
    started_at: z.iso.datetime(),
    finished_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'AuditEntry' });

const operatorParams = z.object({ operator_id: pathId('op', 'operator_not_found') });

const present = (operator: OperatorRecord) => ({
  id: operator.id,
  name: operator.name,
  email: operator.email,
  roles: operator.roles,
  status: operator.deactivatedAt ? ('deactivated' as const) : ('active' as const),
  created_by: operator.createdBy,
  created_at: operator.createdAt.toISOString(),
  deactivated_at: operator.deactivatedAt?.toISOString() ?? null,
});

const presentAudit = (entry: AuditEntry) => ({
  id: entry.id,
  actor: { type: entry.actorType, id: entry.actorId },
  operation_id: entry.operationId,
  method: entry.method,
  path: entry.path,
  request_id: entry.requestId,
  status: entry.status,
  problem_code: entry.problemCode,
  detail: entry.detail,
  started_at: entry.startedAt.toISOString(),
  finished_at: entry.finishedAt?.toISOString() ?? null,
});

const notFound = (id: string) =>
  problems.notFound('operator_not_found', `No operator ${id}, or it is deactivated.`);

const heldForApproval = {
  description:
    'Held for another administrator’s approval (`POST /ops/v1/approvals/{id}/approve`): nothing changed yet. A token it makes reaches the operator alone, as a one-time code mailed to the operator’s address (`POST /ops/v1/operator-enrollments`).',
  schema: approvalSchema,
  headers: { Location: 'Path of the approval.' },
};

/**
 * Named staff (contract §15) under dual control (issue 37): an administrator asks for an operator,
 * a change of roles, a reactivation or another's new token, and another administrator approves
 * (202, the approval); nobody asks or decides it about themselves. An operator rotates their own
 * token at once. The break-glass token only starts the first two administrators. Deactivation is
 * one administrator's, at once: taking access away is never held up. `GET /ops/v1/audit` lists
 * every ops command with its actor, time and outcome.
 */
export function operatorRoutes(api: ApiRouter, deps: ApprovalRequestDeps & StaffCommandDeps): void {
  const held = (ctx: AppContext, approval: Approval) =>
    answerHeld(ctx, approval, deps.clock(), { operator_id: approval.operatorId });

  api.add(
    {
      method: 'post',
      path: '/operators',
      operationId: 'createOperator',
      summary: 'Ask for an operator (or start a first administrator)',
      description:
        'An administrator asks; another approves (202, the approval), and the new operator receives a one-time code at this e-mail to redeem for a token (`POST /ops/v1/operator-enrollments`): neither administrator ever sees it. The break-glass token (`OPS_TOKEN`) instead starts an administrator at once (201), roles `["admin"]` only, while fewer than two administrators can act (403 `break_glass_limited` otherwise). 409 `operator_already_exists` for an e-mail already used.',
      tag,
      security: 'ops',
      roles: ['admin'],
      idempotent: true,
      body: z
        .strictObject({
          name: z.string().trim().min(1).max(200),
          email: z.email().max(254),
          roles,
        })
        .meta({ id: 'CreateOperatorRequest' }),
      responses: {
        201: {
          description: 'Started by the break-glass token: an administrator, its code mailed to it.',
          schema: operatorSchema,
          headers: { Location: 'Path of the operator.' },
        },
        202: heldForApproval,
      },
      errors: [403, 409],
    },
    async (ctx, { body }) => {
      const operator = ctx.state.operator!;
      const email = body.email.toLowerCase();
      if (!isBreakGlass(operator)) {
        held(
          ctx,
          await requestStaffChange(deps, operator, {
            kind: 'operator_creation',
            name: body.name,
            email,
            roles: body.roles,
          }),
        );
        return;
      }
      if (body.roles.length !== 1 || body.roles[0] !== 'admin')
        throw new ProblemError(
          'break_glass_limited',
          'The break-glass token starts administrators only (roles ["admin"]); they ask for everyone else.',
        );
      const started = await startAdministrator(deps, { name: body.name, email });
      ctx.state.auditDetail = { operator_id: started.id, roles: started.roles };
      ctx.status = 201;
      ctx.set('Location', `/ops/v1/operators/${started.id}`);
      ctx.body = present(started);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/operators',
      operationId: 'listOperators',
      summary: 'List operators',
      tag,
      security: 'ops',
      roles: ['admin'],
      query: z.strictObject({ limit: pageLimit, starting_after: idField('op').optional() }),
      responses: {
        200: { description: 'Newest first.', schema: listEnvelope(operatorSchema, 'OperatorList') },
      },
      errors: [400],
    },
    async (ctx, { query }) => {
      const rows = await listOperators(deps.db, query.limit, query.starting_after);
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      ctx.body = presentPage(pageOf(rows, query.limit), present);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/operators/{operator_id}',
      operationId: 'getOperator',
      summary: 'Retrieve an operator',
      tag,
      security: 'ops',
      roles: ['admin'],
      params: operatorParams,
      responses: { 200: { description: 'The operator.', schema: operatorSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const operator = await findOperator(deps.db, params.operator_id);
      if (!operator) throw notFound(params.operator_id);
      ctx.body = present(operator);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/operators/{operator_id}',
      operationId: 'updateOperatorRoles',
      summary: 'Ask for a change of an operator’s roles',
      description:
        'Granting or removing roles: held for another administrator’s approval. Nobody asks for (or approves) a change of their own roles: 403 `self_administration`.',
      tag,
      security: 'ops',
      roles: ['admin'],
      params: operatorParams,
      body: z.strictObject({ roles }).meta({ id: 'UpdateOperatorRequest' }),
      responses: { 202: heldForApproval },
      errors: [403, 404],
    },
    async (ctx, { params, body }) => {
      held(
        ctx,
        await requestStaffChange(deps, ctx.state.operator!, {
          kind: 'role_change',
          operatorId: params.operator_id,
          roles: body.roles,
        }),
      );
    },
  );

  api.add(
    {
      method: 'post',
      path: '/operators/{operator_id}/token',
      operationId: 'rotateOperatorToken',
      summary: 'A new token, revoking the operator’s others',
      description:
        'Your own: at once (201), the new token in the answer (replayed, under the same Idempotency-Key, to you alone). Another operator’s (administrators only): held for another administrator’s approval; approved, its tokens are revoked and it receives a one-time code at its address.',
      tag,
      security: 'ops',
      idempotent: true,
      params: operatorParams,
      responses: {
        201: { description: 'Your new token.', schema: operatorWithToken },
        202: heldForApproval,
      },
      errors: [403, 404],
    },
    async (ctx, { params }) => {
      const operator = ctx.state.operator!;
      if (params.operator_id !== operator.actor.id) {
        if (!hasRole(operator, ['admin'])) throw problems.roleRequired(['admin']);
        held(
          ctx,
          await requestStaffChange(deps, operator, {
            kind: 'token_rotation',
            operatorId: params.operator_id,
          }),
        );
        return;
      }
      const token = await rotateOperatorToken(deps.db, operator.actor.id);
      const record = token && (await findOperator(deps.db, operator.actor.id));
      if (!record) throw notFound(params.operator_id);
      ctx.state.auditDetail = { operator_id: record.id };
      ctx.status = 201;
      ctx.body = { operator: present(record), token };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/operators/{operator_id}/reactivation',
      operationId: 'reactivateOperator',
      summary: 'Ask for a deactivated operator to be active again',
      description:
        'Held for another administrator’s approval; approved, the operator (its old tokens still revoked) receives a one-time code at its address. 409 `invalid_state` when it is active.',
      tag,
      security: 'ops',
      roles: ['admin'],
      params: operatorParams,
      responses: { 202: heldForApproval },
      errors: [403, 404, 409],
    },
    async (ctx, { params }) => {
      held(
        ctx,
        await requestStaffChange(deps, ctx.state.operator!, {
          kind: 'operator_reactivation',
          operatorId: params.operator_id,
        }),
      );
    },
  );

  api.add(
    {
      method: 'post',
      path: '/operators/{operator_id}/deactivation',
      operationId: 'deactivateOperator',
      summary: 'Deactivate an operator',
      description:
        'At once, by one administrator (taking access away waits for nobody): its tokens are refused from now on; its name stays on everything it did. Active again only by an approved reactivation. Not by the break-glass token (403 `break_glass_limited`).',
      tag,
      security: 'ops',
      roles: ['admin'],
      params: operatorParams,
      responses: { 200: { description: 'The operator, deactivated.', schema: operatorSchema } },
      errors: [403, 404],
    },
    async (ctx, { params }) => {
      // Deactivating administrators would reopen the break-glass token's start of new ones.
      if (isBreakGlass(ctx.state.operator!))
        throw new ProblemError(
          'break_glass_limited',
          'The break-glass token deactivates nobody: an administrator does.',
        );
      const operator = await deactivateOperator(deps.db, params.operator_id);
      if (!operator) throw notFound(params.operator_id);
      ctx.state.auditDetail = { operator_id: operator.id };
      ctx.body = present(operator);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/operator-enrollments',
      operationId: 'redeemOperatorEnrollment',
      summary: 'Exchange a mailed code for your operator token',
      description:
        'The one-time code an operator received at its own address (a new operator, a reactivation, a rotation an administrator asked for) for the token itself, shown here once. The code works once, for 24 hours; 401 for one unknown, used or expired. Audited under the operator’s name.',
      tag,
      security: 'none',
      body: z
        .strictObject({
          code: z
            .string()
            .regex(/^oen_[A-Za-z0-9_-]{43}$/)
            .meta({ description: 'The code from the e-mail (`oen_…`).' }),
        })
        .meta({ id: 'RedeemOperatorEnrollmentRequest' }),
      responses: { 201: { description: 'You and your token.', schema: operatorWithToken } },
      errors: [401],
    },
    async (ctx, { body }) => {
      const { operator, token } = await redeemEnrollmentCode(deps, body.code, {
        method: ctx.method,
        path: ctx.path,
        requestId: ctx.state.requestId,
      });
      ctx.status = 201;
      ctx.body = { operator: present(operator), token };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/audit',
      operationId: 'listAudit',
      summary: 'The audit trail of ops commands',
      description:
        'Every ops command (reads aside), newest first: who (`actor`), what (`operation_id`, `method`, `path`, `detail`), when and with what outcome (`status`, `problem_code`), refusals included. Filter by `actor_id`, `operation_id`, or the days (America/Sao_Paulo) `from` … `to`, both included.',
      tag,
      security: 'ops',
      roles: ['admin'],
      query: z.strictObject({
        limit: pageLimit,
        starting_after: idField('aud').optional(),
        actor_id: z.string().max(64).optional(),
        operation_id: z.string().max(64).optional(),
        from: z.iso
          .date()
          .optional()
          .meta({ description: 'Only entries from this day on (America/Sao_Paulo).' }),
        to: z.iso
          .date()
          .optional()
          .meta({ description: 'Only entries up to this day, included (America/Sao_Paulo).' }),
      }),
      responses: {
        200: { description: 'Newest first.', schema: listEnvelope(auditSchema, 'AuditEntryList') },
      },
      errors: [400],
    },
    async (ctx, { query }) => {
      const rows = await listAudit(deps.db, {
        limit: query.limit,
        startingAfter: query.starting_after,
        actorId: query.actor_id,
        operationId: query.operation_id,
        ...auditDays(query.from, query.to),
      });
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      ctx.body = presentPage(pageOf(rows, query.limit), presentAudit);
    },
  );
}

/** The instants the audit's `from` … `to` days (São Paulo, both included) span. */
export const auditDays = (from: string | undefined, to: string | undefined) => ({
  since: from === undefined ? undefined : new Date(startOfBusinessDate(from)),
  until: to === undefined ? undefined : new Date(startOfBusinessDate(addDays(to, 1))),
});
