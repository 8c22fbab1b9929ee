/**
 * When the Bundle controller looks at a Bundle again after a reconcile pass
 * or a finalize pass: the requeue decision, from the plan and what carrying
 * it out did. Pure.
 */
import type { BundlePlan } from './plan.js';
import type { ActionFailure } from './status.js';

export interface PassResult {
  plan: Pick<BundlePlan, 'issues' | 'requeueAfterMs'>;
  applyFailures: ReadonlyMap<string, ActionFailure>;
  pruneFailures: readonly unknown[];
  /** The pass wrote to the cluster. */
  wrote: boolean;
  /** Something the Bundle waits on sends no watch event to the operator (an object it does not label): poll. */
  pollAfterMs?: number;
  /**
   * Time since the plan read the server's clock (its requeueAfterMs counts
   * from then): acting and writing status took it, so the next expiry is
   * that much nearer.
   */
  sincePlannedMs?: number;
}

/**
 * Added to a wait for the next expiry: Node's timers count from the event
 * loop's cached time, in whole milliseconds, and may fire up to a
 * millisecond before the wait has passed; a pass woken before its deadline
 * deletes nothing (expiry is decided on the server's clock) and only waits
 * again.
 */
export const EXPIRY_WAKE_SLACK_MS = 2;

export type NextPass =
  /** Retry with backoff: something failed that a retry may fix. */
  | { kind: 'retry' }
  /** Look again after this long. */
  | { kind: 'after'; ms: number }
  /** Nothing to look at until a watch event says something changed. */
  | { kind: 'idle' };

/**
 * - a retriable issue (a kind not served yet), an apply failure that is not
 *   terminal, or a prune failure: retry with backoff;
 * - otherwise the sooner of `wroteRecheckMs` after a write (an apply that
 *   changed nothing on the server sends no watch event, and readiness is read
 *   from the result) and the next soft-delete expiry (counted from when the
 *   plan read the clock, a little after, never before);
 * - a poll when the Bundle waits on an object no watch reports;
 * - otherwise idle: watches bring the Bundle back.
 */
export function nextPass(result: PassResult, wroteRecheckMs: number): NextPass {
  if (result.plan.issues.some((i) => i.retriable)) return { kind: 'retry' };
  if ([...result.applyFailures.values()].some((f) => !f.terminal) || result.pruneFailures.length > 0) return { kind: 'retry' };
  const expiry =
    result.plan.requeueAfterMs === undefined
      ? Infinity
      : Math.ceil(Math.max(0, result.plan.requeueAfterMs - (result.sincePlannedMs ?? 0))) + EXPIRY_WAKE_SLACK_MS;
  const next = Math.min(result.wrote ? wroteRecheckMs : Infinity, expiry, result.pollAfterMs ?? Infinity);
  return Number.isFinite(next) ? { kind: 'after', ms: next } : { kind: 'idle' };
}

/** What a finalize pass did, for the next-pass decision. */
export interface FinalizeOutcome {
  /** Writes that went through. */
  wrote: number;
  /** Writes refused because the object changed since it was read (409, failed test). */
  changed: number;
  /** Other failures. */
  failed: number;
}

/**
 * After a finalize pass whose plan was not done: retry with backoff when a
 * step failed, else decide again after `recheckMs`, on fresh lists (the
 * finalizer goes only in a pass that finds nothing to write).
 */
export function finalizeNext(outcome: FinalizeOutcome, recheckMs: number): NextPass {
  if (outcome.failed > 0) return { kind: 'retry' };
  return { kind: 'after', ms: recheckMs };
}
