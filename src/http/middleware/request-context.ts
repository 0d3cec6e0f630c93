import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.js';
import type { HttpMetrics } from '../metrics.js';
import type { AppState } from '../context.js';

export const API_VERSION = '2026-03-01';

// A caller's request id is echoed only when it is short and printable, so it cannot forge log lines.
const acceptableRequestId = /^[\x21-\x7e]{1,200}$/;

/**
 * Outermost middleware: assigns the request id, stamps `API-Version`, and records one access-log
 * line and one metrics sample per request, whatever the outcome.
 */
export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware<AppState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = acceptableRequestId.test(incoming)
      ? incoming
      : `req_${randomUUID().replaceAll('-', '')}`;
    ctx.state.requestId = requestId;
    ctx.state.log = logger.child({ requestId });
    ctx.set('X-Request-Id', requestId);
    ctx.set('API-Version', API_VERSION);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel((ctx as { _matchedRoute?: string | RegExp })._matchedRoute);
      metrics.observe(ctx.method, route, ctx.status, seconds);
      ctx.state.log.info(
        {
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          durationMs: Math.round(seconds * 1000),
        },
        'request',
      );
    }
  };
}

// Unmatched paths share one label so a scanner cannot blow up the metrics' cardinality.
function routeLabel(matched: string | RegExp | undefined): string {
  if (matched === undefined) return 'unmatched';
  return typeof matched === 'string' ? matched : matched.source;
}
