import type { Middleware } from 'koa';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';

/**
 * A request answers within its budget (REQUEST_TIMEOUT): past it, 503 `service_unavailable` with
 * `Retry-After`, whatever it waits on (a database restarting, a Temporal server that answers
 * slowly). The work goes on and may still commit: a retry with the same Idempotency-Key then gets
 * its answer (409 while it runs, its stored response after), and without a key the partner reads
 * the record back, as after any 503.
 */
export function requestBudget(ms: number): Middleware<AppState> {
  return async (ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    const work = next();
    work.catch(() => {}); // if the budget answers first, a later failure has nowhere to go
    const overrun = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        ctx.state.log.warn({ budgetMs: ms }, 'request over its budget');
        reject(
          problems.serviceUnavailable(
            `A service this request needs did not answer within ${ms / 1000} s; retry shortly.`,
          ),
        );
      }, ms);
    });
    try {
      await Promise.race([work, overrun]);
    } finally {
      clearTimeout(timer);
    }
  };
}
