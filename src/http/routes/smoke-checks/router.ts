import { requestSmokeCheck, type CommandDeps } from '../../../commands/request-smoke-check.js';
import { findSmokeCheck } from '../../../db/queries/smoke-checks.js';
import { problems } from '../../../errors.js';
import type { ApiRouter } from '../../api-router.js';
import { presentSmokeCheck } from '../../../presenters/smoke-checks.js';
import { createSmokeCheckBody, smokeCheckParams, smokeCheckSchema } from './schema.js';

/** Ops: `POST /ops/v1/smoke-checks` starts one end-to-end check, `GET …/{id}` reads its outcome. */
export function smokeCheckRoutes(api: ApiRouter, deps: CommandDeps): void {
  api.add(
    {
      method: 'post',
      path: '/smoke-checks',
      operationId: 'createSmokeCheck',
      summary: 'Start an end-to-end smoke check',
      description:
        'Writes a row, starts a workflow that waits on a durable timer, and lets a worker activity complete the row.',
      tag: 'Smoke checks',
      security: 'ops',
      roles: ['admin'],
      idempotent: true,
      body: createSmokeCheckBody,
      responses: {
        202: {
          description: 'Accepted; poll the Location until `status` is `completed`.',
          schema: smokeCheckSchema,
          headers: { Location: 'Path of the smoke check.' },
        },
      },
    },
    async (ctx, { body }) => {
      const check = await requestSmokeCheck(deps, { delayMs: body.delay });
      ctx.status = 202;
      ctx.set('Location', `/ops/v1/smoke-checks/${check.id}`);
      ctx.body = presentSmokeCheck(check);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/smoke-checks/{id}',
      operationId: 'getSmokeCheck',
      summary: 'Read a smoke check',
      tag: 'Smoke checks',
      security: 'ops',
      roles: ['admin'],
      params: smokeCheckParams,
      responses: { 200: { description: 'The smoke check.', schema: smokeCheckSchema } },
      errors: [404],
    },
    async (ctx, { params }) => {
      const check = await findSmokeCheck(deps.db, params.id);
      if (!check) throw problems.notFound('smoke_check_not_found', `No smoke check ${params.id}.`);
      ctx.body = presentSmokeCheck(check);
    },
  );
}
