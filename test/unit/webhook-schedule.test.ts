import { describe, expect, it } from 'vitest';
import {
  classifyResponse,
  delayBeforeAttempt,
  parseRetryAfter,
  RETRY_DELAYS_MS,
} from '../../src/domain/webhooks/schedule.js';

describe('the delivery schedule', () => {
  it('is the spec’s: immediate, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([
      0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
    ]);
  });

  it('adds 0–10 % jitter, never early', () => {
    for (let attempt = 2; attempt <= 10; attempt++) {
      const base = RETRY_DELAYS_MS[attempt - 1]!;
      expect(delayBeforeAttempt(attempt, 0)).toBe(base);
      expect(delayBeforeAttempt(attempt, 0.999_999)).toBeLessThanOrEqual(Math.round(base * 1.1));
      expect(delayBeforeAttempt(attempt, 0.5)).toBe(Math.round(base * 1.05));
    }
    expect(() => delayBeforeAttempt(1, 0)).toThrow(RangeError);
    expect(() => delayBeforeAttempt(11, 0)).toThrow(RangeError);
  });

  it('lets Retry-After lengthen a delay but never shorten it, up to 24 hours', () => {
    expect(delayBeforeAttempt(2, 0, 60_000)).toBe(60_000);
    expect(delayBeforeAttempt(3, 0, 1_000)).toBe(300_000);
    expect(delayBeforeAttempt(2, 0, 3 * 86_400_000)).toBe(86_400_000);
  });

  it('reads Retry-After as seconds or an HTTP date, and ignores anything else', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:02:00 GMT', now)).toBe(120_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it.each([
    [200, null, 'succeeded'],
    [204, null, 'succeeded'],
    [301, null, 'retry'],
    [308, null, 'retry'],
    [400, null, 'retry'],
    [404, null, 'retry'],
    [410, null, 'gone'],
    [429, '30', 'retry'],
    [500, null, 'retry'],
    [502, null, 'retry'],
    [503, '60', 'retry'],
    [504, null, 'retry'],
  ])('answers HTTP %i as %s', (status, retryAfter, kind) => {
    expect(classifyResponse(status, retryAfter, 0).kind).toBe(kind);
  });

  it('keeps Retry-After only from 429 and 503', () => {
    expect(classifyResponse(429, '30', 0)).toEqual({ kind: 'retry', retryAfterMs: 30_000 });
    expect(classifyResponse(503, '60', 0)).toEqual({ kind: 'retry', retryAfterMs: 60_000 });
    expect(classifyResponse(500, '60', 0)).toEqual({ kind: 'retry' });
  });
});
