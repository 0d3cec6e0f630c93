import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import { pageOf } from '../../../db/pagination.js';
import {
  createOperator,
  deactivateOperator,
  findOperator,
  listAudit,
  listOperators,
  rotateOperatorToken,
  setOperatorRoles,
  type AuditEntry,
  type OperatorRecord,
} from '../../../db/queries/operators.js';
import { operatorRoles } from '../../../domain/operators.js';
import { problems, ProblemError } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { idField, pathId } from '../../ids.js';
import { listEnvelope, pageLimit, presentPage } from '../../list.js';

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
        'The operator’s bearer token for the ops API (`opk_…`). Shown only here and in idempotent replays; stored hashed.',
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

/**
 * Named staff (contract §15): administrators create operators with roles and their own tokens,
 * change their roles, rotate their tokens and deactivate them; `GET /ops/v1/audit` lists every ops
 * command with its actor, time and outcome.
 */
export function operatorRoutes(api: ApiRouter, deps: { db: Db }): void {
  api.add(
    {
      method: 'post',
      path: '/operators',
      operationId: 'createOperator',
      summary: 'Create an operator',
      description:
        'A named member of staff with roles and a bearer token of their own (shown once). 409 `operator_already_exists` for an e-mail already used.',
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
      responses: { 201: { description: 'The operator and its token.', schema: operatorWithToken } },
      errors: [409],
    },
    async (ctx, { body }) => {
      const created = await createOperator(deps.db, {
        name: body.name,
        email: body.email.toLowerCase(),
        roles: body.roles,
        createdBy: ctx.state.operator!.actor,
      });
      if (!created)
        throw new ProblemError('operator_already_exists', `An operator uses ${body.email}.`);
      ctx.state.auditDetail = { operator_id: created.operator.id, roles: body.roles };
      ctx.status = 201;
      ctx.set('Location', `/ops/v1/operators/${created.operator.id}`);
      ctx.body = { operator: present(created.operator), token: created.token };
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
      summary: 'Change an operator’s roles',
      tag,
      security: 'ops',
      roles: ['admin'],
      params: operatorParams,
      body: z.strictObject({ roles }).meta({ id: 'UpdateOperatorRequest' }),
      responses: { 200: { description: 'The operator.', schema: operatorSchema } },
      errors: [404],
    },
    async (ctx, { params, body }) => {
      const operator = await setOperatorRoles(deps.db, params.operator_id, body.roles);
      if (!operator) throw notFound(params.operator_id);
      ctx.state.auditDetail = { operator_id: operator.id, roles: body.roles };
      ctx.body = present(operator);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/operators/{operator_id}/token',
      operationId: 'rotateOperatorToken',
      summary: 'Issue a new token, revoking the operator’s others',
      tag,
      security: 'ops',
      roles: ['admin'],
      idempotent: true,
      params: operatorParams,
      responses: {
        201: { description: 'The operator and its new token.', schema: operatorWithToken },
      },
      errors: [404],
    },
    async (ctx, { params }) => {
      const token = await rotateOperatorToken(deps.db, params.operator_id);
      const operator = token && (await findOperator(deps.db, params.operator_id));
      if (!operator) throw notFound(params.operator_id);
      ctx.state.auditDetail = { operator_id: operator.id };
      ctx.status = 201;
      ctx.body = { operator: present(operator), token };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/operators/{operator_id}/deactivation',
      operationId: 'deactivateOperator',
      summary: 'Deactivate an operator for good',
      description: 'Its tokens are refused from now on; its name stays on everything it did.',
      tag,
      security: 'ops',
      roles: ['admin'],
      params: operatorParams,
      responses: { 200: { description: 'The operator, deactivated.', schema: operatorSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const operator = await deactivateOperator(deps.db, params.operator_id);
      if (!operator) throw notFound(params.operator_id);
      ctx.state.auditDetail = { operator_id: operator.id };
      ctx.body = present(operator);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/audit',
      operationId: 'listAudit',
      summary: 'The audit trail of ops commands',
      description:
        'Every ops command (reads aside), newest first: who (`actor`), what (`operation_id`, `method`, `path`, `detail`), when and with what outcome (`status`, `problem_code`), refusals included. Filter by `actor_id` or `operation_id`.',
      tag,
      security: 'ops',
      roles: ['admin'],
      query: z.strictObject({
        limit: pageLimit,
        starting_after: idField('aud').optional(),
        actor_id: z.string().max(64).optional(),
        operation_id: z.string().max(64).optional(),
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
      });
      if (!rows) throw problems.invalidCursor(query.starting_after ?? '');
      ctx.body = presentPage(pageOf(rows, query.limit), presentAudit);
    },
  );
}
