/**
 * The one guarded write: a DELETE with uid (and resourceVersion)
 * preconditions, or a PATCH that pins what it was computed from (JSON-patch
 * tests, a resourceVersion), sent once, and after a stale answer read fresh,
 * decided again by the caller's re-decision and sent again, at most
 * `retries` times. Every answer comes back as one typed outcome; the module
 * writes no event, status or log (each caller reports its outcomes as it
 * always has).
 *
 * Classification (errors.ts), in this order:
 * - refused: a SendGuard or the write fence refused it; nothing was sent.
 * - gone: 404 (thrown), or a DELETE answered 'not-found' (no `error` then).
 * - stale: the object changed since it was read. `stale: 'conflict'` counts
 *   only a 409 (a failed uid or resourceVersion precondition); `'conflict-or-failed-test'`
 *   also a 422 with no field causes (isStaleWrite: a JSON patch whose test
 *   or path no longer applies). The default is the precise one per verb: a
 *   DELETE carries no patch test ('conflict'), a PATCH may ('conflict-or-failed-test').
 * - forbidden: 403.
 * - invalid: a 422 the server found invalid as such (isInvalidWrite): report it, never retry it.
 * - failed: anything else (a 500, a network error, a 422 on a DELETE counted as not stale).
 * A re-decision that returns undefined ends with `declined`: nothing (more) sent.
 * Errors of the fresh read itself are thrown as they are, not classified.
 */
import type { DeleteOptions, PatchOptions, PatchType } from './requests.js';
import {
  isConflict,
  isForbidden,
  isInvalidWrite,
  isNotFound,
  isSendRefused,
  isStaleWrite,
  KubeApiError,
  type SendRefused,
} from './errors.js';
import type { KubeObject, ResourceType } from './types.js';

export type StaleRule = 'conflict' | 'conflict-or-failed-test';

export type WriteOutcome<R> =
  /** The server took the write; `result` is its answer; `sends` counts the requests made. */
  | { kind: 'written'; result: R; sends: number }
  /** A decision (the first, or one on a fresh read) said not to send. */
  | { kind: 'declined'; sends: number }
  /** The object changed since it was read, and no retry is left. */
  | { kind: 'stale'; error: KubeApiError; sends: number }
  /** The object is not there: a thrown 404 (`error`), or a DELETE that answered 'not-found'. */
  | { kind: 'gone'; error?: KubeApiError; sends: number }
  | { kind: 'forbidden'; error: KubeApiError; sends: number }
  | { kind: 'invalid'; error: KubeApiError; sends: number }
  /** Not sent: a SendGuard or the write fence refused it. */
  | { kind: 'refused'; error: SendRefused; sends: number }
  | { kind: 'failed'; error: unknown; sends: number };

/** The outcomes of a write that did not go through (`gone` without an error: a DELETE answered 'not-found'). */
export type WriteFailure<R = unknown> = Exclude<WriteOutcome<R>, { kind: 'written' | 'declined' }>;

/**
 * Read fresh and decide again. `read(n)` is the n-th fresh read (0 is the one
 * before the first send when `readFirst`); `decide` is pure over what it read
 * (undefined: gone) and returns what to send next, or undefined: do not send.
 */
export interface Redecide<P> {
  read(n: number): Promise<KubeObject | undefined>;
  decide(fresh: KubeObject | undefined): P | undefined;
  /** Fresh reads (and sends) after a stale answer; 0: a stale answer ends it. */
  retries: number;
  /** Read and decide before the first send too (the first send's `P` is then not given). */
  readFirst?: boolean;
}

/** Classifies one thrown write error (see the module comment). */
export function classifyWriteError(err: unknown, stale: StaleRule): Exclude<WriteOutcome<never>, { kind: 'written' | 'declined' }> {
  const sends = 1;
  if (isSendRefused(err)) return { kind: 'refused', error: err, sends };
  if (err instanceof KubeApiError) {
    if (isNotFound(err)) return { kind: 'gone', error: err, sends };
    if (stale === 'conflict' ? isConflict(err) : isStaleWrite(err)) return { kind: 'stale', error: err, sends };
    if (isForbidden(err)) return { kind: 'forbidden', error: err, sends };
    if (isInvalidWrite(err)) return { kind: 'invalid', error: err, sends };
  }
  return { kind: 'failed', error: err, sends };
}

/**
 * The protocol itself, over any request: `send(p)` makes it with what was
 * decided (`first`, or a re-decision's answer). `isGone` marks an answer that
 * means the object was not there (a DELETE's 'not-found').
 */
export async function guardedWrite<P, R>(w: {
  first?: P | undefined;
  send: (p: P) => Promise<R>;
  stale: StaleRule;
  redecide?: Redecide<P>;
  isGone?: (r: R) => boolean;
}): Promise<WriteOutcome<R>> {
  const again = w.redecide;
  let reads = 0;
  const decideFresh = async (): Promise<P | undefined> => again?.decide(await again.read(reads++));
  let next = again?.readFirst ? await decideFresh() : w.first;
  for (let sends = 1; ; sends++) {
    if (next === undefined) return { kind: 'declined', sends: sends - 1 };
    let result: R;
    try {
      result = await w.send(next);
    } catch (err) {
      const outcome = { ...classifyWriteError(err, w.stale), sends };
      const retriesUsed = sends - 1;
      if (outcome.kind !== 'stale' || !again || retriesUsed >= again.retries) return outcome;
      next = await decideFresh();
      continue;
    }
    return w.isGone?.(result) ? { kind: 'gone', sends } : { kind: 'written', result, sends };
  }
}

/** What a guarded DELETE or PATCH is sent through (KubeClient, BundleApi and GcApi all are). */
export interface DeleteApi {
  delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<'deleted' | 'not-found'>;
}
export interface PatchApi {
  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts?: PatchOptions,
  ): Promise<KubeObject>;
}

export interface WriteTarget {
  rt: ResourceType;
  namespace: string | undefined;
  name: string;
}

/**
 * A DELETE whose options (uid, resourceVersion, propagation, guard) are
 * decided by the caller: `opts` for the first send, `redecide` for each after
 * a stale answer. 'not-found' is `gone` (without an error).
 */
export function guardedDelete(
  api: DeleteApi,
  t: WriteTarget,
  w: { opts?: DeleteOptions | undefined; stale?: StaleRule; redecide?: Redecide<DeleteOptions> },
): Promise<WriteOutcome<'deleted'>> {
  return guardedWrite<DeleteOptions, 'deleted' | 'not-found'>({
    first: w.opts,
    // Every delete carries a UID precondition: one without is a caller's bug, never sent (failed, nothing deleted).
    send: (opts) =>
      opts.uid === ''
        ? Promise.reject(new Error(`a DELETE of ${t.name} without a UID precondition is never sent`))
        : api.delete(t.rt, t.namespace, t.name, opts),
    stale: w.stale ?? 'conflict',
    ...(w.redecide ? { redecide: w.redecide } : {}),
    isGone: (r) => r === 'not-found',
  }) as Promise<WriteOutcome<'deleted'>>;
}

/**
 * A PATCH (its body pins what it was computed from): `patch` for the first
 * send, `redecide` for each after a stale answer. `opts` are passed only when
 * given (the request is the caller's, argument for argument).
 */
export function guardedPatch(
  api: PatchApi,
  t: WriteTarget,
  w: { patch?: unknown; type: PatchType; opts?: PatchOptions; stale?: StaleRule; redecide?: Redecide<unknown> },
): Promise<WriteOutcome<KubeObject>> {
  const { opts } = w;
  return guardedWrite<unknown, KubeObject>({
    first: w.patch,
    send: (body) => (opts ? api.patch(t.rt, t.namespace, t.name, body, w.type, opts) : api.patch(t.rt, t.namespace, t.name, body, w.type)),
    stale: w.stale ?? 'conflict-or-failed-test',
    ...(w.redecide ? { redecide: w.redecide } : {}),
  });
}
