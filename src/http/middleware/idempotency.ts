import { setTimeout as sleep } from 'node:timers/promises';
import type { Middleware } from 'koa';
import type { Db } from '../../db/client.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  IDEMPOTENCY_HEARTBEAT_MS,
  releaseIdempotencyKey,
  renewIdempotencyKey,
  type KeyClaim,
} from '../../db/queries/idempotency.js';
import type { SealedBox } from '../../domain/sealed-box.js';
import { ProblemError, problems } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { AppState } from '../context.js';
import { dependencyUnavailable, writeProblem } from './problem-handler.js';

const acceptableKey = /^[\x20-\x7e]{1,255}$/;
/** Outcomes that say nothing final about the request, so a retry must run it again. */
const notStored = (status: number) => status >= 500 || status === 401 || status === 429;
const replayedHeaders = ['Location', 'Content-Type'];
/** How long an outcome is retried while the database is away before its key is left to lapse. */
const OUTCOME_PATIENCE_MS = 10 * 60 * 1000;

/**
 * Whose keys these are: a partner's environment, or one operator of the ops API. An operator's
 * keys are their own, so another operator's request under the same key runs as a first use and
 * never receives the first one's stored response (which may carry a secret: a partner's client
 * secrets, an operator's own new token).
 */
function scopeOf(state: AppState): string {
  if (state.tenant) return `partner:${state.tenant.partnerId}:${state.tenant.environment}`;
  if (state.operator) return `ops:${state.operator.actor.id}`;
  throw new Error('Idempotency-Key on a route with neither partner nor ops authentication');
}

export interface IdempotencyGuard {
  middleware: Middleware<AppState>;
  /** Waits (at most `ms`) for outcomes still being stored, before the database closes. */
  drain(ms: number): Promise<void>;
}

/**
 * `Idempotency-Key` on creating POSTs: the first response is kept for 24 hours under
 * (partner, environment, key) — (operator, key) on the ops API — and replayed as is, with `Idempotent-Replayed: true`; the body of a
 * repeat is not compared (the spec says so). Runs after authentication, before body parsing and
 * validation, so a first 4xx is replayed too.
 *
 * The work and the stored outcome agree: the key is held (renewed every IDEMPOTENCY_HEARTBEAT_MS)
 * until its outcome is stored, and storing it is retried while the database is away — after the
 * work committed, a PostgreSQL restart would otherwise leave the key to lapse and a retry to do
 * the work again. The partner gets the response once it is stored, or the request budget's 503
 * first (a retry then meets 409 `idempotency_key_in_use` until it is stored, then the replay). A
 * process killed between the work and the outcome leaves its keys to lapse after
 * IDEMPOTENCY_LOCK_MS: see docs/decisions.md for what a retry then does.
 */
export function idempotency(deps: {
  db: Db;
  sealedBox: SealedBox;
  clock: () => Date;
  publicBaseUrl: string;
}): IdempotencyGuard {
  const pending = new Set<Promise<unknown>>();

  /** Runs `write` until it lands, through the database going away and coming back. */
  const persist = async (write: () => Promise<boolean>, log: Logger, what: string) => {
    const giveUpAt = Date.now() + OUTCOME_PATIENCE_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        if (!(await write()))
          log.warn(`idempotency key lost before its outcome was ${what}: its hold had lapsed`);
        if (attempt > 0) log.info({ attempts: attempt + 1 }, `idempotency outcome ${what}`);
        return;
      } catch (error) {
        if (!dependencyUnavailable(error) || Date.now() > giveUpAt) throw error;
        if (attempt === 0)
          log.warn({ err: error }, `idempotency outcome not ${what} yet; retrying`);
        await sleep(Math.min(100 * 2 ** attempt, 2000));
      }
    }
  };

  const middleware: Middleware<AppState> = async (ctx, next) => {
    if (!('idempotency-key' in ctx.headers)) {
      await next();
      return;
    }
    const key = ctx.get('Idempotency-Key');
    if (!acceptableKey.test(key)) {
      throw problems.validation([
        {
          path: 'header.Idempotency-Key',
          code: 'invalid_format',
          message: 'Use 1 to 255 printable ASCII characters.',
        },
      ]);
    }
    const scope = scopeOf(ctx.state);
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

    const held: KeyClaim = { scope, key, claimId: claim.claimId };
    const log = ctx.state.log;
    const heartbeat = setInterval(() => {
      // A failed renewal is retried at the next beat; the outcome's own retries outlast an outage.
      renewIdempotencyKey(deps.db, held, deps.clock()).catch(() => {});
    }, IDEMPOTENCY_HEARTBEAT_MS);
    heartbeat.unref();
    /** Keeps the hold until `write` lands; the API's shutdown waits for it (drain). */
    const settle = (write: () => Promise<boolean>, what: string) => {
      const settled = persist(write, log, what).finally(() => {
        clearInterval(heartbeat);
        pending.delete(settled);
      });
      pending.add(settled);
      return settled;
    };

    try {
      try {
        await next();
      } catch (error) {
        writeProblem(ctx, error, deps.publicBaseUrl);
      }
      if (notStored(ctx.status)) {
        const release = () => releaseIdempotencyKey(deps.db, held);
        if ((await release().catch(() => undefined)) !== undefined) {
          clearInterval(heartbeat);
          return;
        }
        // The database is away: answered at once all the same (a 503 must not wait for it), the
        // key released once it can be; a retry meanwhile is told the key is in use.
        settle(release, 'released').catch((error: unknown) =>
          log.error({ err: error }, 'idempotency key not released; it lapses by itself'),
        );
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of replayedHeaders) {
        const value = ctx.response.get(name);
        if (value) headers[name] = value;
      }
      const response = {
        status: ctx.status,
        headers,
        sealedBody: deps.sealedBox.seal(JSON.stringify(ctx.body ?? null)),
      };
      // The partner is answered once the outcome is stored: a 2xx means a retry replays it.
      await settle(() => completeIdempotencyKey(deps.db, held, response), 'stored');
    } catch (error) {
      clearInterval(heartbeat); // a failure before the outcome was settled
      throw error;
    }
  };

  return {
    middleware,
    drain: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...pending]),
        new Promise((resolve) => (timer = setTimeout(resolve, ms))),
      ]);
      clearTimeout(timer);
    },
  };
}
