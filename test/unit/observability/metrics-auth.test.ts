import { DecisionCache, MetricsAuthorizer, bearerToken, type MetricsReviewer } from '../../../src/observability/metrics-auth.js';
import type { ReviewedUser, TokenReviewResult } from '../../../src/kube/reviews.js';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc.def-ghi', 'abc.def-ghi'],
    ['bearer abc', 'abc'],
    ['Bearer   abc  ', 'abc'],
    ['Bearer\tabc', 'abc'],
  ])('reads %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });

  it.each([[undefined], [''], ['Bearer'], ['Bearer '], ['Basic dTp4'], ['Bearer a b'], ['Bearerabc'], [['Bearer a', 'Bearer b']]])(
    'finds no token in %j',
    (header) => {
      expect(bearerToken(header)).toBeUndefined();
    },
  );
});

describe('DecisionCache', () => {
  const options = { allowTtlMs: 60_000, denyTtlMs: 10_000, maxEntries: 3 };

  it('keeps an allowed decision for its time to live and a refusal for the shorter one', () => {
    const cache = new DecisionCache(options);
    cache.set('a', { status: 200, user: 'u' }, 0);
    cache.set('d', { status: 403, user: 'u', reason: 'no' }, 0);
    expect(cache.get('a', 59_999)).toEqual({ status: 200, user: 'u' });
    expect(cache.get('d', 9_999)).toMatchObject({ status: 403 });
    expect(cache.get('d', 10_000)).toBeUndefined();
    expect(cache.get('a', 60_000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest entry beyond its bound; setting a key again makes it the newest', () => {
    const cache = new DecisionCache(options);
    for (const k of ['k1', 'k2', 'k3']) cache.set(k, { status: 200, user: k }, 0);
    cache.set('k1', { status: 200, user: 'k1' }, 1);
    cache.set('k4', { status: 200, user: 'k4' }, 2);
    expect(cache.size).toBe(3);
    expect(cache.get('k2', 3)).toBeUndefined();
    expect(['k1', 'k3', 'k4'].map((k) => cache.get(k, 3)?.status)).toEqual([200, 200, 200]);
  });

  it('keys by a digest, not by the token', () => {
    expect(DecisionCache.key('secret')).toMatch(/^[0-9a-f]{64}$/);
    expect(DecisionCache.key('secret')).not.toContain('secret');
  });
});

describe('MetricsAuthorizer', () => {
  function reviewer(tokens: Record<string, string>, allowed: Set<string>): MetricsReviewer & { calls: string[] } {
    const calls: string[] = [];
    return {
      calls,
      reviewToken: (token: string): Promise<TokenReviewResult> => {
        calls.push(`token:${token}`);
        const username = tokens[token];
        return Promise.resolve(
          username ? { authenticated: true, user: { username } } : { authenticated: false, error: 'invalid bearer token' },
        );
      },
      reviewAccess: (user: ReviewedUser) => {
        calls.push(`access:${user.username}`);
        return Promise.resolve(allowed.has(user.username) ? { allowed: true } : { allowed: false });
      },
    };
  }

  it('answers 401 without a token, without asking the API server', async () => {
    const r = reviewer({}, new Set());
    expect(await new MetricsAuthorizer(r).decide(undefined)).toMatchObject({ status: 401 });
    expect(await new MetricsAuthorizer(r).decide('Basic dTp4')).toMatchObject({ status: 401 });
    expect(r.calls).toEqual([]);
  });

  it('answers 401 for a token the TokenReview rejects, 403 for a user the SubjectAccessReview refuses, 200 otherwise', async () => {
    const r = reviewer({ good: 'reader', other: 'stranger' }, new Set(['reader']));
    const authorizer = new MetricsAuthorizer(r, () => 0);
    expect(await authorizer.decide('Bearer bad')).toEqual({ status: 401, reason: 'token not accepted: invalid bearer token' });
    expect(await authorizer.decide('Bearer other')).toEqual({ status: 403, user: 'stranger', reason: 'not allowed to get /metrics' });
    expect(await authorizer.decide('Bearer good')).toEqual({ status: 200, user: 'reader' });
    expect(r.calls).toEqual(['token:bad', 'token:other', 'access:stranger', 'token:good', 'access:reader']);
  });

  it('reuses a decision until it expires', async () => {
    let now = 0;
    const r = reviewer({ good: 'reader' }, new Set(['reader']));
    const authorizer = new MetricsAuthorizer(r, () => now, { allowTtlMs: 1_000, denyTtlMs: 100, maxEntries: 10 });
    await authorizer.decide('Bearer good');
    now = 999;
    await authorizer.decide('Bearer good');
    expect(r.calls).toEqual(['token:good', 'access:reader']);
    now = 1_000;
    await authorizer.decide('Bearer good');
    expect(r.calls).toEqual(['token:good', 'access:reader', 'token:good', 'access:reader']);
  });

  it('does not cache a failing review', async () => {
    let fail = true;
    const r: MetricsReviewer = {
      reviewToken: () =>
        fail ? Promise.reject(new Error('connection refused')) : Promise.resolve({ authenticated: true, user: { username: 'reader' } }),
      reviewAccess: () => Promise.resolve({ allowed: true }),
    };
    const authorizer = new MetricsAuthorizer(r, () => 0);
    await expect(authorizer.decide('Bearer good')).rejects.toThrow('connection refused');
    fail = false;
    expect(await authorizer.decide('Bearer good')).toEqual({ status: 200, user: 'reader' });
  });
});
