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

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1))
      throw new RangeError('rate must be > 0 and burst ≥ 1');
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
    const bucket = this.refill(key, now);
    const allowed = bucket.tokens >= 1;
    if (allowed && consume) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    const missingForOne = Math.max(0, 1 - bucket.tokens);
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((this.burst - bucket.tokens) / this.ratePerSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(missingForOne / this.ratePerSecond)),
    };
  }

  private refill(key: string, now: number): Bucket {
    const existing = this.buckets.get(key);
    if (!existing) {
      if (this.buckets.size >= this.maxKeys) this.evictFull(now);
      return { tokens: this.burst, updatedAt: now };
    }
    const elapsedSeconds = Math.max(0, now - existing.updatedAt) / 1000;
    return {
      tokens: Math.min(this.burst, existing.tokens + elapsedSeconds * this.ratePerSecond),
      updatedAt: now,
    };
  }

  // A full bucket carries no information: dropping it changes no decision.
  private evictFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      const refilled = bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.ratePerSecond;
      if (refilled >= this.burst) this.buckets.delete(key);
    }
  }
}
