/**
 * The act phase of a Bundle pass: carries a plan out through the BundleApi
 * port, in this order: confirm the Bundle incarnation on a fresh read (when
 * the pass writes its UID), claims, applies level by level, then, only if
 * every apply went through and the Bundle is unchanged on a fresh list,
 * prunes (deletes with uid and resourceVersion preconditions, countdown
 * stamps; dependents first, wave by wave, each wave concurrently), then
 * claim withdrawals. Decides nothing itself: the plan and the
 * re-decisions come from core/bundle.
 */
import type { Bundle } from '../../api/bundle.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { FIELD_MANAGER, Labels, Reasons } from '../../api/names.js';
import { claimsByObject } from '../../core/bundle/ownership.js';
import { isLiveIncarnation, unchangedSinceRead, writesOwnerReference } from '../../core/bundle/pass-guards.js';
import { recordKinds, unrecordedKinds } from '../../core/bundle/kind-inventory.js';
import type { ClaimAction } from '../../core/bundle/claims.js';
import { keepListedElsewhere, withAppliedReadiness, withholdAfterFailedApplies, type BundlePlan, type ResourcePlan } from '../../core/bundle/plan.js';
import type { HealthCheckTable } from '../../core/bundle/health-checks.js';
import type { CrdReadinessTable } from '../../core/bundle/kinds.js';
import { isWritingPrune, pruneWaves, redecideDelete, type ObjectTarget, type WritingPruneAction } from '../../core/bundle/prune.js';
import { prunePassEvents, type PrunedObject } from '../../core/bundle/prune-events.js';
import type { ActionFailure } from '../../core/bundle/status.js';
import { isRecord, kindKey } from '../../core/bundle/objects.js';
import { redact } from '../../core/bundle/redact.js';
import { errorMessage, isConflict, isForbidden, isInvalidWrite, isManifestRejected, isNotFound, isSendRefused, isStaleWrite, type SendGuard } from '../../kube/errors.js';
import { guardedDelete, guardedPatch, type WriteOutcome } from '../../kube/guarded-write.js';
import type { DeleteOptions } from '../../kube/requests.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../kube/clock.js';
import type { EventRecorder, EventTarget } from '../events.js';
import type { BundleApi } from './api.js';
import { bundleTarget } from './bundle-resource.js';

export interface ActDeps {
  api: BundleApi;
  /** By resource name: objects the Bundle's identity may not read; they are not written, and nothing is pruned. */
  readFailures?: ReadonlyMap<string, ActionFailure>;
  events: EventRecorder;
  /** The read before an expired delete refreshes it; that delete is decided on its lower bound. */
  serverTime: Pick<ServerTime, 'lowerBound'>;
  log: Logger;
  /** Claims and applies in flight at once within one Bundle. */
  applyConcurrency: number;
  /** Prune actions (deletes, stamps, releases) of one wave in flight at once within one Bundle; PRUNE_CONCURRENCY by default. */
  pruneConcurrency?: number;
  /**
   * The CRDs' readiness rules: given, the readiness of what the pass applied
   * is read from the apply's answer (withAppliedReadiness), so the pass that
   * applied an object can report it Ready.
   */
  crdReadiness?: CrdReadinessTable;
  healthChecks?: HealthCheckTable;
  /** Counts every delete by kind and reason (the per-object trail beside the log). */
  metrics?: { deleted(kind: string, reason: string): void };
  /** Send-time checks of the prune's writes; without one, a prune is checked only when it starts. */
  fence?: PruneFence;
}

/**
 * The send-time check of a prune's writes (ListingEpochs): each delete,
 * stamp and release goes only while its Bundle, and every Bundle listing its
 * object, is unchanged since the prune was decided.
 */
export interface PruneFence {
  /** The epoch the prune is decided at, taken right before the fresh list of the namespace's Bundles. */
  decidedAt(): number;
  /** Refuses a write on `target` once its Bundle or a Bundle listing the object changed after `decidedAt`. */
  guard(decidedAt: number, target: ObjectTarget): SendGuard;
}

/**
 * Reads, claims and applies in flight at once within one Bundle, by default
 * (the controller's applyConcurrency). A Bundle's objects at one level are
 * independent: four at a time made a Bundle of 200 ConfigMaps wait about 50
 * round trips for its reads and as many for its applies.
 */
export const APPLY_CONCURRENCY = 32;

/**
 * Prune actions of one wave in flight at once, by default. Each is a fresh
 * read and a delete (or one patch); a Bundle holds at most 256 objects, so
 * a pass's due objects go in a few round trips rather than one per object.
 */
export const PRUNE_CONCURRENCY = 32;

/** What a pass did to the cluster, for the status and the requeue decision. */
export interface PassOutcome {
  applyFailures: Map<string, ActionFailure>;
  /** By resource name: the object as the API server answered this pass's apply. */
  applied: Map<string, KubeObject>;
  pruneFailures: { target: ObjectTarget; message: string; reason?: string }[];
  wrote: boolean;
  /** Set when a send-time check stopped the prune part-way: why. Nothing more of the pass is written; it is decided again. */
  abandoned?: string;
}

export type ActResult =
  /** The plan as finally carried out (prunes withheld or kept for other Bundles) and what happened. */
  | { kind: 'acted'; plan: BundlePlan; outcome: PassOutcome }
  /** Nothing written: the cached Bundle is not the live incarnation (`fresh` as read; undefined when gone). */
  | { kind: 'stale-bundle'; fresh: KubeObject | undefined }
  /** Nothing written to objects: recording their kinds in status.managedKinds first did not go through (a newer Bundle). */
  | { kind: 'kinds-not-recorded' }
  /** Claims and applies done, nothing pruned: the Bundle changed since it was read. */
  | { kind: 'changed-before-prune'; outcome: PassOutcome; fresh: KubeObject | undefined }
  /** Pruning stopped part-way: a Bundle changed after the prune was decided (outcome.abandoned says which). */
  | { kind: 'changed-during-prune'; outcome: PassOutcome; fresh?: undefined };

export async function actOnPlan(d: ActDeps, bundle: Bundle, planned: BundlePlan, types: ReadonlyMap<string, ResourceType>): Promise<ActResult> {
  const { namespace, name } = bundle.metadata;
  const outcome: PassOutcome = { applyFailures: new Map(d.readFailures ?? []), applied: new Map(), pruneFailures: [], wrote: false };
  let plan = planned;
  // Every claim and apply names this Bundle's UID as the controller. A Bundle deleted and re-created under the same
  // name may not have reached the cache yet: an object written with the gone incarnation's UID would be collected at
  // once (its owner is absent). So before any such write the incarnation is confirmed on a fresh read.
  if (writesOwnerReference(plan)) {
    const fresh = await d.api.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
    if (!isLiveIncarnation(fresh, bundle.metadata.uid)) {
      d.log.debug({ cached: bundle.metadata.uid, live: fresh?.metadata.uid }, 'the cached Bundle is not the live incarnation: nothing written, wait for the cache');
      return { kind: 'stale-bundle', fresh };
    }
    if (fresh && !(await recordKindsFirst(d, plan, fresh))) return { kind: 'kinds-not-recorded' };
  }
  const target = bundleTarget(bundle);
  const failedClaims = await carryOutClaims(d, plan.claims, namespace, outcome, target);
  for (const name of d.readFailures?.keys() ?? []) failedClaims.add(name);
  if (plan.issues.length > 0) return { kind: 'acted', plan, outcome };

  await applyResources(d, plan, types, failedClaims, outcome, target);
  plan = withholdAfterFailedApplies(plan, [...outcome.applyFailures.keys()]);
  if (d.crdReadiness) plan = withAppliedReadiness(plan, outcome.applied, d.crdReadiness, d.healthChecks);
  if (plan.prune.some(isWritingPrune)) {
    // A prune decided on stale Bundles could remove what was just put back, here or in another Bundle: list the
    // namespace's Bundles fresh, check this one is unchanged, and keep whatever another live Bundle lists. The epoch is
    // taken before the list: a Bundle event from here on stops each write not yet sent.
    const decidedAt = d.fence?.decidedAt();
    const { items: bundlesNow } = await d.api.list(BUNDLE_RESOURCE_TYPE, namespace);
    const fresh = bundlesNow.find((b) => b.metadata.name === name);
    if (!unchangedSinceRead(fresh, bundle.metadata)) {
      d.log.info('Bundle changed since it was read; deciding again before pruning');
      return { kind: 'changed-before-prune', outcome, fresh };
    }
    plan = keepListedElsewhere(plan, claimsByObject(bundlesNow));
    await pruneObjects(d, plan, outcome, target, decidedAt);
    if (outcome.abandoned !== undefined) {
      d.log.info({ reason: outcome.abandoned }, 'a Bundle changed while pruning; the rest of the prune is decided again');
      return { kind: 'changed-during-prune', outcome };
    }
  }
  await withdrawClaims(d, plan, outcome);
  await announceWaits(d, plan, bundle, target);
  return { kind: 'acted', plan, outcome };
}

/**
 * One event when a due deletion starts waiting for a gate: the status as
 * last written says what each pending object waited for, so a restart or
 * a retry does not repeat it.
 */
async function announceWaits(d: ActDeps, plan: BundlePlan, bundle: Bundle, target: EventTarget): Promise<void> {
  const before = new Map((bundle.status?.pendingDeletions ?? []).map((p) => [`${p.apiVersion}|${p.kind}|${p.name}`, p.waitingFor]));
  for (const a of plan.prune) {
    if (a.action !== 'await' || before.get(`${a.target.apiVersion}|${a.target.kind}|${a.target.name}`) === a.waitingFor) continue;
    await d.events.normal(target, a.event.reason, a.event.message);
  }
}

/**
 * Write-ahead of status.managedKinds (see unrecordedKinds): the kinds this
 * pass will make the Bundle own are stored before any object of them is
 * written, on the fresh Bundle with its resourceVersion. False when that
 * write lost to a newer Bundle: write nothing this pass.
 */
async function recordKindsFirst(d: ActDeps, plan: BundlePlan, fresh: KubeObject): Promise<boolean> {
  const recorded = statusManagedKinds(fresh);
  const missing = unrecordedKinds(plan, recorded);
  if (missing.length === 0) return true;
  const status = isRecord(fresh.status) ? fresh.status : {};
  try {
    await d.api.replaceStatus(BUNDLE_RESOURCE_TYPE, { ...fresh, status: { ...status, managedKinds: recordKinds(recorded, missing) } });
    d.log.debug({ kinds: missing }, 'recorded new kinds in status.managedKinds before writing objects of them');
    return true;
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return false;
    throw err;
  }
}

function statusManagedKinds(o: KubeObject): string[] {
  const kinds = isRecord(o.status) ? o.status['managedKinds'] : undefined;
  return Array.isArray(kinds) ? kinds.filter((k): k is string => typeof k === 'string') : [];
}

/**
 * Claims (cancel, adopt, hand-over, reference) as JSON patches guarded by
 * uid and resourceVersion. Returns the resources whose claim did not go
 * through: they are not applied this pass (an apply would fight over the
 * object).
 */
async function carryOutClaims(d: ActDeps, claims: readonly ClaimAction[], namespace: string, outcome: PassOutcome, target: EventTarget): Promise<Set<string>> {
  const failed = new Set<string>();
  await forEachBounded(claims, d.applyConcurrency, async (c) => {
    const rt = await d.api.resolve(c.target.apiVersion, c.target.kind);
    if (!rt) return;
    try {
      await d.api.patch(rt, namespace, c.target.name, c.patch, 'json', { fieldManager: FIELD_MANAGER });
    } catch (err) {
      failed.add(c.name);
      // A failed test or a conflict: the object changed since it was read; the next pass decides on what it is now.
      const changed = isStaleWrite(err) || isNotFound(err);
      // Adoption is a write: an identity that may not patch the object does not get it.
      outcome.applyFailures.set(c.name, isForbidden(err) ? forbiddenFailure(err) : { message: changed ? `${c.target.kind} ${c.target.name} changed while being claimed; retrying` : errorMessage(err), terminal: false });
      d.log.warn({ resource: c.name, claim: c.kind, err: errorMessage(err) }, 'claim failed');
      return;
    }
    outcome.wrote = true;
    for (const e of c.events) await d.events.normal(target, e.reason, e.message);
    if (c.from) await d.events.normal({ apiVersion: target.apiVersion, kind: target.kind, namespace, name: c.from.name, uid: c.from.uid }, c.from.event.reason, c.from.event.message);
  });
  return failed;
}

async function applyResources(d: ActDeps, plan: BundlePlan, types: ReadonlyMap<string, ResourceType>, failedClaims: ReadonlySet<string>, outcome: PassOutcome, target: EventTarget): Promise<void> {
  const writes = plan.resources.filter((r): r is Extract<ResourcePlan, { apply: unknown }> => (r.action === 'apply' || r.action === 'adopt') && !failedClaims.has(r.name));
  await forEachBounded(writes, d.applyConcurrency, async (r) => {
    const desired = r.apply.desired;
    const rt = types.get(kindKey(desired.apiVersion, desired.kind));
    if (!rt) return;
    try {
      if (r.apply.bookkeeping !== undefined) {
        // The drift controls hold the user's fields back: only the operator's bookkeeping is written. An object claimed
        // this pass has changed since it was read (the guard would fail): the claim's own watch event brings the next pass.
        if (r.apply.needed && !plan.claims.some((c) => c.name === r.name)) {
          await d.api.patch(rt, desired.metadata.namespace, desired.metadata.name, r.apply.bookkeeping, 'json', { fieldManager: FIELD_MANAGER });
          outcome.wrote = true;
          d.log.debug({ object: { kind: desired.kind, name: desired.metadata.name } }, 'bookkeeping written (drift controls: fields not applied)');
        }
      } else if (r.apply.needed) {
        outcome.applied.set(r.name, await d.api.apply(rt, desired, { fieldManager: FIELD_MANAGER, force: true }));
        outcome.wrote = true;
        d.log.debug({ object: { kind: desired.kind, name: desired.metadata.name }, create: r.apply.create }, 'applied');
      }
      if (r.action === 'adopt') await d.events.normal(target, r.event.reason, r.event.message);
    } catch (err) {
      // The server refused the manifest itself (400, 422, an undeclared field): retrying the same spec cannot help. A 403 may
      // change when someone grants the identity more: retried, with backoff.
      // The server's message may echo a value a reference substituted (a Secret's): never let it out.
      const message = redact(errorMessage(err), r.apply.redactions);
      // A bookkeeping patch guarded by what was read: a changed object is decided again on the next pass.
      if (r.apply.bookkeeping !== undefined && (isStaleWrite(err) || isNotFound(err))) outcome.applyFailures.set(r.name, { message: `${desired.kind} ${desired.metadata.name} changed since it was read; retrying`, terminal: false });
      else outcome.applyFailures.set(r.name, isForbidden(err) ? { ...forbiddenFailure(err), message } : { message, terminal: isManifestRejected(err) });
      d.log.warn({ resource: r.name, err: message }, 'apply failed');
    }
  });
}

/**
 * Takes this Bundle's claim reference out of objects it no longer lists
 * (written while it lost a Conflict over them): a stale claim would keep
 * such an object alive through a cascade meant for it. The patch tests the
 * reference list as read; a changed object is decided on next pass.
 */
async function withdrawClaims(d: ActDeps, plan: BundlePlan, outcome: PassOutcome): Promise<void> {
  for (const w of plan.withdrawals) {
    const rt = await d.api.resolve(w.target.apiVersion, w.target.kind);
    if (!rt) continue;
    outcome.wrote = true; // either way, look again soon
    const written = await guardedPatch(d.api, { rt, namespace: w.target.namespace, name: w.target.name }, { patch: w.patch, type: 'json', opts: { fieldManager: FIELD_MANAGER } });
    if (written.kind === 'written') d.log.info({ object: { kind: w.target.kind, name: w.target.name } }, 'withdrew the claim on an object no longer listed');
    else if (written.kind !== 'stale' && written.kind !== 'gone' && written.kind !== 'declined') d.log.warn({ object: { kind: w.target.kind, name: w.target.name }, err: errorMessage(written.error) }, 'withdrawing a claim failed');
  }
}

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
async function pruneObjects(d: ActDeps, plan: BundlePlan, outcome: PassOutcome, target: EventTarget, decidedAt: number | undefined): Promise<void> {
  const done: PrunedObject[] = [];
  let forbidden = false;
  const guardOf = (t: ObjectTarget): SendGuard | undefined => (d.fence && decidedAt !== undefined ? d.fence.guard(decidedAt, t) : undefined);
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
        const written = await guardedPatch(d.api, { rt, namespace: t.namespace, name: t.name }, { patch: action.patch, type: 'json', opts: { fieldManager: FIELD_MANAGER, ...(guard ? { guard } : {}) } });
        // The patch tests the resourceVersion it was decided on: a stale write is not an error, the next pass
        // decides on what the object is now. (A 404 is reported as any other failure.)
        if (written.kind === 'stale' || written.kind === 'declined') return; // (declined: never, the patch is given)
        if (written.kind !== 'written') return failed(written.error);
        const alone = action.action === 'release' || (action.gates?.length ?? 0) > 0;
        done.push({ kind: t.kind, name: t.name, event: action.event, ...(action.action === 'mark' ? { deleteAfter: action.deleteAfter } : {}), ...(alone ? { alone } : {}) });
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
      d.log.info({ object: { kind: t.kind, name: t.name }, uid: t.uid, reason: action.event.reason }, action.afterDelay ? 'deleted after its deletion delay' : 'pruned');
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
async function deleteDecided(d: ActDeps, rt: ResourceType, t: ObjectTarget, afterDelay: boolean, plan: BundlePlan, listed: FreshReads, guard: SendGuard | undefined): Promise<WriteOutcome<'deleted'>> {
  const uid = t.uid;
  if (!uid) return { kind: 'gone', sends: 0 };
  const opts = (resourceVersion: string | undefined): DeleteOptions => ({ uid, ...(resourceVersion ? { resourceVersion } : {}), propagationPolicy: 'Background', ...(guard ? { guard } : {}) });
  const wave = listed.get(freshReadKey(t));
  return await guardedDelete(d.api, { rt, namespace: t.namespace, name: t.name }, {
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
  });
}

/** Fresh reads of a wave's expired countdowns, by freshReadKey. */
type FreshReads = ReadonlyMap<string, KubeObject>;

function freshReadKey(t: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): string {
  return `${t.apiVersion}|${t.kind}|${t.namespace ?? ''}|${t.name}`;
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
    for (const o of items) if (wanted.has(o.metadata.name)) reads.set(freshReadKey({ apiVersion: first.apiVersion, kind: first.kind, namespace: first.namespace, name: o.metadata.name }), o);
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

/** A 403: the message is the API server's, which names the identity, the verb and the resource. */
export function forbiddenFailure(err: unknown): ActionFailure {
  return { message: errorMessage(err), terminal: false, reason: Reasons.Forbidden };
}

export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(lanes);
}
