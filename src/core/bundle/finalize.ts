/**
 * What the Bundle's finalizer (smith.atlassian.com/deleteResources) does
 * with each object when the Bundle is deleted, as data. The controller lists
 * the objects and the namespace's Bundles fresh, calls planFinalize, carries
 * the steps out, and lets the Bundle go only in a pass whose plan is `done`
 * (nothing left to write), so every pass decides on what is there now.
 *
 * By propagation:
 *  - background (the default): objects without a deletionDelay are deleted,
 *    dependents first; objects with one (or with an unreadable one) are
 *    released with a countdown: every ownerReference the operator wrote goes,
 *    the former-bundle label names the Bundle, the countdown starts.
 *  - foreground: the garbage collector deletes every object the Bundle still
 *    controls, a deletionDelay included (the user asked for the full
 *    cascade); the finalizer leaves those to it, but releases objects whose
 *    deletionPolicy is Orphan or Approve, and those whose deletion rules
 *    cannot be read (see keptFromCascade).
 *  - orphan: the garbage collector removes the Bundle's reference; the
 *    finalizer takes out the rest of what the operator wrote (dependency
 *    references, their bookkeeping annotation, a countdown stamp, the
 *    part-of label, the applied-hash), so an orphaned object carries only
 *    its user's references and is never collected through a sibling; the
 *    orphan traces last (tracesLast).
 * Whatever the propagation, an object another live Bundle lists is let go at
 * once (the operator's references removed, no countdown): that Bundle takes
 * it, and nothing deletes it.
 * Pure: no client, no clock.
 */
import { EventReasons, type DeletionPropagation } from '../../api/names.js';
import { controllerOf, describeObject, isControlledBy, objectKey, type LiveObject } from './objects.js';
import { neverCollected } from '../gc/scope.js';
import { hasClaimReference, userReferences } from './owner-references.js';
import { isOrphanTrace, tracedUids } from './orphan-evidence.js';
import { planPrune, targetOf } from './prune.js';
import { disownPatch, keptReleasePatch, releasePatch } from './release.js';
import type { FinalizeInput, FinalizePlan, FinalizeStep } from './finalize-types.js';
import {
  coordinateUidsOf,
  orphanCandidates,
  keptForUnreadableManifest,
  keptFromCascade,
  letGo,
  letGoStep,
  manifestFloor,
  orphanStep,
  referenceContext,
  siblingUids,
  unreadableManifest,
  withdrawSteps,
} from './finalize-keep.js';

export function planFinalize(input: FinalizeInput): FinalizePlan {
  const coordinateUids = coordinateUidsOf(input);
  const propagation = effectivePropagation(input, coordinateUids);
  const steps = stepsFor({ ...input, propagation }, coordinateUids);
  const done = steps.every((s) => s.action === 'leave');
  if (propagation !== 'Orphan') return { propagation, steps, done };
  return { propagation, ...tracesLast(input, steps, coordinateUids), done };
}

/** Events: neither collector ever orphans them (neverCollected). */
function neverOrphaned(o: LiveObject): boolean {
  const slash = o.apiVersion.indexOf('/');
  return neverCollected(slash < 0 ? '' : o.apiVersion.slice(0, slash), o.kind);
}

/**
 * The orphan steps in the order that keeps a trace while work is left:
 * first what carries none, and the Events (the collectors never orphan
 * them, so they never become one), then the traces, now or once the
 * collector has taken the Bundle's references out (read on that view of
 * the objects: red team 25 and its review), then the members off the
 * coordinates that traces name (cleaning one first would take their trace
 * away). Stable within each group. While a step before the traces is not
 * written, the controller sends of each later step only its
 * `referencesOnly` patch (the operator's references go, its marks stay), so
 * that nothing cascades through them meanwhile.
 */
function tracesLast(
  input: FinalizeInput,
  steps: readonly FinalizeStep[],
  coordinateUids: ReadonlySet<string>,
): { steps: FinalizeStep[]; traceStepsFrom?: number } {
  const afterCollector: FinalizeInput = {
    ...input,
    objects: input.objects.map((o) =>
      neverOrphaned(o)
        ? o
        : {
            ...o,
            metadata: { ...o.metadata, ownerReferences: (o.metadata.ownerReferences ?? []).filter((r) => r.uid !== input.bundle.uid) },
          },
    ),
  };
  const views = [
    { input, named: tracedUids(input, coordinateUids) },
    { input: afterCollector, named: tracedUids(afterCollector, coordinateUids) },
  ];
  const byUid = views.map(
    (v) => new Map(v.input.objects.flatMap((o) => (o.metadata.uid !== undefined ? [[o.metadata.uid, o] as const] : []))),
  );
  const rank = (s: FinalizeStep): number => {
    const uid = s.target.uid;
    if (uid === undefined || s.action === 'leave') return 0;
    return Math.max(
      ...views.map((v, i) => {
        const o = byUid[i]?.get(uid);
        if (o === undefined) return 0;
        if (v.named.has(uid) && !coordinateUids.has(uid)) return 2;
        return isOrphanTrace(o, v.input, v.named) ? 1 : 0;
      }),
    );
  };
  const ranked = steps.map((s, i) => ({ s, i, r: rank(s) })).sort((a, b) => a.r - b.r || a.i - b.i);
  const first = ranked.findIndex((x) => x.r > 0);
  return { steps: ranked.map((x) => x.s), ...(first >= 0 ? { traceStepsFrom: first } : {}) };
}

/** What of a step is sent while the orphan traces wait (tracesLast): only the references of an orphan step, if it has any. */
export function whileTracesWait(step: FinalizeStep): FinalizeStep | undefined {
  if (step.action !== 'orphan' || step.referencesOnly === undefined) return undefined;
  return {
    action: 'orphan',
    target: step.target,
    patch: step.referencesOnly,
    event: { reason: step.event.reason, message: `${step.event.message} (its marks wait for the steps before it)` },
  };
}

/**
 * The garbage collector removes the orphan finalizer once it has taken the
 * Bundle's reference out of every dependent, possibly before the finalizer's
 * first pass: the Bundle then looks like a background deletion. The objects
 * say otherwise when one of them carries an orphan trace (isOrphanTrace):
 * then it is an orphan deletion, nothing is deleted, what the operator wrote
 * goes. Mistaking a background deletion for an orphan one keeps objects; the
 * reverse would delete them, so any one trace decides. Once a pass has read
 * an orphan deletion, the controller records it on the Bundle before its
 * first orphan write (recordedOrphan), and every later pass reads it so:
 * traces a person erases while the pass holds them back no longer turn the
 * deletion into a background one (red team 26). A Bundle whose every object
 * is of a kind the collector never orphans (Events) leaves no trace: a known
 * limit (docs/safety.md).
 */
export function effectivePropagation(
  input: FinalizeInput,
  coordinateUids: ReadonlySet<string> = coordinateUidsOf(input),
): DeletionPropagation {
  if (input.propagation !== 'Background') return input.propagation;
  if (input.recordedOrphan === true) return 'Orphan';
  const named = tracedUids(input, coordinateUids);
  return input.objects.some((o) => isOrphanTrace(o, input, named)) ? 'Orphan' : 'Background';
}

/**
 * Siblings, for telling the operator's dependency references from the
 * user's: what the Bundle holds (or, orphaning, what it left traces on) and
 * every object at its coordinates, held or not (red team 21: a reference
 * whose record another tool blanked is told the operator's by its field
 * manager only when its owner is a sibling).
 */
function stepsFor(input: FinalizeInput, coordinateUids: ReadonlySet<string>): FinalizeStep[] {
  const held = input.propagation === 'Orphan' ? orphanCandidates(input, coordinateUids) : input.objects.filter((o) => isHeldBy(o, input));
  const siblings = new Set([...siblingUids(held), ...coordinateUids]);
  return [...propagationSteps(input, held, siblings), ...withdrawSteps(input, siblings)];
}

/** What happens to the objects the Bundle holds (and, orphaning, to those it left traces on). */
function propagationSteps(input: FinalizeInput, held: readonly LiveObject[], siblings: ReadonlySet<string>): FinalizeStep[] {
  switch (input.propagation) {
    case 'Background':
      return backgroundSteps(held, input, siblings);
    case 'Foreground':
      return held.map(
        (o) =>
          letGo(o, input, siblings) ??
          keptFromCascade(o, input, siblings) ?? {
            action: 'leave',
            target: targetOf(o),
            reason: o.metadata.deletionTimestamp !== undefined ? 'terminating' : 'collector-deletes',
          },
      );
    case 'Orphan':
      return held.map((o) => letGo(o, input, siblings) ?? orphanStep(o, referenceContext(o, input, siblings), input.bundle));
  }
}

/** The prune rules with nothing listed (ordering and soft-delete decisions), then release instead of any delayed delete. */
function backgroundSteps(controlled: readonly LiveObject[], input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep[] {
  const { bundle, now, stampAt } = input;
  const byUid = new Map(controlled.map((o) => [o.metadata.uid, o]));
  // The Bundle is being deleted: no replacement will become Ready, so a deleteWhen gate holds nothing back here
  // (a gated object is released with a countdown like any delayed one).
  const actions = planPrune({
    controlled,
    inSpec: new Set(),
    now,
    stampAt,
    selfUid: bundle.uid,
    bundleName: bundle.name,
    listings: input.listings,
    defaults: bundle.defaults,
    floorFor: (o) => manifestFloor(o, input),
    bundleReady: true,
    ...(input.stampSeal ? { stampSeal: input.stampSeal } : {}),
    ...(input.countdownRecord ? { countdownRecord: input.countdownRecord } : {}),
  });
  return actions.flatMap((action): FinalizeStep[] => {
    const o = byUid.get(action.target.uid);
    if (o === undefined || action.target.uid === undefined) return [];
    const what = describeObject(o);
    switch (action.action) {
      case 'terminating':
        return [{ action: 'leave', target: action.target, reason: 'terminating' }];
      case 'listed-elsewhere':
        return [letGoStep(o, bundle.name, referenceContext(o, input, siblings), action.by)];
      default: {
        const why = unreadableManifest(o, input);
        if (why !== undefined) return [keptForUnreadableManifest(o, input, referenceContext(o, input, siblings), why)];
        break;
      }
    }
    switch (action.action) {
      case 'delete': {
        if (action.afterDelay) break;
        // Another owner's reference (the user's, or another tool's) on it: as kube-controller-manager's collector does with an
        // object that has an owner left, only the Bundle's references go; the collector deletes it once no owner is live.
        const refs = referenceContext(o, input, siblings);
        const others = userReferences(o.metadata, refs);
        if (others.length > 0) {
          const owners = others.map((r) => `${r.kind} ${r.name}`).join(', ');
          return [
            {
              action: 'disown',
              target: action.target,
              patch: disownPatch(o, refs),
              event: {
                reason: EventReasons.Released,
                message: `disowned ${what}: it has another owner (${owners}), so only the Bundle's references go; the garbage collector deletes it once no owner is left`,
              },
            },
          ];
        }
        return [
          {
            action: 'delete',
            target: action.target,
            event: { reason: EventReasons.Pruned, message: `deleted ${what}: its Bundle is being deleted` },
          },
        ];
      }
      case 'release':
        return [
          {
            action: 'release',
            target: action.target,
            patch: keptReleasePatch(o, bundle.name, referenceContext(o, input, siblings)),
            event: { reason: EventReasons.Released, message: `released ${what}: its deletionPolicy is Orphan; kept, never deleted` },
          },
        ];
      default:
        break;
    }
    // mark, wait, await, expired, invalid: the object asked for a delay or a gate (or has unreadable rules): release it, never delete it here.
    return [
      {
        action: 'release',
        target: action.target,
        patch: releasePatch(
          o,
          { name: bundle.name, defaults: bundle.defaults },
          referenceContext(o, input, siblings),
          { now, stampAt },
          input.signRelease,
          { seal: input.stampSeal, floor: manifestFloor(o, input), record: input.countdownRecord },
        ),
        event: {
          reason: EventReasons.Released,
          message: `released ${what} with a countdown (its deletionDelay, deletionPolicy or deleteWhen): deleted when the countdown ends and any gate is open; a Bundle that lists it again adopts it and cancels the countdown`,
        },
      },
    ];
  });
}

/**
 * What the Bundle holds: the objects it controls, and uncontrolled objects
 * carrying only its claim (a Conflict it lost to a Bundle that has since let
 * go, before this one took the object). Left alone, the collector would take
 * the latter with the Bundle, a deletionDelay ignored and another lister's
 * claim overlooked; they go the way of what the Bundle controls.
 */
function isHeldBy(o: LiveObject, input: FinalizeInput): boolean {
  if (isControlledBy(o, input.bundle.uid)) return true;
  // An uncontrolled object carrying its claim is its own only while it still lists it; a claim on one it dropped is
  // withdrawn (withdrawSteps).
  return controllerOf(o) === undefined && input.coordinates.has(objectKey(o)) && hasClaimReference(o, input.bundle.uid, input.claimRecords);
}
