import type Router from '@koa/router';
import { requestSmokeCheck, type CommandDeps } from '../../../commands/request-smoke-check.js';
import { findSmokeCheck } from '../../../db/queries/smoke-checks.js';
import type { ProblemError } from '../../../errors.js';
import { problems } from '../../../errors.js';
import type { AppState } from '../../context.js';
import { jsonBody } from '../../middleware/json-body.js';
import { validated } from '../../validate.js';
import { presentSmokeCheck } from './presenter.js';
import { createSmokeCheckBody, smokeCheckParams } from './schema.js';

/** Ops: `POST /ops/v1/smoke-checks` starts one end-to-end check, `GET …/{id}` reads its outcome. */
export function smokeCheckRoutes(router: Router<AppState>, deps: CommandDeps): void {
  router.post(
    '/smoke-checks',
    jsonBody,
    validated({ body: createSmokeCheckBody }, async (ctx, { body }) => {
      const check = await requestSmokeCheck(deps, { delayMs: body.delay });
      ctx.status = 202;
      ctx.set('Location', `/ops/v1/smoke-checks/${check.id}`);
      ctx.body = presentSmokeCheck(check);
    }),
  );

  router.get('/smoke-checks/:id', async (ctx) => {
    const parsed = smokeCheckParams.safeParse(ctx.params);
    const check = parsed.success ? await findSmokeCheck(deps.db, parsed.data.id) : undefined;
    if (!check) throw notFound(ctx.params.id ?? '');
    ctx.body = presentSmokeCheck(check);
  });
}

const notFound = (id: string): ProblemError =>
  problems.notFound('smoke_check_not_found', `No smoke check ${id}.`);
