/**
 * The prune of a Bundle pass as written to the cluster: the plan's waves,
 * dependents first, each delete through the guarded write with its fresh
 * read and preconditions, stamps and releases as tested patches, every
 * write carrying the send-time check (PruneFence). Decides nothing itself:
 * the re-decisions on fresh reads come from core/bundle/prune.ts.
 */

import { FIELD_MANAGER, Labels, Reasons } from '../../api/names.js';
import type { BundlePlan } from '../../core/bundle/plan.js';
import { versionedObjectKey, type VersionedObjectKey } from '../../core/bundle/objects.js';
import { pruneWaves, redecideDelete, type ObjectTarget, type WritingPruneAction } from '../../core/bundle/prune.js';
import { prunePassEvents, type PrunedObject } from '../../core/bundle/prune-events.js';
import { errorMessage, isForbidden, isInvalidWrite, isSendRefused, type SendGuard } from '../../kube/errors.js';
import { guardedDelete, guardedPatch, type WriteOutcome } from '../../kube/guarded-write.js';
import type { DeleteOptions } from '../../kube/requests.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { EventTarget } from '../events.js';
import { PRUNE_CONCURRENCY, forEachBounded, type ActDeps, type PassOutcome } from './act-deps.js';

/**
 * Dependents first: the plan's waves (core/bundle/prune.ts, pruneWaves) one
 * after another, the actions of a wave up to `pruneConcurrency` at once, so
 * every object is gone (or being deleted) before the next wave starts on
 * what it references. Each delete keeps its own preconditions and fresh
 * read (deleteDecided). The first action of each wave goes alone: a 403 on
 * it stops the pass's prunes before any other starts; after any 403 no
 * further action starts (those already in flight finish). The Events are
 * written once the waves are done (core/bundle/prune-events.ts: one per
 * object in a small pass, a summary per reason in a large one); every
 * object goes to the log and the deletes metric as it happens.
 */
export async function pruneObjects(
  d: ActDeps,
  plan: BundlePlan,
  outcome: PassOutcome,
  target: EventTarget,
  decidedAt: number | undefined,
): Promise<void> {
  const done: PrunedObject[] = [];
  let forbidden = false;
  const guardOf = (t: ObjectTarget): SendGuard | undefined =>
    d.fence && decidedAt !== undefined ? d.fence.guard(decidedAt, t) : undefined;
  /** The wave's fresh reads made by one LIST per kind (listFreshReads). */
  let fresh: FreshReads = new Map();
  const carryOut = async (action: WritingPruneAction): Promise<void> => {
    if (forbidden || outcome.abandoned !== undefined) return;
    const t = action.target;
    const guard = guardOf(t);
    try {
      // Inside the try: a discovery failure is this action's, not a rejection that leaves the wave's other lanes running.
      const rt = await d.api.resolve(t.apiVersion, t.kind);
      if (!rt || !t.uid) return;
      if (action.action === 'mark' || action.action === 'release') {
        outcome.wrote = true; // either way, look again soon
        const written = await guardedPatch(
          d.api,
          { rt, namespace: t.namespace, name: t.name },
          { patch: action.patch, type: 'json', opts: { fieldManager: FIELD_MANAGER, ...(guard ? { guard } : {}) } },
        );
        // The patch tests the resourceVersion it was decided on: a stale write is not an error, the next pass
        // decides on what the object is now. (A 404 is reported as any other failure.)
        if (written.kind === 'stale' || written.kind === 'declined') return; // (declined: never, the patch is given)
        if (written.kind !== 'written') return failed(written.error);
        const alone = action.action === 'release' || (action.gates?.length ?? 0) > 0;
        done.push({
          kind: t.kind,
          name: t.name,
          event: action.event,
          ...(action.action === 'mark' ? { deleteAfter: action.deleteAfter } : {}),
          ...(alone ? { alone } : {}),
        });
        return;
      }
      const result = await deleteDecided(d, rt, t, action.afterDelay, plan, fresh, guard);
      if (result.kind === 'stale') {
        outcome.pruneFailures.push({ target: t, message: 'changed while being deleted; will decide again on the next pass' });
        return;
      }
      if (result.kind === 'declined') return;
      // A DELETE answered 'not-found' is gone (the pass wrote: look again); any error, a thrown 404 too, is a failure.
      if (result.kind !== 'written' && (result.kind !== 'gone' || result.error)) return failed(result.error);
      outcome.wrote = true;
      if (result.kind !== 'written') return;
      d.log.info(
        { object: { kind: t.kind, name: t.name }, uid: t.uid, reason: action.event.reason },
        action.afterDelay ? 'deleted after its deletion delay' : 'pruned',
      );
      d.metrics?.deleted(t.kind, action.event.reason);
      done.push({ kind: t.kind, name: t.name, event: action.event });
    } catch (err) {
      // A discovery or fresh-read error: reported as a write's failure is.
      failed(err);
    }
    /** A write (or a read before it) that did not go through, but for a stale one. */
    function failed(err: unknown): void {
      if (isSendRefused(err)) {
        // Not sent: the Bundle (or one listing the object) changed since the prune was decided. Nothing more starts.
        outcome.abandoned ??= errorMessage(err);
        return;
      }
      d.log.warn({ object: { kind: t.kind, name: t.name }, err: errorMessage(err) }, 'prune failed');
      if (isInvalidWrite(err)) {
        // The server found the write itself invalid: sending it again cannot help. Reported, not retried silently.
        outcome.pruneFailures.push({ target: t, message: errorMessage(err), reason: Reasons.InvalidWrite });
        return;
      }
      if (isForbidden(err)) {
        // The identity may not delete here: nothing else of this Bundle is started in this pass.
        forbidden = true;
        outcome.pruneFailures.push({ target: t, message: errorMessage(err), reason: Reasons.Forbidden });
        return;
      }
      outcome.pruneFailures.push({ target: t, message: errorMessage(err) });
    }
  };
  for (const wave of pruneWaves(plan.prune)) {
    if (forbidden || outcome.abandoned !== undefined) break;
    const [first, ...rest] = wave;
    fresh = new Map();
    // The rest's fresh reads are listed while the first action goes alone: a read, and each delete still carries the
    // uid and resourceVersion it lists.
    // Never rejects (it would be unhandled while the first action runs): a failure means a GET for each.
    const listing = listFreshReads(d, rest).catch((): FreshReads => new Map());
    if (first !== undefined) await carryOut(first);
    const listed = await listing;
    if (forbidden || outcome.abandoned !== undefined) break;
    fresh = listed;
    await forEachBounded(rest, d.pruneConcurrency ?? PRUNE_CONCURRENCY, carryOut);
  }
  for (const e of prunePassEvents(done)) await d.events.normal(target, e.reason, e.message);
}

/**
 * One decided delete, through the guarded write (kube/guarded-write.ts). An
 * expired countdown was read from the cache: decide again on a fresh read
 * first (the wave's listed read when there is one). A delete refused because
 * the object changed (a 409: a status write, a new annotation) gets one fresh
 * read, the same rules and one more try. `declined`: a fresh read said no.
 * A DELETE carries no JSON-patch test, so only a 409 is stale here: a 422 is
 * the server (or an admission webhook) refusing it, a failure.
 */
async function deleteDecided(
  d: ActDeps,
  rt: ResourceType,
  t: ObjectTarget,
  afterDelay: boolean,
  plan: BundlePlan,
  listed: FreshReads,
  guard: SendGuard | undefined,
): Promise<WriteOutcome<'deleted'>> {
  const uid = t.uid;
  if (!uid) return { kind: 'gone', sends: 0 };
  const opts = (resourceVersion: string | undefined): DeleteOptions => ({
    uid,
    ...(resourceVersion ? { resourceVersion } : {}),
    propagationPolicy: 'Background',
    ...(guard ? { guard } : {}),
  });
  const wave = listed.get(freshReadKey(t));
  return await guardedDelete(
    d.api,
    { rt, namespace: t.namespace, name: t.name },
    {
      ...(afterDelay ? {} : { opts: opts(t.resourceVersion) }),
      stale: 'conflict',
      redecide: {
        readFirst: afterDelay,
        retries: 1,
        read: (n) => (n === 0 && afterDelay && wave ? Promise.resolve(wave) : d.api.tryGet(rt, t.namespace, t.name)),
        decide: (fresh) => {
          const resourceVersion = redecideFresh(d, t, plan, fresh);
          return resourceVersion === undefined ? undefined : opts(resourceVersion);
        },
      },
    },
  );
}

/** Fresh reads of a wave's expired countdowns, by freshReadKey. */
type FreshReads = ReadonlyMap<string, KubeObject>;

function freshReadKey(t: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): VersionedObjectKey {
  return versionedObjectKey(t.apiVersion, t.kind, t.namespace, t.name);
}

/**
 * A wave's expired countdowns of one kind and namespace, at least this
 * many: one fresh LIST reads them all instead of a GET each.
 */
export const LIST_FRESH_READS_FROM = 8;

/**
 * The fresh read before an expired countdown's delete, made for many at
 * once: one LIST (metadata only, the managed label the cache selects on) per
 * kind and namespace holding at least LIST_FRESH_READS_FROM of them. A list
 * without a resourceVersion is read from the server's storage, as a GET is;
 * each object is then decided again on what it shows, and deleted with its
 * uid and the resourceVersion listed, so a change since the list is a 409 and
 * another fresh read (deleteDecided). An object the list misses (its label
 * taken off), or a list that fails, is read with a GET of its own.
 */
async function listFreshReads(d: ActDeps, wave: readonly WritingPruneAction[]): Promise<FreshReads> {
  const groups = new Map<string, ObjectTarget[]>();
  for (const a of wave) {
    if (a.action !== 'delete' || !a.afterDelay) continue;
    const key = `${a.target.apiVersion}|${a.target.kind}|${a.target.namespace ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(a.target);
    else groups.set(key, [a.target]);
  }
  const reads = new Map<string, KubeObject>();
  for (const targets of groups.values()) {
    const first = targets[0];
    if (first === undefined || targets.length < LIST_FRESH_READS_FROM) continue;
    const rt = await d.api.resolve(first.apiVersion, first.kind);
    if (!rt) continue;
    const wanted = new Set(targets.map((t) => t.name));
    let items: KubeObject[];
    try {
      ({ items } = await d.api.list(rt, first.namespace, { metadataOnly: true, labelSelector: `${Labels.managed}=true` }));
    } catch (err) {
      // An identity that may delete but not list, or a failed list: each object gets its own GET instead.
      d.log.debug({ kind: first.kind, err: errorMessage(err) }, 'could not list for fresh reads; reading one by one');
      continue;
    }
    for (const o of items)
      if (wanted.has(o.metadata.name))
        reads.set(freshReadKey({ apiVersion: first.apiVersion, kind: first.kind, namespace: first.namespace, name: o.metadata.name }), o);
  }
  return reads;
}

/**
 * Applies the prune rules again to an object just read fresh (or the wave's
 * listed read of it) (core/bundle/prune.ts, redecideDelete): the
 * resourceVersion to delete it at, or undefined (left to the next pass).
 */
function redecideFresh(d: ActDeps, t: ObjectTarget, plan: BundlePlan, fresh: KubeObject | undefined): string | undefined {
  // The read just made refreshed the server-time estimate: decide on its lower bound.
  const now = d.serverTime.lowerBound();
  if (now === undefined) return undefined;
  return redecideDelete({ fresh, target: t, bundleUid: plan.bundle.uid, now, ...plan.deletionContext });
}
