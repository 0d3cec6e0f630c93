import type { Context, Middleware } from 'koa';
import { ProblemError, problemBody, problems } from '../../errors.js';
import type { AppState } from '../context.js';

/**
 * The one place errors become responses. A ProblemError is answered as problem+json; anything else
 * is logged with its stack and answered as a bare 500, so no stack trace or SQL ever leaves.
 */
export function problemHandler(publicBaseUrl: string): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      writeProblem(ctx, error, publicBaseUrl);
    }
  };
}

/** Renders any thrown value onto the response; shared with middleware that must see the outcome. */
export function writeProblem(
  ctx: Context & { state: AppState },
  error: unknown,
  publicBaseUrl: string,
): void {
  const problem = toProblem(error);
  if (problem.status >= 500) ctx.state.log.error({ err: error }, 'request failed');
  ctx.status = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  ctx.body = problemBody(problem, publicBaseUrl);
  ctx.type = 'application/problem+json; charset=utf-8';
}

function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  // Body parsers and Koa itself throw http-errors with an `expose`d status for client mistakes.
  const status =
    typeof error === 'object' && error !== null && 'status' in error ? error.status : undefined;
  const type =
    typeof error === 'object' && error !== null && 'type' in error ? error.type : undefined;
  if (status === 413) return problems.payloadTooLarge('1 MiB');
  if (status === 415) return problems.unsupportedMediaType(['application/json']);
  if (status === 400 && (type === 'entity.parse.failed' || error instanceof SyntaxError)) {
    return problems.invalidJson(error instanceof Error ? error.message : 'unparseable body');
  }
  if (dependencyUnavailable(error)) {
    return problems.serviceUnavailable(
      'A service this request needs is unreachable; retry shortly.',
    );
  }
  return problems.internal();
}

// Connection-level failures of PostgreSQL (postgres.js and socket codes, server shutting down or
// starting) and Temporal (gRPC UNAVAILABLE, and RESOURCE_EXHAUSTED: a workflow's limit of 10
// Updates in flight, or the server's rate limits, still hit once the client's retries ran out),
// anywhere in the cause chain: drivers get wrapped.
const unavailableCodes = new Set<unknown>([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // The object store (src/storage): unreachable, timed out or failing.
  'FILE_STORE_UNAVAILABLE',
  '57P01',
  '57P02',
  '57P03',
]);
const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNAVAILABLE = 14;

export function dependencyUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (typeof current !== 'object') return false;
    const code = 'code' in current ? current.code : undefined;
    if (unavailableCodes.has(code) || code === GRPC_UNAVAILABLE || code === GRPC_RESOURCE_EXHAUSTED)
      return true;
    current = 'cause' in current ? current.cause : undefined;
  }
  return false;
}
