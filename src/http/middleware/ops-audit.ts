import type { Middleware } from 'koa';
import type { DbOrTx } from '../../db/client.js';
import { finishAudit, startAudit } from '../../db/queries/operators.js';
import { isBreakGlass } from '../../domain/operators.js';
import type { AppState } from '../context.js';
import { writeProblem } from './problem-handler.js';

/**
 * Audits an ops command (contract §15, `GET /ops/v1/audit`): its row is written before it runs,
 * with the operator, and its outcome — status and problem code — after, refusals included (a
 * role refused is audited too). A command whose row cannot be written does not run. Reads are
 * not audited, except every one the break-glass token makes (issue 37: each of its uses is) and
 * those that export borrowers' data (`reads`: the SCR 3040).
 */
export function opsAudit(deps: {
  db: DbOrTx;
  clock: () => Date;
  publicBaseUrl: string;
}): (operationId: string, options?: { reads: boolean }) => Middleware<AppState> {
  return (operationId, options) => async (ctx, next) => {
    const operator = ctx.state.operator;
    if (!operator) throw new Error('ops audit mounted without ops authentication');
    const read = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (read && !options?.reads && !isBreakGlass(operator)) {
      await next();
      return;
    }
    const id = await startAudit(deps.db, {
      actor: operator.actor,
      operationId,
      method: ctx.method,
      path: ctx.path,
      requestId: ctx.state.requestId,
      at: deps.clock(),
    });
    ctx.state.auditId = id;
    try {
      await next();
    } catch (error) {
      writeProblem(ctx, error, deps.publicBaseUrl);
    }
    const body = ctx.body as { code?: unknown } | null | undefined;
    const failed = ctx.status >= 400;
    await finishAudit(deps.db, id, {
      status: ctx.status,
      problemCode: failed && typeof body?.code === 'string' ? body.code : null,
      detail: ctx.state.auditDetail ?? null,
      at: deps.clock(),
    }).catch((error: unknown) =>
      ctx.state.log.error({ err: error, auditId: id }, 'audit row not completed'),
    );
  };
}
