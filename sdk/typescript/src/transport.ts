/**
 * What every request goes through, as a `fetch` handed to openapi-fetch: an `Idempotency-Key` on
 * each POST (made once, so every retry of it carries the same key and the server replays the
 * first outcome), the bearer token, and retries with exponential backoff and jitter.
 */

export interface RetryPolicy {
  /** Retries after the first attempt (default 4). */
  maxRetries: number;
  /** The first backoff, doubled at each retry (default 500 ms). */
  baseDelayMs: number;
  /** The longest wait between attempts, `Retry-After` included (default 30 s). */
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

export interface TransportDeps {
  fetch: (request: Request) => Promise<Response>;
  retry: RetryPolicy;
  sleep: (ms: number) => Promise<void>;
  /** In [0, 1): the jitter's draw. */
  random: () => number;
  /** Makes an idempotency key (default a random UUID). */
  idempotencyKey: () => string;
}

/**
 * The wait before retry number `retry` (0 for the first): the server's `Retry-After` when it gave
 * one, else a full-jitter exponential backoff — a uniform draw below `base · 2^retry` — so clients
 * that failed together do not retry together. Never more than `maxDelayMs`.
 */
export function backoffDelay(
  retry: number,
  retryAfter: string | null,
  policy: RetryPolicy,
  random: () => number,
  now = Date.now(),
): number {
  const told = retryAfterMs(retryAfter, now);
  if (told !== undefined) return Math.min(told, policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Whether an answer is worth the same request again: 429 (rate limited) and 503 (a dependency
 * away) always; 409 `idempotency_key_in_use` too — the server says so while the first attempt of
 * the same key is still being stored, and answers the replay once it is. Never another 4xx.
 */
async function retryable(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status === 503) return true;
  if (response.status !== 409) return false;
  const body = await response
    .clone()
    .text()
    .catch(() => '');
  return body.includes('"idempotency_key_in_use"');
}

/** A fetch that retries 429, 503 and network failures, keeping one idempotency key per POST. */
export function retryingFetch(deps: TransportDeps): (request: Request) => Promise<Response> {
  return async (request) => {
    withIdempotencyKey(request, deps.idempotencyKey);
    for (let retry = 0; ; retry++) {
      const last = retry >= deps.retry.maxRetries;
      let response: Response;
      try {
        // A clone per attempt: the original's body stays unread for the next one.
        response = await deps.fetch(request.clone());
      } catch (error) {
        // The request may or may not have reached the server: the idempotency key makes a POST
        // safe to send again, and the other methods are safe by nature.
        if (last || request.signal.aborted) throw error;
        await deps.sleep(backoffDelay(retry, null, deps.retry, deps.random));
        continue;
      }
      if (last || !(await retryable(response))) return response;
      const delay = backoffDelay(
        retry,
        response.headers.get('retry-after'),
        deps.retry,
        deps.random,
      );
      await response.body?.cancel().catch(() => undefined);
      await deps.sleep(delay);
    }
  };
}

/** Gives a POST its `Idempotency-Key` unless the caller chose one; every later copy keeps it. */
export function withIdempotencyKey(request: Request, make: () => string): Request {
  if (request.method === 'POST' && !request.headers.has('Idempotency-Key'))
    request.headers.set('Idempotency-Key', make());
  return request;
}

/** A source of bearer tokens: a cached one, or a new one. */
export interface TokenSource {
  token(): Promise<string>;
  /** Drops `token` (the API refused it) so the next call fetches a new one. */
  invalidate(token: string): void;
}

/**
 * Adds the bearer token to each request; on a 401 the token is dropped and the request sent once
 * more with a fresh one (a token revoked or expired early; the server stores no outcome for a 401,
 * so the same idempotency key runs the request afresh).
 */
export function authenticatedFetch(
  send: (request: Request) => Promise<Response>,
  tokens: TokenSource,
): (request: Request) => Promise<Response> {
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const token = await tokens.token();
      const signed = request.clone();
      signed.headers.set('Authorization', `Bearer ${token}`);
      const response = await send(signed);
      if (response.status !== 401 || attempt > 0) return response;
      tokens.invalidate(token);
      await response.body?.cancel().catch(() => undefined);
    }
  };
}
