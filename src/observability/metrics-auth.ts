/**
 * Authentication and authorization of /metrics requests (--metrics-auth=kubernetes):
 * the bearer token must pass a TokenReview, and its user must be allowed
 * `get` on the non-resource URL /metrics by a SubjectAccessReview, as
 * controller-runtime's secure metrics serving does. Decisions are cached for
 * a short while so that a scraper does not cost two API requests per scrape.
 *
 * The parsing and the cache are pure; the reviews are injected.
 */
import { createHash } from 'node:crypto';
import type { ReviewedUser, TokenReviewResult } from '../kube/reviews.js';

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none or it is malformed. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  return match?.[1];
}

export type MetricsDecision =
  { status: 200; user: string } | { status: 401; reason: string } | { status: 403; user: string; reason: string };

export interface DecisionCacheOptions {
  /** How long an allowed decision is reused. */
  allowTtlMs: number;
  /** How long a refusal (401 or 403) is reused: shorter, so a new RoleBinding takes effect soon. */
  denyTtlMs: number;
  /** Most entries kept; the oldest goes first. */
  maxEntries: number;
}

/**
 * Decisions by token digest (the tokens themselves are never kept), with a
 * time to live and a bound on the number of entries. Time is passed in.
 */
export class DecisionCache {
  private readonly entries = new Map<string, { decision: MetricsDecision; expiresAt: number }>();

  constructor(private readonly options: DecisionCacheOptions) {}

  static key(token: string): string {
    return createHash('sha256').update(token).digest('hex');
  }

  get(key: string, nowMs: number): MetricsDecision | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.decision;
  }

  set(key: string, decision: MetricsDecision, nowMs: number): void {
    const ttl = decision.status === 200 ? this.options.allowTtlMs : this.options.denyTtlMs;
    this.entries.delete(key);
    this.entries.set(key, { decision, expiresAt: nowMs + ttl });
    // Map iteration is insertion order: the first keys are the oldest.
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface MetricsReviewer {
  reviewToken(token: string): Promise<TokenReviewResult>;
  reviewAccess(user: ReviewedUser): Promise<{ allowed: boolean; reason?: string }>;
}

export const DEFAULT_DECISION_CACHE: DecisionCacheOptions = { allowTtlMs: 60_000, denyTtlMs: 10_000, maxEntries: 1024 };

/**
 * Decides one /metrics request from its Authorization header. A failing
 * review (API server unreachable) rejects and is not cached: the caller
 * answers 500 and the next scrape asks again.
 */
export class MetricsAuthorizer {
  private readonly cache: DecisionCache;

  constructor(
    private readonly reviewer: MetricsReviewer,
    private readonly now: () => number = Date.now,
    cacheOptions: DecisionCacheOptions = DEFAULT_DECISION_CACHE,
  ) {
    this.cache = new DecisionCache(cacheOptions);
  }

  async decide(authorization: string | string[] | undefined): Promise<MetricsDecision> {
    const token = bearerToken(authorization);
    if (token === undefined) return { status: 401, reason: 'a bearer token is required' };
    const key = DecisionCache.key(token);
    const cached = this.cache.get(key, this.now());
    if (cached) return cached;
    const decision = await this.review(token);
    this.cache.set(key, decision, this.now());
    return decision;
  }

  private async review(token: string): Promise<MetricsDecision> {
    const authn = await this.reviewer.reviewToken(token);
    if (!authn.authenticated) return { status: 401, reason: authn.error ? `token not accepted: ${authn.error}` : 'token not accepted' };
    const authz = await this.reviewer.reviewAccess(authn.user);
    if (!authz.allowed) return { status: 403, user: authn.user.username, reason: authz.reason ?? 'not allowed to get /metrics' };
    return { status: 200, user: authn.user.username };
  }
}
