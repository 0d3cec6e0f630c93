import type { Middleware } from 'koa';
import type { Db } from '../../db/client.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from '../../db/queries/idempotency.js';
import type { SealedBox } from '../../domain/sealed-box.js';
import { ProblemError, problems } from '../../errors.js';
import type { AppState } from '../context.js';
import { writeProblem } from './problem-handler.js';

const acceptableKey = /^[\x20-\x7e]{1,255}$/;
/** Outcomes that say nothing final about the request, so a retry must run it again. */
const notStored = (status: number) => status >= 500 || status === 401 || status === 429;
const replayedHeaders = ['Location', 'Content-Type'];

/**
 * `Idempotency-Key` on creating POSTs: the first response is kept for 24 hours under
 * (partner, environment, key) and replayed as is, with `Idempotent-Replayed: true`; the body of a
 * repeat is not compared (the spec says so). Runs after authentication, before body parsing and
 * validation, so a first 4xx is replayed too.
 */
export function idempotency(deps: {
  db: Db;
  sealedBox: SealedBox;
  clock: () => Date;
  publicBaseUrl: string;
}): Middleware<AppState> {
  return async (ctx, next) => {
    if (!('idempotency-key' in ctx.headers)) {
      await next();
      return;
    }
    const key = ctx.get('Idempotency-Key');
    if (!acceptableKey.test(key)) {
      throw problems.validation([
        {
          path: 'header.Idempotency-Key',
          code: 'invalid',
          message: 'Use 1 to 255 printable ASCII characters.',
        },
      ]);
    }
    const tenant = ctx.state.tenant;
    const scope = tenant ? `partner:${tenant.partnerId}:${tenant.environment}` : 'ops';
    const claim = await claimIdempotencyKey(deps.db, {
      scope,
      key,
      method: ctx.method,
      path: ctx.path,
      now: deps.clock(),
    });

    if (claim.kind === 'running') throw problems.idempotencyKeyInUse();
    if (claim.kind === 'completed') {
      const { record } = claim;
      // A well-formed key refused for what it already holds: a state, so 409 (not a 422).
      if (record.requestMethod !== ctx.method || record.requestPath !== ctx.path) {
        throw new ProblemError(
          'invalid_state',
          `This Idempotency-Key was used for ${record.requestMethod} ${record.requestPath}; use a new key for another operation.`,
        );
      }
      ctx.status = record.responseStatus ?? 200;
      ctx.body = JSON.parse(deps.sealedBox.open(record.responseBody ?? '')) as unknown;
      for (const [name, value] of Object.entries(record.responseHeaders ?? {}))
        ctx.set(name, value);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    try {
      await next();
    } catch (error) {
      writeProblem(ctx, error, deps.publicBaseUrl);
    }
    if (notStored(ctx.status)) {
      await releaseIdempotencyKey(deps.db, { scope, key });
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of replayedHeaders) {
      const value = ctx.response.get(name);
      if (value) headers[name] = value;
    }
    await completeIdempotencyKey(deps.db, {
      scope,
      key,
      status: ctx.status,
      headers,
      sealedBody: deps.sealedBox.seal(JSON.stringify(ctx.body ?? null)),
    });
  };
}
