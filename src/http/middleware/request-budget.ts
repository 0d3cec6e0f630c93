import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { problems } from '../../errors.js';
import type { AppState } from '../context.js';
import { writeProblem } from './problem-handler.js';

/**
 * A request answers within its budget (REQUEST_TIMEOUT): past it, 503 `service_unavailable` with
 * `Retry-After`, whatever it waits on (a database restarting, a Temporal server that answers
 * slowly). The work goes on and may still commit: a retry with the same Idempotency-Key then gets
 * its answer (409 while it runs, its stored response after), and without a key the partner reads
 * the record back, as after any 503.
 *
 * The 503 goes out at once, and the work goes on writing to a response of its own that is never
 * sent: Koa drops what is set on a response already sent, and the Idempotency-Key must store what
 * the work answered, not the 503.
 */
export function requestBudget(ms: number, publicBaseUrl: string): Middleware<AppState> {
  return async (ctx, next) => {
    let timer: NodeJS.Timeout | undefined;
    const work = next();
    work.catch(() => {}); // if the budget answers first, a later failure has nowhere to go
    const overrun = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        // Nobody reads what the work answers now: a stream it sets (a file) is closed, not leaked.
        work
          .finally(() => {
            if (ctx.body instanceof Readable) ctx.body.destroy();
          })
          .catch(() => {});
        ctx.state.log.warn({ budgetMs: ms }, 'request over its budget');
        answerNow(
          ctx,
          problems.serviceUnavailable(
            `A service this request needs did not answer within ${ms / 1000} s; retry shortly.`,
          ),
          publicBaseUrl,
        );
        resolve();
      }, ms);
    });
    try {
      await Promise.race([work, overrun]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Sends the problem on the connection and hands the request a detached response. */
function answerNow(ctx: Context & { state: AppState }, problem: Error, publicBaseUrl: string) {
  writeProblem(ctx, problem, publicBaseUrl);
  const body = JSON.stringify(ctx.body);
  ctx.length = Buffer.byteLength(body);
  ctx.res.end(body);
  const detached = new ServerResponse(ctx.req);
  detached.statusCode = ctx.status; // what the access log reports for this request
  ctx.res = ctx.request.res = ctx.response.res = detached;
  ctx.respond = false; // sent already
}
