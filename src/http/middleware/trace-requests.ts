import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { Middleware } from 'koa';
import type { AppState } from '../context.js';

/** The span attribute holding the request's X-Request-Id: how ops find a partner's request. */
export const REQUEST_ID_ATTRIBUTE = 'embedded_credit.request_id';

// OpenTelemetry's HTTP semantic conventions (stable): named here rather than loading their module.
const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
const ATTR_HTTP_ROUTE = 'http.route';

const untraced = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Outermost with tracing on (src/observability/tracing.ts): one server span per request, named by
 * its route template, the active context while the request runs, so the Temporal calls it makes
 * (and the workflows they start) are its children. Its trace id goes on the request's log lines.
 *
 * A caller's `traceparent` is not continued: partners are outside the service's trust boundary,
 * and their trace ids and sampling choices stay theirs. Partners see X-Request-Id, as before; the
 * span carries it, so ops search the trace by it. Health probes and metrics scrapes are not
 * traced. Only the route template is recorded, never the path (a hosted page's path holds its
 * token), nor a header, a query or a body.
 */
export function traceRequests(tracer: Tracer): Middleware<AppState> {
  return async (ctx, next) => {
    // Probes and scrapes, every few seconds each, would bury the requests' traces.
    if (untraced.has(ctx.path)) {
      await next();
      return;
    }
    const span = tracer.startSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: ctx.method } },
      ROOT_CONTEXT,
    );
    ctx.state.traceId = span.spanContext().traceId;
    try {
      await context.with(trace.setSpan(ROOT_CONTEXT, span), next);
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      if (typeof matched === 'string') {
        span.updateName(`${ctx.method} ${matched}`);
        span.setAttribute(ATTR_HTTP_ROUTE, matched);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, ctx.status);
      if (ctx.state.requestId) span.setAttribute(REQUEST_ID_ATTRIBUTE, ctx.state.requestId);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
