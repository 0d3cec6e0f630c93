import { like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteFullRateLimitBuckets } from '../../src/db/queries/rate-limits.js';
import { rateLimitBuckets } from '../../src/db/schema/index.js';
import { client, createPartner, tokenFor } from '../helpers/partners.js';
import { startStack, TestClock, type TestStack } from '../helpers/stack.js';

let stack: TestStack;
const clock = new TestClock();

beforeAll(async () => {
  stack = await startStack({
    worker: false,
    clock,
    env: { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '5' },
  });
});
afterAll(async () => {
  await stack?.stop();
});

describe('per-credential rate limits', () => {
  it('announce the budget, answer 429 with Retry-After once spent, and refill with time', async () => {
    const partner = await createPartner(stack);
    const api = client(stack, await tokenFor(stack, partner.credentials.sandbox));
    clock.freeze(); // nothing refills until the test moves time

    const remaining: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await api('/v3/auth/credentials');
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-limit')).toBe('5');
      remaining.push(response.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const limited = await api('/v3/auth/credentials');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1'); // one token every half second
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit-reset')).toBe('3'); // 5 tokens at 2 a second
    expect(await limited.json()).toMatchObject({ code: 'rate_limited', status: 429 });

    // Another credential has a bucket of its own.
    const other = client(stack, await tokenFor(stack, partner.credentials.production));
    expect((await other('/v3/auth/credentials')).status).toBe(200);

    clock.advance(500); // one token back
    expect((await api('/v3/auth/credentials')).status).toBe(200);
    expect((await api('/v3/auth/credentials')).status).toBe(429);
    clock.advance(2_500); // full again
    const refilled = await api('/v3/auth/credentials');
    expect(refilled.status).toBe(200);
    expect(refilled.headers.get('ratelimit-remaining')).toBe('4');
  });
});

describe('rate-limit housekeeping', () => {
  it('drops buckets full for longer than the grace, and keeps the others', async () => {
    const { db } = stack.database;
    const ago = (ms: number) => new Date(Date.now() - ms);
    const row = (key: string, fullAt: Date) => ({
      key: `housekeeping-test:${key}`,
      tokens: 0,
      granted: 0,
      updatedAt: ago(3_600_000),
      fullAt,
    });
    await db
      .insert(rateLimitBuckets)
      .values([
        row('long-full', ago(11 * 60_000)),
        row('just-full', ago(60_000)),
        row('refilling', new Date(Date.now() + 60_000)),
      ]);
    expect(await deleteFullRateLimitBuckets(db, 10 * 60_000, 1)).toBeGreaterThanOrEqual(1);
    const left = await db
      .select({ key: rateLimitBuckets.key })
      .from(rateLimitBuckets)
      .where(like(rateLimitBuckets.key, 'housekeeping-test:%'));
    expect(left.map((r) => r.key).sort()).toEqual([
      'housekeeping-test:just-full',
      'housekeeping-test:refilling',
    ]);
  });
});
