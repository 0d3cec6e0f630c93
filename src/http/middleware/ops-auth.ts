import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { DbOrTx } from '../../db/client.js';
import { operatorByToken } from '../../db/queries/operators.js';
import {
  breakGlass,
  hasRole,
  operatorRoles,
  readsMetricsOnly,
  type OperatorRole,
} from '../../domain/operators.js';
import { ProblemError, problems } from '../../errors.js';
import type { AppState } from '../context.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The ops API is for the service's own staff (contract §15): an operator's own token
 * (`opk_…`, `/ops/v1/operators`), or `OPS_TOKEN`, the break-glass administrator. Either way the
 * request carries its operator (`ctx.state.operator`): its actor and roles. Every use of the
 * break-glass token is counted (`ops_break_glass_uses_total`), logged and audited (issue 37).
 */
export function opsAuth(deps: {
  opsToken: string;
  db: DbOrTx;
  /** Every request the break-glass token authenticates (a counter an alert watches). */
  onBreakGlass?: () => void;
}): Middleware<AppState> {
  const expected = digest(deps.opsToken);
  return async (ctx, next) => {
    const token = /^Bearer (.+)$/.exec(ctx.get('Authorization'))?.[1];
    // Comparing fixed-length digests keeps the comparison constant-time whatever the input length.
    const operator = !token
      ? undefined
      : timingSafeEqual(digest(token), expected)
        ? breakGlass
        : token.startsWith('opk_')
          ? await operatorByToken(deps.db, token)
          : undefined;
    if (!operator) throw problems.unauthorized('Send your operator token as a bearer token.');
    // The scrape's operator reads the figures, never a record.
    if (readsMetricsOnly(operator) && ctx.path !== '/metrics')
      throw new ProblemError(
        'operator_role_required',
        'This operator holds metrics_reader only: it reads /metrics and nothing else.',
        { roles: operatorRoles.filter((role) => role !== 'metrics_reader') },
      );
    if (operator === breakGlass) {
      deps.onBreakGlass?.();
      ctx.state.log.warn({ method: ctx.method, path: ctx.path }, 'break-glass token used');
    }
    ctx.state.operator = operator;
    await next();
  };
}

/** An operation for some roles only: anyone else is 403 `operator_role_required`. */
export function requireRoles(roles: readonly OperatorRole[]): Middleware<AppState> {
  return async (ctx, next) => {
    const operator = ctx.state.operator;
    if (!operator || !hasRole(operator, roles)) throw problems.roleRequired(roles);
    await next();
  };
}
