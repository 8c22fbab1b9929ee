/**
 * TokenReview and SubjectAccessReview: the API server authenticates a bearer
 * token and authorizes its user, so the operator's /metrics endpoint trusts
 * the cluster's own identities and RBAC instead of a secret of its own.
 */
import type { KubeClient } from './client.js';

/** Who a token belongs to, as the TokenReview reported it. */
export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type TokenReviewResult = { authenticated: true; user: ReviewedUser } | { authenticated: false; error?: string };

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function asUser(value: unknown): ReviewedUser | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const u = value as Record<string, unknown>;
  if (typeof u.username !== 'string' || u.username === '') return undefined;
  const user: ReviewedUser = { username: u.username };
  if (typeof u.uid === 'string' && u.uid !== '') user.uid = u.uid;
  if (isStringArray(u.groups)) user.groups = u.groups;
  if (typeof u.extra === 'object' && u.extra !== null) {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(u.extra as Record<string, unknown>)) if (isStringArray(v)) extra[k] = v;
    user.extra = extra;
  }
  return user;
}

/** Asks the API server whom `token` authenticates (POST tokenreviews; nothing is stored). */
export async function reviewToken(client: KubeClient, token: string): Promise<TokenReviewResult> {
  const body = (await client.raw('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token },
  })) as { status?: { authenticated?: unknown; user?: unknown; error?: unknown } };
  const status = body.status ?? {};
  const user = status.authenticated === true ? asUser(status.user) : undefined;
  if (user) return { authenticated: true, user };
  return typeof status.error === 'string' && status.error !== '' ? { authenticated: false, error: status.error } : { authenticated: false };
}

/** Asks the API server whether `user` may use `verb` on the non-resource URL `path` (POST subjectaccessreviews). */
export async function reviewNonResourceAccess(
  client: KubeClient,
  user: ReviewedUser,
  verb: string,
  path: string,
): Promise<{ allowed: boolean; reason?: string }> {
  const body = (await client.raw('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups ? { groups: user.groups } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      nonResourceAttributes: { path, verb },
    },
  })) as { status?: { allowed?: unknown; reason?: unknown } };
  const allowed = body.status?.allowed === true;
  const reason = typeof body.status?.reason === 'string' && body.status.reason !== '' ? body.status.reason : undefined;
  return reason ? { allowed, reason } : { allowed };
}
