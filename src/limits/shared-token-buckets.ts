import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import type { Taken } from '../db/queries/rate-limits.js';
import { bucketDecision, type BucketDecision, type RateLimiter } from '../domain/token-bucket.js';

/** Takes up to `wanted` tokens from the shared bucket `key` (`takeTokens`, in PostgreSQL). */
export type TakeShared = (params: {
  key: string;
  ratePerSecond: number;
  burst: number;
  wanted: number;
  at?: Date;
}) => Promise<Taken>;

/** How much of its rate a process may take ahead for a key: a tenth of a second's worth… */
const LEASE_SECONDS = 0.1;
/** …and never more than a tenth of the bucket, nor more than this. */
const MAX_LEASE = 100;

interface Waiter {
  resolve: (decision: BucketDecision) => void;
  reject: (error: unknown) => void;
}

interface KeyState {
  /** Tokens this process took ahead from the shared bucket and has not handed out yet. */
  credit: number;
  /** The shared bucket's level after this process's last statement, and when (local clock). */
  shared: number;
  sharedAt: number;
  /** Requests waiting for the next statement. */
  waiting: Waiter[];
  /** A statement is out. */
  busy: boolean;
}

/**
 * Token buckets every API process shares, in PostgreSQL (`rate_limit_buckets`, one statement per
 * decision, src/db/queries/rate-limits.ts): N processes hold a caller to one budget, not N. `name`
 * keeps one limit's keys apart from another's. The database's clock decides, unless `now` is given
 * (a test's clock).
 *
 * A statement per request doubled the database's work per read and cost the API a third to half
 * of its read throughput (docs/architecture.md, "Rate limits"), so a process spends fewer:
 *
 * - **One statement at a time per key.** Requests for a key that arrive while its statement is out
 *   wait for the next one, which asks for as many tokens as they are; the first to arrive get the
 *   tokens there are.
 * - **Tokens taken ahead.** A statement also asks for up to a tenth of a second of the key's rate
 *   more (at most a tenth of the burst, at most 100), and the process hands those out without a
 *   statement. Every token still comes out of the shared bucket, so across all processes a caller
 *   never gets more than the rate; a caller coming back from idle while processes still hold
 *   tokens taken earlier may get that many (at most the lease, per process) above the burst, and a
 *   caller whose tokens sit in one process may be refused by another until they are spent. Limits
 *   of less than 10 a second take nothing ahead: each of their tokens is decided by a statement.
 * - **Refusals without a statement.** While the level the last statement left, refilled since,
 *   is under one token, no statement can find one (other processes only take), so the request is
 *   refused here with the same `Retry-After`.
 *
 * `RateLimit-Remaining` and `-Reset` count the shared level as this process last saw it, refilled
 * since, plus the tokens it holds.
 */
export class SharedTokenBuckets implements RateLimiter {
  private readonly states: LRUCache<string, KeyState>;
  private readonly lease: number;
  private readonly clock: () => number;

  constructor(
    private readonly takeShared: TakeShared,
    readonly name: string,
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now?: () => number,
    maxKeys = 100_000,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1))
      throw new RangeError('rate must be > 0 and burst ≥ 1');
    this.lease = Math.floor(Math.min(ratePerSecond * LEASE_SECONDS, burst / 10, MAX_LEASE));
    this.clock = now ?? (() => performance.now());
    this.states = new LRUCache({ max: maxKeys });
  }

  /** Tokens a statement asks for beyond the requests waiting (0: none taken ahead). */
  get leaseSize(): number {
    return this.lease;
  }

  take(key: string): Promise<BucketDecision> {
    let state = this.states.get(key);
    if (state && !state.busy && state.waiting.length === 0) {
      const local = this.fromHand(state);
      if (local) return Promise.resolve(local);
    }
    if (!state) {
      state = { credit: 0, shared: this.burst, sharedAt: this.clock(), waiting: [], busy: false };
      this.states.set(key, state);
    }
    const waiting = state;
    return new Promise((resolve, reject) => {
      waiting.waiting.push({ resolve, reject });
      if (!waiting.busy) this.send(key, waiting);
    });
  }

  /** The shared level as last seen, refilled since (not above the burst). */
  private level(state: KeyState): number {
    const elapsed = Math.max(0, this.clock() - state.sharedAt) / 1000;
    return Math.min(this.burst, state.shared + elapsed * this.ratePerSecond);
  }

  /** A decision made here, from tokens held or a bucket known to be empty; undefined otherwise. */
  private fromHand(state: KeyState): BucketDecision | undefined {
    if (state.credit >= 1) {
      state.credit -= 1;
      return this.decision(Math.min(this.burst, this.level(state) + state.credit), true);
    }
    const level = this.level(state);
    if (level < 1) return this.decision(level, false);
    return undefined;
  }

  private decision(tokens: number, allowed: boolean): BucketDecision {
    return bucketDecision(tokens, allowed, this.ratePerSecond, this.burst);
  }

  private send(key: string, state: KeyState): void {
    const batch = state.waiting;
    state.waiting = [];
    state.busy = true;
    this.takeShared({
      key: `${this.name}:${key}`,
      ratePerSecond: this.ratePerSecond,
      burst: this.burst,
      wanted: batch.length + this.lease,
      ...(this.now ? { at: new Date(this.now()) } : {}),
    })
      .then(
        ({ tokens, granted }) => {
          state.shared = tokens;
          state.sharedAt = this.clock();
          const handed = Math.min(granted, batch.length);
          state.credit += granted - handed;
          // The i-th of the batch got a token if i < handed, and left behind what the statement
          // left, the tokens taken ahead and those the later ones of the batch got.
          for (const [i, waiter] of batch.entries()) {
            waiter.resolve(
              i < handed
                ? this.decision(
                    Math.min(this.burst, tokens + state.credit + (handed - i - 1)),
                    true,
                  )
                : this.decision(tokens, false),
            );
          }
        },
        (error: unknown) => {
          for (const waiter of batch) waiter.reject(error);
        },
      )
      .finally(() => {
        state.busy = false;
        // Those who came meanwhile: served from the tokens taken ahead, refused if the bucket is
        // known to be empty, the rest in the next statement.
        while (state.waiting.length > 0) {
          const local = this.fromHand(state);
          if (!local) break;
          state.waiting.shift()!.resolve(local);
        }
        if (state.waiting.length > 0) this.send(key, state);
      });
  }
}
