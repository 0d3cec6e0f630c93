/**
 * When the next delivery attempt may start. The spec's schedule: attempt 1 at once, then 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h — each counted from the end of the previous attempt,
 * plus 0–10 % jitter (never early). A receiver's `Retry-After` (on 429 or 503) can only lengthen the
 * wait, up to 24 hours. After the tenth attempt the delivery has failed.
 */
export const RETRY_DELAYS_MS = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
  20 * 3_600_000,
  24 * 3_600_000,
] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length;
const RETRY_AFTER_CAP_MS = 24 * 3_600_000;

/**
 * The wait before attempt `attempt` (2…10), from the end of the one before. `random` is a draw in
 * [0, 1): in a workflow, its deterministic Math.random.
 */
export function delayBeforeAttempt(attempt: number, random: number, retryAfterMs?: number): number {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined || attempt < 2)
    throw new RangeError(`no attempt ${attempt} in the schedule`);
  const scheduled = Math.round(base * (1 + 0.1 * random));
  if (retryAfterMs === undefined) return scheduled;
  return Math.max(scheduled, Math.min(retryAfterMs, RETRY_AFTER_CAP_MS));
}

export type AttemptOutcome =
  | { kind: 'succeeded' }
  /** 410: the endpoint asked never to be called again. */
  | { kind: 'gone' }
  | { kind: 'retry'; retryAfterMs?: number }
  /** The endpoint was deleted or disabled, or the delivery cancelled, before this attempt. */
  | { kind: 'cancelled' };

/** Answers that ask us to send to this endpoint more slowly (the spec's table). */
export const slowDownStatuses = new Set([429, 502, 504]);

/** What a receiver's answer means (the spec's table). Redirects are never followed. */
export function classifyResponse(
  status: number,
  retryAfterHeader: string | null,
  now: number,
): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'succeeded' };
  if (status === 410) return { kind: 'gone' };
  if (status === 429 || status === 503) {
    const retryAfterMs = parseRetryAfter(retryAfterHeader, now);
    return retryAfterMs === undefined ? { kind: 'retry' } : { kind: 'retry', retryAfterMs };
  }
  return { kind: 'retry' };
}

/** `Retry-After` as seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
