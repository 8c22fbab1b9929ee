/**
 * The act phase of a Bundle pass: carries a plan out through the BundleApi
 * port, in this order: confirm the Bundle incarnation on a fresh read (when
 * the pass writes its UID), claims, applies level by level, then, only if
 * every apply went through and the Bundle is unchanged on a fresh list,
 * prunes (deletes with uid and resourceVersion preconditions, countdown
 * stamps; dependents first, wave by wave, each wave concurrently), then
 * claim withdrawals. Decides nothing itself: the plan and the
 * re-decisions come from core/bundle. The prune's writes are
 * prune-writes.ts; the record written ahead of them, record.ts.
 */
import type { Bundle } from '../../api/bundle.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { FIELD_MANAGER } from '../../api/names.js';
import { listingsByObject } from '../../core/bundle/ownership.js';
import { isLiveIncarnation, unchangedSinceRead, writesOwnerReference } from '../../core/bundle/pass-guards.js';
import type { TakeHold } from '../../core/bundle/take-holds.js';
import {
  keepListedElsewhere,
  withAppliedReadiness,
  withholdAfterFailedApplies,
  type BundlePlan,
  type ResourcePlan,
} from '../../core/bundle/plan.js';
import { isWritingPrune, type ObjectTarget } from '../../core/bundle/prune.js';
import { kindKey, objectKey, type ObjectKey } from '../../core/bundle/objects.js';
import { redact } from '../../core/bundle/redact.js';
import {
  errorMessage,
  isForbidden,
  mayHaveLanded,
  isManifestRejected,
  isNotFound,
  isSendRefused,
  isStaleWrite,
  type SendGuard,
} from '../../kube/errors.js';
import { guardedPatch } from '../../kube/guarded-write.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { EventTarget } from '../events.js';
import { syncApplySetParent } from './applyset-parent.js';
import { bundleTarget } from './bundle-resource.js';
import { forbiddenFailure, forEachBounded, type ActDeps, type PassOutcome } from './act-deps.js';
import { keepRecorded, recordClaimsFirst, recordCountdownsFirst, recordKindsFirst } from './record.js';
import { pruneObjects } from './prune-writes.js';
import { recordedObject } from '../../core/softdelete/release-record.js';

export type ActResult =
  /** The plan as finally carried out (prunes withheld or kept for other Bundles) and what happened. */
  | { kind: 'acted'; plan: BundlePlan; outcome: PassOutcome }
  /** Nothing written: the cached Bundle is not the live incarnation (`fresh` as read; undefined when gone). */
  | { kind: 'stale-bundle'; fresh: KubeObject | undefined }
  /**
   * A write-ahead of the record (or the ApplySet parent metadata written
   * after it) did not go through (a newer Bundle): nothing written to
   * objects of a kind status.managedKinds did not hold yet, no countdown
   * stamped that status.pendingDeletions did not hold.
   */
  | { kind: 'not-recorded' }
  /** Claims and applies done, nothing pruned: the Bundle changed since it was read. */
  | { kind: 'changed-before-prune'; outcome: PassOutcome; fresh: KubeObject | undefined }
  /** Claims, applies or pruning stopped part-way: a Bundle changed after they were decided (outcome.abandoned says which). */
  | { kind: 'changed-while-writing'; outcome: PassOutcome; fresh?: undefined };

export async function actOnPlan(
  d: ActDeps,
  bundle: Bundle,
  planned: BundlePlan,
  types: ReadonlyMap<string, ResourceType>,
): Promise<ActResult> {
  const { namespace, name } = bundle.metadata;
  const outcome: PassOutcome = { applyFailures: new Map(d.readFailures ?? []), applied: new Map(), pruneFailures: [], wrote: false };
  let plan = planned;
  // Every take-hold and apply names this Bundle's UID as the controller. A Bundle deleted and re-created under the same
  // name may not have reached the cache yet: an object written with the gone incarnation's UID would be collected at
  // once (its owner is absent). So before any such write the incarnation is confirmed on a fresh read.
  let recorded: KubeObject | undefined;
  // The fresh read below decides for every claim and apply of the pass: each is sent only while no Bundle event (a new
  // spec, a deletion, a new incarnation) has arrived since, so a write that waited (the request budget, a slow server)
  // cannot put the controller reference back after the Bundle was deleted with --cascade=orphan and the collector took
  // it out (red team 13). Taken before the read: an event from here on stops each write not yet sent.
  const writesDecidedAt = d.fence?.decidedAt();
  if (writesOwnerReference(plan)) {
    const fresh = await d.api.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
    if (!isLiveIncarnation(fresh, bundle.metadata.uid)) {
      d.log.debug(
        { cached: bundle.metadata.uid, live: fresh?.metadata.uid },
        'the cached Bundle is not the live incarnation: nothing written, wait for the cache',
      );
      return { kind: 'stale-bundle', fresh };
    }
    const kinds = fresh && (await recordKindsFirst(d, plan, fresh));
    if (kinds === false) return { kind: 'not-recorded' };
    recorded = typeof kinds === 'object' ? kinds : fresh;
    if (typeof kinds === 'object') keepRecorded(outcome, kinds, bundle);
    const claims = recorded && (await recordClaimsFirst(d, plan, recorded));
    if (claims === false) return { kind: 'not-recorded' };
    if (typeof claims === 'object') {
      recorded = claims;
      keepRecorded(outcome, claims, bundle);
    }
  }
  // The ApplySet parent metadata covers the kinds just recorded before any member of them is written (applyset-parent.ts).
  // An invalid spec writes nothing but its claims: the metadata then waits for a pass that writes objects, or a valid spec.
  if (plan.issues.length === 0 || recorded !== undefined) {
    const parent = await syncApplySetParent(d, bundle, recorded);
    if (parent === false) return { kind: 'not-recorded' };
    if (typeof parent === 'object') keepRecorded(outcome, parent, bundle);
  }
  const target = bundleTarget(bundle);
  const guardOf = (t: ObjectTarget): SendGuard | undefined =>
    d.fence !== undefined && writesDecidedAt !== undefined ? d.fence.guard(writesDecidedAt, t) : undefined;
  const failedClaims = await carryOutTakeHolds(d, plan.takeHolds, namespace, outcome, target, guardOf);
  if (outcome.abandoned !== undefined) return changedWhileWriting(d, outcome);
  for (const name of d.readFailures?.keys() ?? []) failedClaims.add(name);
  if (plan.issues.length > 0) return { kind: 'acted', plan, outcome };

  await applyResources(d, plan, types, failedClaims, outcome, target, guardOf);
  if (outcome.abandoned !== undefined) return changedWhileWriting(d, outcome);
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
    plan = keepListedElsewhere(plan, listingsByObject(bundlesNow));
    const recorded = fresh && (await recordCountdownsFirst(d, plan, fresh));
    if (recorded === false) return { kind: 'not-recorded' };
    if (typeof recorded === 'object') keepRecorded(outcome, recorded, bundle);
    await pruneObjects(d, plan, outcome, target, decidedAt);
    if (outcome.abandoned !== undefined) {
      d.log.info({ reason: outcome.abandoned }, 'a Bundle changed while pruning; the rest of the prune is decided again');
      return { kind: 'changed-while-writing', outcome };
    }
  }
  await withdrawClaims(d, plan, outcome);
  await announceWaits(d, plan, bundle, target);
  return { kind: 'acted', plan, outcome };
}

/** A claim or apply was not sent: the Bundle (or one listing the object) changed since the pass read it. Nothing pruned. */
function changedWhileWriting(d: ActDeps, outcome: PassOutcome): ActResult {
  d.log.info({ reason: outcome.abandoned }, 'a Bundle changed while its objects were written; deciding again');
  return { kind: 'changed-while-writing', outcome };
}

/**
 * One event when a due deletion starts waiting for a gate: the status as
 * last written says what each pending object waited for, so a restart or
 * a retry does not repeat it.
 */
async function announceWaits(d: ActDeps, plan: BundlePlan, bundle: Bundle, target: EventTarget): Promise<void> {
  // By objectKey: a countdown recorded at an older version of its kind is the same object's.
  const keyOf = (t: { apiVersion: string; kind: string; name: string }): ObjectKey =>
    objectKey({ apiVersion: t.apiVersion, kind: t.kind, metadata: { name: t.name, namespace: bundle.metadata.namespace } });
  const before = new Map((bundle.status?.pendingDeletions ?? []).map((p) => [keyOf(p), p.waitingFor]));
  for (const a of plan.prune) {
    if (a.action !== 'await' || before.get(keyOf(a.target)) === a.waitingFor) continue;
    await d.events.normal(target, a.event.reason, a.event.message);
  }
}

/**
 * Claims (cancel, adopt, hand-over, reference) as JSON patches guarded by
 * uid and resourceVersion. Returns the resources whose claim did not go
 * through: they are not applied this pass (an apply would fight over the
 * object).
 */
async function carryOutTakeHolds(
  d: ActDeps,
  takeHolds: readonly TakeHold[],
  namespace: string,
  outcome: PassOutcome,
  target: EventTarget,
  guardOf: (t: ObjectTarget) => SendGuard | undefined,
): Promise<Set<string>> {
  const failed = new Set<string>();
  await forEachBounded(takeHolds, d.applyConcurrency, async (c) => {
    if (outcome.abandoned !== undefined) return;
    const rt = await d.api.resolve(c.target.apiVersion, c.target.kind);
    if (!rt) return;
    const guard = guardOf(c.target);
    try {
      // The release it carries ends with it: written back later, it counts no more (red team 29). A failure throws: not sent.
      const recorded = c.target.uid === undefined ? undefined : recordedObject(rt, { uid: c.target.uid, namespace, name: c.target.name });
      if (recorded && c.endsRelease === 'carried') await d.releaseRecords?.end(recorded);
      if (recorded && c.endsRelease === 'if-recorded') await d.releaseRecords?.endIfRecorded(recorded);
      await d.api.patch(rt, namespace, c.target.name, c.patch, 'json', { fieldManager: FIELD_MANAGER, ...(guard ? { guard } : {}) });
    } catch (err) {
      failed.add(c.name);
      // A claim whose patch may have landed (no answer: a network error, a timeout) stays recorded, pending; one the server
      // answered with an error wrote nothing (a webhook's 500 included: red team 18).
      if (c.kind === 'reference' && mayHaveLanded(err)) sentClaim(outcome, c, 'unknown');
      if (isSendRefused(err)) {
        outcome.abandoned = errorMessage(err);
        return;
      }
      // A failed test or a conflict: the object changed since it was read; the next pass decides on what it is now.
      const changed = isStaleWrite(err) || isNotFound(err);
      // Adoption is a write: an identity that may not patch the object does not get it.
      outcome.applyFailures.set(
        c.name,
        isForbidden(err)
          ? forbiddenFailure(err)
          : {
              message: changed ? `${c.target.kind} ${c.target.name} changed while being claimed; retrying` : errorMessage(err),
              terminal: false,
            },
      );
      d.log.warn({ resource: c.name, claim: c.kind, err: errorMessage(err) }, 'claim failed');
      return;
    }
    outcome.wrote = true;
    if (c.kind === 'reference') sentClaim(outcome, c, 'landed');
    for (const e of c.events) await d.events.normal(target, e.reason, e.message);
    if (c.from)
      await d.events.normal(
        { apiVersion: target.apiVersion, kind: target.kind, namespace, name: c.from.name, uid: c.from.uid },
        c.from.event.reason,
        c.from.event.message,
      );
  });
  return failed;
}

function sentClaim(outcome: PassOutcome, c: TakeHold, how: 'landed' | 'unknown'): void {
  if (c.target.uid === undefined) return;
  (outcome.claimsSent ??= { landed: [], unknown: [] })[how].push({
    apiVersion: c.target.apiVersion,
    kind: c.target.kind,
    name: c.target.name,
    uid: c.target.uid,
  });
}

async function applyResources(
  d: ActDeps,
  plan: BundlePlan,
  types: ReadonlyMap<string, ResourceType>,
  failedClaims: ReadonlySet<string>,
  outcome: PassOutcome,
  target: EventTarget,
  guardOf: (t: ObjectTarget) => SendGuard | undefined,
): Promise<void> {
  const writes = plan.resources.filter(
    (r): r is Extract<ResourcePlan, { apply: unknown }> => (r.action === 'apply' || r.action === 'adopt') && !failedClaims.has(r.name),
  );
  await forEachBounded(writes, d.applyConcurrency, async (r) => {
    if (outcome.abandoned !== undefined) return;
    const desired = r.apply.desired;
    const rt = types.get(kindKey(desired.apiVersion, desired.kind));
    if (!rt) return;
    const guard = guardOf({
      apiVersion: desired.apiVersion,
      kind: desired.kind,
      name: desired.metadata.name,
      ...(desired.metadata.namespace !== undefined ? { namespace: desired.metadata.namespace } : {}),
    });
    const guarded = guard ? { guard } : {};
    try {
      if (r.apply.bookkeeping !== undefined) {
        // The drift controls hold the user's fields back: only the operator's bookkeeping is written. An object claimed
        // this pass has changed since it was read (the guard would fail): the claim's own watch event brings the next pass.
        if (r.apply.needed && !plan.takeHolds.some((c) => c.name === r.name)) {
          await d.api.patch(rt, desired.metadata.namespace, desired.metadata.name, r.apply.bookkeeping, 'json', {
            fieldManager: FIELD_MANAGER,
            ...guarded,
          });
          outcome.wrote = true;
          d.log.debug(
            { object: { kind: desired.kind, name: desired.metadata.name } },
            'bookkeeping written (drift controls: fields not applied)',
          );
        }
      } else if (r.apply.needed) {
        outcome.applied.set(r.name, await d.api.apply(rt, desired, { fieldManager: FIELD_MANAGER, force: true, ...guarded }));
        outcome.wrote = true;
        d.log.debug({ object: { kind: desired.kind, name: desired.metadata.name }, create: r.apply.create }, 'applied');
      }
      if (r.action === 'adopt') await d.events.normal(target, r.event.reason, r.event.message);
    } catch (err) {
      // Not sent: a Bundle event arrived since the pass read the Bundle (or the Lease is not held); decided again at once.
      if (isSendRefused(err)) {
        outcome.abandoned = errorMessage(err);
        return;
      }
      // The server refused the manifest itself (400, 422, an undeclared field): retrying the same spec cannot help. A 403 may
      // change when someone grants the identity more: retried, with backoff.
      // The server's message may echo a value a reference substituted (a Secret's): never let it out.
      const message = redact(errorMessage(err), r.apply.redactions);
      // A bookkeeping patch guarded by what was read: a changed object is decided again on the next pass.
      if (r.apply.bookkeeping !== undefined && (isStaleWrite(err) || isNotFound(err)))
        outcome.applyFailures.set(r.name, {
          message: `${desired.kind} ${desired.metadata.name} changed since it was read; retrying`,
          terminal: false,
        });
      else
        outcome.applyFailures.set(
          r.name,
          isForbidden(err) ? { ...forbiddenFailure(err), message } : { message, terminal: isManifestRejected(err) },
        );
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
    const written = await guardedPatch(
      d.api,
      { rt, namespace: w.target.namespace, name: w.target.name },
      { patch: w.patch, type: 'json', opts: { fieldManager: FIELD_MANAGER } },
    );
    if (written.kind === 'written') {
      if (w.target.uid !== undefined) (outcome.withdrawn ??= new Set()).add(w.target.uid);
      d.log.info({ object: { kind: w.target.kind, name: w.target.name } }, 'withdrew the claim on an object no longer listed');
    } else if (written.kind !== 'stale' && written.kind !== 'gone' && written.kind !== 'declined')
      d.log.warn({ object: { kind: w.target.kind, name: w.target.name }, err: errorMessage(written.error) }, 'withdrawing a claim failed');
  }
}
