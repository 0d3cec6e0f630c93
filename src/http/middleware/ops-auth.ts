import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The ops API is for the service's own staff: one bearer token from configuration. */
export function opsAuth(opsToken: string): Middleware<AppState> {
  const expected = digest(opsToken);
  return async (ctx, next) => {
    const match = /^Bearer (.+)$/.exec(ctx.get('Authorization'));
    // Comparing fixed-length digests keeps the comparison constant-time whatever the input length.
    if (!match?.[1] || !timingSafeEqual(digest(match[1]), expected)) {
      throw problems.unauthorized('Send the ops token as a bearer token.');
    }
    await next();
  };
}
