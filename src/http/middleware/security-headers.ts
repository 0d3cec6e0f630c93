import type { Middleware } from 'koa';
import type { AppState } from '../context.js';

const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * What every answer carries (contract §15): no MIME sniffing, never framed, and over https a
 * promise to stay there. Merged into the request context's one `ctx.set` call.
 */
export function securityHeaders(https: boolean): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "frame-ancestors 'none'",
    ...(https ? { 'Strict-Transport-Security': HSTS } : {}),
  };
}

/**
 * A hosted page's policy: its own inline styles, images of its own or inline, forms posting only
 * to itself; no script, no frame, no referrer leaking the link's token to another site.
 */
export const HOSTED_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'";

export function hostedPageHeaders(https: boolean): Middleware<AppState> {
  const headers = {
    ...securityHeaders(https),
    'Content-Security-Policy': HOSTED_PAGE_CSP,
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
  return async (ctx, next) => {
    ctx.set(headers);
    await next();
  };
}
