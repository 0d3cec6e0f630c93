import type { Middleware } from 'koa';
import type { RateLimiter } from '../../domain/token-bucket.js';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

/**
 * Per-credential rate limit (a token bucket every API process shares, src/limits/), announced on
 * every response with the `RateLimit-*` headers of the IETF draft, and a 429 with `Retry-After`
 * once spent.
 */
export function rateLimit(limiter: RateLimiter): Middleware<AppState> {
  return async (ctx, next) => {
    const key = ctx.state.credential?.id;
    if (!key) throw new Error('rateLimit() must follow partner authentication');
    const decision = await limiter.take(key);
    ctx.set({
      'RateLimit-Limit': String(limiter.burst),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    });
    if (!decision.allowed) throw problems.rateLimited(decision.retryAfterSeconds);
    await next();
  };
}
