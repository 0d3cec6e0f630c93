import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../logger.js';
import type { HttpMetrics } from '../metrics.js';
import type { AppState } from '../context.js';

export const API_VERSION = '2026-03-01';

// A caller's request id is echoed only when it is short and printable, so it cannot forge log lines.
const acceptableRequestId = /^[\x21-\x7e]{1,200}$/;

/**
 * Outermost middleware: assigns the request id, stamps `API-Version` and the security headers, and records one access-log
 * line and one metrics sample per request, whatever the outcome.
 */
export function requestContext(
  logger: Logger,
  metrics: HttpMetrics,
  /** Headers every answer carries (the security headers). */
  headers: Record<string, string> = {},
  /** The access line's level: `debug` in development, where a terminal shows the logs. */
  accessLevel: 'info' | 'debug' = 'info',
): Middleware<AppState> {
  // The access line's fields are fixed and carry no personal data or secret (a hosted page's
  // token is masked from the path), so it skips the redaction pass: 29 µs a line with it, 1.4
  // without (measured), a tenth of a simple read's CPU. Every other line is redacted.
  const accessLog = logger.child({}, { redact: { paths: [] } });
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = acceptableRequestId.test(incoming)
      ? incoming
      : `req_${randomUUID().replaceAll('-', '')}`;
    ctx.state.requestId = requestId;
    // With tracing on, every line of the request names its trace (set by traceRequests).
    const traceId = ctx.state.traceId;
    const ids = traceId ? { requestId, traceId } : { requestId };
    // Made on first use: most requests log nothing but their access line.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (log ??= logger.child(ids)),
      enumerable: true,
    });
    ctx.set({ ...headers, 'X-Request-Id': requestId, 'API-Version': API_VERSION });
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel((ctx as { _matchedRoute?: string | RegExp })._matchedRoute);
      metrics.observe(ctx.method, route, ctx.status, seconds);
      accessLog[accessLevel](
        {
          ...ids,
          method: ctx.method,
          path: ctx.path.replace(hostedToken, '$1[redacted]'),
          route,
          status: ctx.status,
          durationMs: Math.round(seconds * 1000),
        },
        'request',
      );
    }
  };
}

// The token of a hosted page's link (`/hosted/signing/{token}`) is a credential of its own.
const hostedToken = /^(\/hosted\/[^/]+\/)[^/]+/;

// Unmatched paths share one label so a scanner cannot blow up the metrics' cardinality.
function routeLabel(matched: string | RegExp | undefined): string {
  if (matched === undefined) return 'unmatched';
  return typeof matched === 'string' ? matched : matched.source;
}
