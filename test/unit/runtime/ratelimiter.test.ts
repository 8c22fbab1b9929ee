import { FakeClock } from '../fake-clock.js';
import {
  controllerRateLimiter,
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
  type RateLimiter,
} from '../../../src/runtime/ratelimiter.js';

describe('ExponentialBackoffRateLimiter', () => {
  it.each<[string, ConstructorParameters<typeof ExponentialBackoffRateLimiter>[0], number, number[]]>([
    ['client-go defaults', undefined, 5, [5, 10, 20, 40, 80]],
    ['custom base', { baseDelayMs: 100 }, 4, [100, 200, 400, 800]],
    ['capped', { baseDelayMs: 1, maxDelayMs: 5 }, 5, [1, 2, 4, 5, 5]],
    ['zero base', { baseDelayMs: 0 }, 3, [0, 0, 0]],
  ])('%s', (_name, options, calls, want) => {
    const limiter = new ExponentialBackoffRateLimiter<string>(options);
    expect(Array.from({ length: calls }, () => limiter.when('k'))).toEqual(want);
    expect(limiter.retries('k')).toBe(calls);
  });

  it('reaches the 1000 s cap and stays there, even after thousands of failures', () => {
    const limiter = new ExponentialBackoffRateLimiter<string>();
    let last = 0;
    for (let i = 0; i < 2000; i++) last = limiter.when('k');
    expect(last).toBe(1_000_000);
  });

  it('tracks keys separately and forget resets one', () => {
    const limiter = new ExponentialBackoffRateLimiter<string>();
    limiter.when('a');
    limiter.when('a');
    limiter.when('b');
    limiter.forget('a');
    expect([limiter.retries('a'), limiter.retries('b'), limiter.when('a'), limiter.when('b')]).toEqual([0, 1, 5, 10]);
  });

  it('rejects negative delays', () => {
    expect(() => new ExponentialBackoffRateLimiter({ baseDelayMs: -1 })).toThrow(RangeError);
  });
});

describe('TokenBucketRateLimiter', () => {
  it.each<[string, { qps: number; burst: number }, Array<['when', string] | ['advance', number]>, number[]]>([
    [
      'a burst passes without delay',
      { qps: 10, burst: 3 },
      [
        ['when', 'a'],
        ['when', 'b'],
        ['when', 'c'],
      ],
      [0, 0, 0],
    ],
    [
      'beyond the burst, delays grow by 1/qps',
      { qps: 10, burst: 2 },
      [
        ['when', 'a'],
        ['when', 'a'],
        ['when', 'a'],
        ['when', 'b'],
      ],
      [0, 0, 100, 200],
    ],
    [
      'time refills the bucket',
      { qps: 10, burst: 1 },
      [
        ['when', 'a'],
        ['when', 'a'],
        ['advance', 200],
        ['when', 'a'],
      ],
      [0, 100, 0],
    ],
    [
      'refill never exceeds the burst',
      { qps: 10, burst: 2 },
      [
        ['advance', 60_000],
        ['when', 'a'],
        ['when', 'a'],
        ['when', 'a'],
      ],
      [0, 0, 100],
    ],
  ])('%s', (_name, options, steps, want) => {
    const clock = new FakeClock(0);
    const limiter = new TokenBucketRateLimiter<string>(clock, options);
    const delays: number[] = [];
    for (const step of steps) {
      if (step[0] === 'advance') clock.advance(step[1]);
      else delays.push(limiter.when(step[1]));
    }
    expect(delays.map((d) => Math.round(d))).toEqual(want);
    expect(limiter.retries('a')).toBe(0);
  });

  it.each([[{ qps: 0, burst: 1 }], [{ qps: 1, burst: 0 }]])('rejects %j', (options) => {
    expect(() => new TokenBucketRateLimiter(new FakeClock(0), options)).toThrow(RangeError);
  });
});

describe('MaxOfRateLimiter / controllerRateLimiter', () => {
  const fixed = (delay: number, retries: number): RateLimiter<string> & { forgotten: string[] } => {
    const forgotten: string[] = [];
    return { when: () => delay, forget: (key) => forgotten.push(key), retries: () => retries, forgotten };
  };

  it('takes the longest delay and the highest retry count, and forgets in all', () => {
    const a = fixed(10, 1);
    const b = fixed(30, 4);
    const limiter = new MaxOfRateLimiter(a, b);
    expect(limiter.when('k')).toBe(30);
    expect(limiter.retries('k')).toBe(4);
    limiter.forget('k');
    expect([a.forgotten, b.forgotten]).toEqual([['k'], ['k']]);
  });

  it.each<[string, number, 'one key' | 'a key per call', number]>([
    // 10 qps, burst 100: the first 100 retries are limited by backoff only.
    ['first retry of a key', 1, 'one key', 5],
    ['fifth retry of a key', 5, 'one key', 80],
    // After 101 calls in no time the bucket is one token short: 100 ms at 10 qps, above 5 ms backoff.
    ['bucket exhausted by many keys', 101, 'a key per call', 100],
  ])('controllerRateLimiter: %s', (_name, calls, keys, wantLast) => {
    const limiter = controllerRateLimiter<string>(new FakeClock(0));
    let last = 0;
    for (let i = 0; i < calls; i++) last = limiter.when(keys === 'one key' ? 'k' : `key-${i}`);
    expect(Math.round(last)).toBe(wantLast);
  });
});
