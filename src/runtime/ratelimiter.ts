/**
 * Rate limiters for the work queue, after client-go's
 * util/workqueue/default_rate_limiters.go: per-key exponential backoff, an
 * overall token bucket, and the "max of both" that controllers use by default.
 * Pure apart from the injected clock, which only the token buckets read.
 * The process's request budget (RequestBudget), which the transport awaits
 * before each request, is kube/request-budget.ts.
 */
import type { Clock } from '../kube/clock.js';

export interface RateLimiter<K> {
  /** How long to wait before `key` is retried; records one more failure for it. */
  when(key: K): number;
  /** Clears `key`'s failure history, after it was processed successfully. */
  forget(key: K): void;
  /** Failures recorded for `key` since it was last forgotten. */
  retries(key: K): number;
}

export interface ExponentialBackoffOptions {
  /** Delay after the first failure. Default 5 ms (client-go). */
  baseDelayMs?: number;
  /** Longest delay. Default 1000 s (client-go). */
  maxDelayMs?: number;
}

/** base * 2^failures, capped: 5 ms, 10 ms, 20 ms, ... up to 1000 s. */
export class ExponentialBackoffRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(options: ExponentialBackoffOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
    if (!(this.baseDelayMs >= 0) || !(this.maxDelayMs >= 0)) {
      throw new RangeError(`backoff delays must be non-negative, got base ${this.baseDelayMs} ms, max ${this.maxDelayMs} ms`);
    }
  }

  when(key: K): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2^1024 is Infinity in a double; Math.min keeps that at the cap.
    return Math.min(this.baseDelayMs * 2 ** failures, this.maxDelayMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  retries(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Tokens added per second. Default 10 (client-go). */
  qps?: number;
  /** Bucket size: how many retries may go through at once. Default 100 (client-go). */
  burst?: number;
}

/**
 * An overall limit on retries across all keys, like golang.org/x/time/rate's
 * Limiter.Reserve: each call takes a token now, and when the bucket is empty
 * the delay is how long until that token will have been refilled. Tokens may
 * go negative, so a burst of calls gets increasing delays. Keys are not
 * tracked: forget does nothing and retries is always 0.
 */
export class TokenBucketRateLimiter<K> implements RateLimiter<K> {
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly clock: Clock,
    options: TokenBucketOptions = {},
  ) {
    this.qps = options.qps ?? 10;
    this.burst = options.burst ?? 100;
    if (!(this.qps > 0) || !(this.burst >= 1)) {
      throw new RangeError(`token bucket needs qps > 0 and burst >= 1, got qps ${this.qps}, burst ${this.burst}`);
    }
    this.tokens = this.burst;
    this.lastMs = clock.now();
  }

  when(_key: K): number {
    const now = this.clock.now();
    // A clock that stepped back adds nothing, and counts on from where it is now (not from the later time, which
    // would delay every item for as long as the step).
    const elapsedMs = Math.max(0, now - this.lastMs);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs * this.qps) / 1000);
    this.lastMs = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_key: K): void {}

  retries(_key: K): number {
    return 0;
  }
}

/**
 * The longest delay any of `limiters` asks for; forget goes to all of them,
 * retries is the highest count. client-go's MaxOfRateLimiter.
 */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: ReadonlyArray<RateLimiter<K>>;

  constructor(...limiters: RateLimiter<K>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(key: K): number {
    // Every limiter must see the failure, so no short-circuiting.
    return Math.max(...this.limiters.map((limiter) => limiter.when(key)));
  }

  forget(key: K): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  retries(key: K): number {
    return Math.max(...this.limiters.map((limiter) => limiter.retries(key)));
  }
}

export interface ControllerRateLimiterOptions extends ExponentialBackoffOptions, TokenBucketOptions {}

/**
 * client-go's DefaultControllerRateLimiter: per-key backoff from 5 ms to
 * 1000 s, and 10 retries per second overall with bursts of 100, whichever
 * asks for the longer wait.
 */
export function controllerRateLimiter<K>(clock: Clock, options: ControllerRateLimiterOptions = {}): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ExponentialBackoffRateLimiter<K>(options), new TokenBucketRateLimiter<K>(clock, options));
}
