import { describe, expect, it } from 'vitest';
import type { Taken } from '../../src/db/queries/rate-limits.js';
import { SharedTokenBuckets, type TakeShared } from '../../src/limits/shared-token-buckets.js';

/**
 * The shared bucket's statement (src/db/queries/rate-limits.ts) in memory: refill for the time
 * since the last write, grant what is wanted or the whole tokens there are. Answers on a later
 * turn of the event loop, as a database does; counts its statements.
 */
function fakeStore() {
  const rows = new Map<string, { tokens: number; at: number }>();
  const store = {
    statements: 0,
    failNext: false,
    take: (async (params) => {
      await new Promise((resolve) => setImmediate(resolve));
      store.statements++;
      if (store.failNext) {
        store.failNext = false;
        throw new Error('connection lost');
      }
      const at = params.at!.getTime();
      const row = rows.get(params.key);
      const elapsed = row ? Math.max(0, at - row.at) / 1000 : 0;
      const level = row
        ? Math.min(params.burst, row.tokens + elapsed * params.ratePerSecond)
        : params.burst;
      const granted = Math.min(params.wanted, Math.max(0, Math.floor(level)));
      rows.set(params.key, { tokens: level - granted, at: Math.max(row?.at ?? at, at) });
      return { tokens: level - granted, granted } satisfies Taken;
    }) as TakeShared,
  };
  return store;
}

describe('shared token buckets', () => {
  it('hold two processes to one budget, refusing without a statement once the bucket is known empty', async () => {
    let now = 0;
    const store = fakeStore();
    const a = new SharedTokenBuckets(store.take, 'request', 2, 5, () => now);
    const b = new SharedTokenBuckets(store.take, 'request', 2, 5, () => now);
    expect(a.leaseSize).toBe(0); // 2 a second: every token decided by a statement

    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const decision = await (i % 2 === 0 ? a : b).take('cred');
      expect(decision.allowed).toBe(true);
      remaining.push(decision.remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    expect(store.statements).toBe(5);

    // b last saw one token left: it asks, and is refused.
    expect(await b.take('cred')).toEqual({
      allowed: false,
      remaining: 0,
      resetSeconds: 3,
      retryAfterSeconds: 1,
    });
    expect(store.statements).toBe(6);
    // Both now know the bucket is empty (a took the last token): refused here, the same answer.
    for (const buckets of [a, b, a]) {
      expect(await buckets.take('cred')).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    }
    expect(store.statements).toBe(6);

    now += 500; // one token back: the next request asks again, and gets it
    expect((await b.take('cred')).allowed).toBe(true);
    expect((await a.take('cred')).allowed).toBe(false);
    expect(store.statements).toBe(8);
  });

  it('send one statement at a time per key: requests that arrive meanwhile share the next, first come first served', async () => {
    const store = fakeStore();
    const a = new SharedTokenBuckets(store.take, 'request', 1, 4, () => 0);
    const decisions = await Promise.all(Array.from({ length: 7 }, () => a.take('cred')));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false, false, false]);
    expect(decisions.filter((d) => d.allowed).map((d) => d.remaining)).toEqual([3, 2, 1, 0]);
    // The first alone, then the six that queued behind it.
    expect(store.statements).toBe(2);
  });

  it('take a tenth of a second of a fast rate ahead, and never hand out more than the shared bucket gave', async () => {
    let now = 0;
    const store = fakeStore();
    const a = new SharedTokenBuckets(store.take, 'request', 1000, 200, () => now);
    const b = new SharedTokenBuckets(store.take, 'request', 1000, 200, () => now);
    expect(a.leaseSize).toBe(20); // min(100 a tenth of a second, a tenth of 200, 100)

    let allowed = 0;
    const remaining: number[] = [];
    for (let i = 0; i < 300; i++) {
      const decision = await (i % 2 === 0 ? a : b).take('cred');
      if (decision.allowed) allowed++;
      if (i < 4) remaining.push(decision.remaining);
    }
    // The shared bucket held 200 (the clock stood still): no more went out, and at most what each
    // process still holds ahead went unused.
    expect(allowed).toBeLessThanOrEqual(200);
    expect(allowed).toBeGreaterThanOrEqual(200 - 2 * a.leaseSize);
    // a took 21 (1 + 20 ahead), then b 21: each counts what the shared bucket kept and its own.
    expect(remaining).toEqual([199, 178, 198, 177]);
    // Far fewer statements than requests.
    expect(store.statements).toBeLessThan(40);

    now += 1000; // a second: the bucket is full again
    const again = await a.take('cred');
    expect(again.allowed).toBe(true);
  });

  it('reject the requests of a failed statement, and ask again for those that waited behind it', async () => {
    const store = fakeStore();
    const a = new SharedTokenBuckets(store.take, 'request', 1, 2, () => 0);
    store.failNext = true;
    const [first, second] = await Promise.allSettled([a.take('cred'), a.take('cred')]);
    expect(first.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { allowed: true, remaining: 1 } });
    expect(store.statements).toBe(2);
  });
});
