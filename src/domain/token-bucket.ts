import { LRUCache } from 'lru-cache';
/**
 * Token buckets keyed by caller: each holds up to `burst` tokens and refills at `ratePerSecond`.
 * A request takes one token; an empty bucket answers with how long until the next token.
 */
export interface BucketDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available; 0 when allowed. */
  retryAfterSeconds: number;
}

/** A limit whose buckets may live elsewhere (another process's, the database's): one token a call. */
export interface RateLimiter {
  /** Bucket size: `RateLimit-Limit`. */
  readonly burst: number;
  take(key: string): Promise<BucketDecision>;
}

/**
 * What a bucket holding `tokens` (after this request's refill and its own token, if taken) tells
 * the caller, at `ratePerSecond` up to `burst`.
 */
export function bucketDecision(
  tokens: number,
  allowed: boolean,
  ratePerSecond: number,
  burst: number,
): BucketDecision {
  const missingForOne = Math.max(0, 1 - tokens);
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((burst - tokens) / ratePerSecond)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(missingForOne / ratePerSecond)),
  };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * At most `maxKeys` buckets, in an LRU cache: a flood of fresh keys (random client ids, many
 * addresses) pushes out the least recently used bucket, which is the one most likely full again,
 * instead of growing memory without limit.
 */
export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
    maxKeys = 100_000,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1))
      throw new RangeError('rate must be > 0 and burst ≥ 1');
    if (!(maxKeys >= 1)) throw new RangeError('maxKeys must be ≥ 1');
    this.buckets = new LRUCache({ max: maxKeys });
  }

  /** How many keys hold a bucket now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token if there is one. */
  take(key: string): BucketDecision {
    return this.decide(key, true);
  }

  /** Reports without taking: for limits that only count failures. */
  peek(key: string): BucketDecision {
    return this.decide(key, false);
  }

  private decide(key: string, consume: boolean): BucketDecision {
    const now = this.now();
    const existing = this.buckets.get(key);
    const bucket = existing ? this.refill(existing, now) : { tokens: this.burst, updatedAt: now };
    const allowed = bucket.tokens >= 1;
    if (allowed && consume) bucket.tokens -= 1;
    // A peek at an unknown key stores nothing: a full bucket carries no information.
    if (existing || consume) this.buckets.set(key, bucket);
    return bucketDecision(bucket.tokens, allowed, this.ratePerSecond, this.burst);
  }

  private refill(existing: Bucket, now: number): Bucket {
    const elapsedSeconds = Math.max(0, now - existing.updatedAt) / 1000;
    return {
      tokens: Math.min(this.burst, existing.tokens + elapsedSeconds * this.ratePerSecond),
      updatedAt: now,
    };
  }
}
