import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../src/domain/token-bucket.js';

describe('token buckets', () => {
  it('allow a burst, then one request per refilled token', () => {
    let now = 0;
    const buckets = new TokenBuckets(10, 3, () => now);
    expect([1, 2, 3].map(() => buckets.take('a').allowed)).toEqual([true, true, true]);
    const refused = buckets.take('a');
    expect(refused).toEqual({
      allowed: false,
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    });
    now += 100; // one token at 10 a second
    expect(buckets.take('a').allowed).toBe(true);
    expect(buckets.take('a').allowed).toBe(false);
  });

  it('never hold more than the burst, however long they rest', () => {
    let now = 0;
    const buckets = new TokenBuckets(1, 2, () => now);
    buckets.take('a');
    now += 3_600_000;
    expect(buckets.take('a').remaining).toBe(1);
    expect(buckets.take('a').allowed).toBe(true);
    expect(buckets.take('a').allowed).toBe(false);
  });

  it('keep callers apart, and peek without spending', () => {
    const buckets = new TokenBuckets(1, 1, () => 0);
    expect(buckets.peek('a').allowed).toBe(true);
    expect(buckets.peek('a').allowed).toBe(true);
    expect(buckets.take('a').allowed).toBe(true);
    expect(buckets.peek('a').allowed).toBe(false);
    expect(buckets.take('b').allowed).toBe(true);
  });

  it('report Retry-After in whole seconds, at least one, for slow rates', () => {
    let now = 0;
    const buckets = new TokenBuckets(10 / 300, 10, () => now); // 10 per 5 minutes
    for (let i = 0; i < 10; i++) buckets.take('x');
    expect(buckets.take('x').retryAfterSeconds).toBe(30);
    now += 29_000;
    expect(buckets.peek('x').retryAfterSeconds).toBe(1);
  });

  it('hold at most maxKeys buckets, forgetting the least recently used one first', () => {
    let now = 0;
    const buckets = new TokenBuckets(1, 1, () => now, 2);
    buckets.take('a');
    buckets.take('b');
    now += 500; // half refilled: both still limiting
    expect(buckets.take('a').allowed).toBe(false); // 'a' is now the more recently used
    buckets.take('c'); // a third key: 'b' goes
    expect(buckets.size).toBe(2);
    expect(buckets.peek('a').allowed).toBe(false);
    expect(buckets.peek('b').allowed).toBe(true);
  });

  it('stay bounded under a flood of fresh keys, and peeking stores nothing', () => {
    const buckets = new TokenBuckets(1 / 300, 10, () => 0, 1_000);
    for (let i = 0; i < 50_000; i++) buckets.take(`cli_${i} 10.0.${i % 256}.1`);
    expect(buckets.size).toBe(1_000);
    const empty = new TokenBuckets(1, 1, () => 0, 10);
    for (let i = 0; i < 100; i++) empty.peek(`key ${i}`);
    expect(empty.size).toBe(0);
  });
});
