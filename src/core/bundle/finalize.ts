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
 *    references, their bookkeeping annotation, a countdown stamp), so an
 *    orphaned object carries only its user's references and is never
 *    collected through a sibling.
 * Whatever the propagation, an object another live Bundle lists is let go at
 * once (the operator's references removed, no countdown): that Bundle takes
 * it, and nothing deletes it.
 * Pure: no client, no clock.
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { Annotations, EventReasons, Finalizers, Labels, type DeletionPropagation } from '../../api/names.js';
import type { ReleaseSigner } from '../softdelete/provenance.js';
import { readDeletionRules, stricterRules, type DeletionRules } from '../softdelete/rules.js';
import { controllerOf, describeObject, isControlledBy, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import {
  claimWithdrawal,
  hasClaimReference,
  operatorWrittenReferences,
  userReferences,
  type BundleClaim,
  type NamedOwner,
  type ReferenceOwnerContext,
} from './ownership.js';
import { listedByOther, planPrune, targetOf, type ObjectTarget, type PlannedEvent } from './prune.js';
import { keptReleasePatch, orphanPatch, referencesPatch, releasePatch } from './release.js';
import { countdownOf, type CountdownRecord } from './countdown.js';

/** How the Bundle is being deleted (kubectl delete --cascade=background|foreground|orphan). */

/**
 * From the Bundle's finalizers. The API server never sets both orphan and
 * foregroundDeletion; were both there, orphan is the reading that deletes
 * nothing.
 */
export function propagationOf(finalizers: readonly string[] | undefined): DeletionPropagation {
  if (finalizers?.includes(Finalizers.orphan)) return 'Orphan';
  if (finalizers?.includes(Finalizers.foregroundDeletion)) return 'Foreground';
  return 'Background';
}

export interface FinalizeInput {
  propagation: DeletionPropagation;
  /** The Bundle, with its spec.deletionDefaults (a released object takes what it needs of them along). */
  bundle: { name: string; uid: string; defaults?: DeletionDefaults | undefined };
  /**
   * Every object of the Bundle's kinds in its namespace, read fresh
   * (metadata is enough). Background and foreground act on those the Bundle
   * controls; orphan also on those that still carry a reference to it, and
   * on uncontrolled objects at `coordinates` that carry the operator's
   * dependencyReferences annotation or a countdown stamp (the garbage
   * collector may have taken the Bundle's reference out before the
   * finalizer saw them).
   */
  objects: readonly LiveObject[];
  /** objectKey of every object the Bundle's spec lists and its status counts as pending deletion. */
  coordinates: ReadonlySet<string>;
  /** Live Bundles listing each object (by objectKey), read fresh; the Bundle being deleted is not live. */
  claims: ReadonlyMap<string, readonly BundleClaim[]>;
  /** Lower bound of the API server's time. */
  now: number;
  /** Upper bound of the API server's time: new countdown stamps carry it. */
  stampAt: number;
  /** Signs each release with a countdown, so that the sweeper can tell it from a label anyone could write. */
  signRelease: ReleaseSigner;
  /** Proves the stamps this operator wrote: a release carries on only a proven countdown, and starts one written by hand over. */
  stampSeal?: StampSeal;
  /** What the deleted Bundle's status recorded of its countdowns (countdown.ts): it decides over proofs written back. */
  countdownRecord?: CountdownRecord;
  /**
   * The annotations each object the spec lists is declared with, by
   * objectKey. Their deletion rules stand in for any the live object lacks
   * (over spec.deletionDefaults): a deletionPolicy taken off by hand while
   * the finalizer held (nothing re-applies it then) does not turn an Orphan
   * or Approve object into one deleted outright.
   */
  declared?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The ownerReferences each listed object's manifest names itself, by
   * objectKey: the user's, even when the operator's apply wrote them (see
   * ReferenceOwnerContext.namedByManifest).
   */
  namedOwners?: ReadonlyMap<string, readonly NamedOwner[]>;
}

/**
 * What the manifest declares for an object, over the Bundle's defaults: a
 * floor for its live rules (stricterRules), so that a deletionPolicy or
 * deletionDelay taken off or loosened by hand while the finalizer held
 * (nothing re-applies it then) does not turn an Orphan or Approve object, or
 * a delayed one, into one deleted sooner.
 */
function manifestFloor(o: LiveObject, input: FinalizeInput): DeletionRules | undefined {
  const declared = input.declared?.get(objectKey(o));
  if (declared === undefined) return undefined;
  const reading = readDeletionRules(declared, input.bundle.defaults);
  return reading.ok ? reading.rules : undefined;
}

/**
 * Why the deletion rules the object's manifest declares cannot be read, if
 * they cannot (a typo beside an Orphan, a `!{...}` reference): nothing is
 * deleted on them, so the object is kept (red team 8: the live object,
 * without the rules its manifest could not apply, was deleted).
 */
function unreadableManifest(o: LiveObject, input: FinalizeInput): string | undefined {
  const declared = input.declared?.get(objectKey(o));
  if (declared === undefined) return undefined;
  const reading = readDeletionRules(declared, input.bundle.defaults);
  return reading.ok ? undefined : reading.message;
}

function keptForUnreadableManifest(o: LiveObject, input: FinalizeInput, refs: ReferenceOwnerContext, why: string): FinalizeStep {
  return {
    action: 'release',
    target: targetOf(o),
    patch: keptReleasePatch(o, input.bundle.name, refs),
    event: {
      reason: EventReasons.Released,
      message: `released ${describeObject(o)}: the deletion rules its manifest declares cannot be read (${why}); kept (deletionPolicy Orphan written onto it), never deleted on a value that could not be read`,
    },
  };
}

export type FinalizeStep =
  /** Delete with uid and resourceVersion preconditions (background, no deletionDelay). */
  | { action: 'delete'; target: ObjectTarget; event: PlannedEvent }
  /** Release with a countdown (background, a deletionDelay): JSON patch guarded by the ownerReferences it read. */
  | { action: 'release'; target: ObjectTarget; patch: JsonPatchOperation[]; event: PlannedEvent }
  /** Another live Bundle lists the object: release without a countdown; that Bundle takes it. */
  | { action: 'let-go'; target: ObjectTarget; patch: JsonPatchOperation[]; by: BundleClaim; event: PlannedEvent }
  /** Orphan: take out what the operator wrote, keep the object. */
  | { action: 'orphan'; target: ObjectTarget; patch: JsonPatchOperation[]; event: PlannedEvent }
  /** An object another Bundle controls and this one claimed (a Conflict it lost): its claim reference goes. */
  | { action: 'withdraw'; target: ObjectTarget; patch: JsonPatchOperation[]; event: PlannedEvent }
  /** Nothing to write: being deleted already, left to the garbage collector, or orphaned already. */
  | { action: 'leave'; target: ObjectTarget; reason: 'terminating' | 'collector-deletes' | 'orphaned' };

export interface FinalizePlan {
  /** The propagation acted on (see effectivePropagation). */
  propagation: DeletionPropagation;
  /** Background: dependents before what they reference. */
  steps: FinalizeStep[];
  /** Nothing left to write: the finalizer may go. */
  done: boolean;
}

export function planFinalize(input: FinalizeInput): FinalizePlan {
  const propagation = effectivePropagation(input);
  const steps = stepsFor({ ...input, propagation });
  return { propagation, steps, done: steps.every((s) => s.action === 'leave') };
}

/**
 * The garbage collector removes the orphan finalizer once it has taken the
 * Bundle's reference out of every dependent, possibly before the finalizer's
 * first pass: the Bundle then looks like a background deletion. The objects
 * say otherwise: one at the Bundle's coordinates that the operator applied
 * (applied-hash), that nothing controls, that was not released (no
 * former-bundle label) and that no other live Bundle lists was orphaned. Then
 * it is an orphan deletion: nothing is deleted, what the operator wrote goes.
 * Mistaking a background deletion for an orphan one keeps objects; the
 * reverse would delete them, so any such trace decides.
 */
export function effectivePropagation(input: FinalizeInput): DeletionPropagation {
  if (input.propagation !== 'Background') return input.propagation;
  const orphaned = input.objects.some((o) => {
    const meta = o.metadata;
    return (
      controllerOf(o) === undefined &&
      meta.deletionTimestamp === undefined &&
      meta.annotations?.[Annotations.appliedHash] !== undefined &&
      meta.labels?.[Labels.formerBundle] === undefined &&
      input.coordinates.has(objectKey(o)) &&
      listedByOther(o, input.claims, input.bundle.uid) === undefined
    );
  });
  return orphaned ? 'Orphan' : 'Background';
}

function stepsFor(input: FinalizeInput): FinalizeStep[] {
  return [...propagationSteps(input), ...withdrawSteps(input)];
}

/** What happens to the objects the Bundle controls (and, orphaning, to those it left traces on). */
function propagationSteps(input: FinalizeInput): FinalizeStep[] {
  const controlled = input.objects.filter((o) => isHeldBy(o, input.bundle.uid));
  switch (input.propagation) {
    case 'Background':
      return backgroundSteps(controlled, input);
    case 'Foreground': {
      const siblings = siblingUids(controlled);
      return controlled.map(
        (o) =>
          letGo(o, input, siblings) ??
          keptFromCascade(o, input, siblings) ?? {
            action: 'leave',
            target: targetOf(o),
            reason: o.metadata.deletionTimestamp !== undefined ? 'terminating' : 'collector-deletes',
          },
      );
    }
    case 'Orphan': {
      const candidates = input.objects.filter((o) => isOrphanCandidate(o, input));
      const siblings = siblingUids(candidates);
      return candidates.map((o) => letGo(o, input, siblings) ?? orphanStep(o, referenceContext(o, input, siblings)));
    }
  }
}

/** The prune rules with nothing listed (ordering and soft-delete decisions), then release instead of any delayed delete. */
function backgroundSteps(controlled: readonly LiveObject[], input: FinalizeInput): FinalizeStep[] {
  const { bundle, now, stampAt } = input;
  const byUid = new Map(controlled.map((o) => [o.metadata.uid, o]));
  const siblings = siblingUids(controlled);
  // The Bundle is being deleted: no replacement will become Ready, so a deleteWhen gate holds nothing back here
  // (a gated object is released with a countdown like any delayed one).
  const actions = planPrune({
    controlled,
    inSpec: new Set(),
    now,
    stampAt,
    selfUid: bundle.uid,
    bundleName: bundle.name,
    claims: input.claims,
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
        return [letGoStep(o, referenceContext(o, input, siblings), action.by)];
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
              action: 'orphan',
              target: action.target,
              patch: referencesPatch(o, refs),
              event: {
                reason: EventReasons.Released,
                message: `released ${what}: it has another owner (${owners}), so only the Bundle's references go; the garbage collector deletes it once no owner is left`,
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
          message: `released ${what}: it has a deletionDelay or a deletionPolicy and is kept until its deletion is due; re-apply the Bundle to keep it`,
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
function isHeldBy(o: LiveObject, bundleUid: string): boolean {
  if (isControlledBy(o, bundleUid)) return true;
  return controllerOf(o) === undefined && hasClaimReference(o, bundleUid);
}

function letGo(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep | undefined {
  if (o.metadata.deletionTimestamp !== undefined) return undefined;
  const by = listedByOther(o, input.claims, input.bundle.uid);
  return by === undefined ? undefined : letGoStep(o, referenceContext(o, input, siblings), by);
}

/**
 * Foreground is the full cascade, but an object whose deletionPolicy is
 * Orphan or Approve asked never to be deleted without that: it is released
 * (Orphan for good, Approve with a signed countdown) as soon as the
 * finalizer sees the deletion. The collector acts on the same event; only
 * an admission guard on its deletes makes the
 * release certain to come first.
 */
function keptFromCascade(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep | undefined {
  if (o.metadata.deletionTimestamp !== undefined) return undefined;
  const why = unreadableManifest(o, input);
  if (why !== undefined) return keptForUnreadableManifest(o, input, referenceContext(o, input, siblings), why);
  const reading = readDeletionRules(o.metadata.annotations, input.bundle.defaults);
  const floor = manifestFloor(o, input);
  const countdown = countdownOf(o, { seal: input.stampSeal, defaults: input.bundle.defaults, extra: floor, record: input.countdownRecord });
  const what = describeObject(o);
  const refs = referenceContext(o, input, siblings);
  if (!reading.ok) {
    // Nothing is deleted on a value that could not be read, the cascade included: the floors (manifest, sealed
    // rules) still decide Orphan; otherwise it is released as a background deletion releases it (no countdown can
    // start on rules that cannot be read: the sweeper keeps it and reports them).
    if (countdown.floor?.policy === 'Orphan') {
      return {
        action: 'release',
        target: targetOf(o),
        patch: keptReleasePatch(o, input.bundle.name, refs),
        event: {
          reason: EventReasons.Released,
          message: `released ${what} from the foreground cascade: its deletionPolicy is Orphan; kept, never deleted`,
        },
      };
    }
    const patch = releasePatch(
      o,
      { name: input.bundle.name, defaults: input.bundle.defaults },
      refs,
      { now: input.now, stampAt: input.stampAt },
      input.signRelease,
      { seal: input.stampSeal, floor, record: input.countdownRecord },
    );
    return {
      action: 'release',
      target: targetOf(o),
      patch,
      event: {
        reason: EventReasons.Released,
        message: `released ${what} from the foreground cascade: its deletion rules cannot be read (${reading.message}); kept, never deleted on a value that could not be read`,
      },
    };
  }
  const rules = stricterRules(reading.rules, countdown.floor);
  if (rules.policy === 'Orphan') {
    return {
      action: 'release',
      target: targetOf(o),
      patch: keptReleasePatch(o, input.bundle.name, refs),
      event: {
        reason: EventReasons.Released,
        message: `released ${what} from the foreground cascade: its deletionPolicy is Orphan; kept, never deleted`,
      },
    };
  }
  if (rules.policy === 'Approve') {
    const patch = releasePatch(
      o,
      { name: input.bundle.name, defaults: input.bundle.defaults },
      refs,
      { now: input.now, stampAt: input.stampAt },
      input.signRelease,
      { seal: input.stampSeal, floor, record: input.countdownRecord },
    );
    return {
      action: 'release',
      target: targetOf(o),
      patch,
      event: {
        reason: EventReasons.Released,
        message: `released ${what} from the foreground cascade: its deletionPolicy is Approve; deleted once approved`,
      },
    };
  }
  return undefined;
}

function letGoStep(o: LiveObject, refs: ReferenceOwnerContext, by: BundleClaim): FinalizeStep {
  return {
    action: 'let-go',
    target: targetOf(o),
    by,
    patch: referencesPatch(o, refs),
    event: { reason: EventReasons.Released, message: `released ${describeObject(o)} to Bundle ${by.name}, which lists it` },
  };
}

/** Which of an object's references the operator wrote, as the finalizer sees it: the claims of live Bundles listing it stay. */
function referenceContext(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): ReferenceOwnerContext {
  const claims = input.claims.get(objectKey(o)) ?? [];
  const named = input.namedOwners?.get(objectKey(o));
  return {
    siblingUids: siblings,
    liveClaimUids: new Set(claims.filter((c) => c.uid !== input.bundle.uid).map((c) => c.uid)),
    ...(named !== undefined ? { namedByManifest: named } : {}),
  };
}

/**
 * Claims this Bundle recorded on objects another controller holds (it lost
 * a Conflict over them) are withdrawn (see claimWithdrawal). Uncontrolled
 * objects carrying its claim are held (background, foreground) or orphan
 * candidates (orphan): propagationSteps decides for them.
 */
function withdrawSteps(input: FinalizeInput): FinalizeStep[] {
  const steps: FinalizeStep[] = [];
  for (const o of input.objects) {
    const controller = controllerOf(o);
    if (controller === undefined || controller.uid === input.bundle.uid || o.metadata.deletionTimestamp !== undefined) continue;
    const patch = claimWithdrawal(o, input.bundle.uid, input.claims.get(objectKey(o)) ?? []);
    if (patch !== undefined)
      steps.push({
        action: 'withdraw',
        target: targetOf(o),
        patch,
        event: {
          reason: EventReasons.Released,
          message: `withdrew the claim on ${describeObject(o)}, which ${controller.kind} ${controller.name} controls`,
        },
      });
  }
  return steps;
}

/**
 * Orphan candidates: what still names the Bundle, and what the collector
 * orphaned before the finalizer saw it (no controller, the operator's
 * annotation or countdown stamp, at one of the Bundle's coordinates). An
 * object another controller holds, or one a Bundle released (former-bundle
 * label: the sweeper's), is never touched.
 */
function isOrphanCandidate(o: LiveObject, input: FinalizeInput): boolean {
  const controller = controllerOf(o);
  if (controller !== undefined) return controller.uid === input.bundle.uid;
  if (o.metadata.ownerReferences?.some((r) => r.uid === input.bundle.uid)) return true;
  if (!input.coordinates.has(objectKey(o))) return false;
  // Only the operator writes these; a released object (former-bundle label) is the sweeper's, not ours.
  const annotations = o.metadata.annotations ?? {};
  const countingDown = annotations[Annotations.deletionTimestamp] !== undefined && o.metadata.labels?.[Labels.formerBundle] === undefined;
  return annotations[Annotations.dependencyReferences] !== undefined || countingDown;
}

function orphanStep(o: LiveObject, refs: ReferenceOwnerContext): FinalizeStep {
  const target = targetOf(o);
  if (o.metadata.deletionTimestamp !== undefined) return { action: 'leave', target, reason: 'terminating' };
  const ours = operatorWrittenReferences(o.metadata, refs);
  const annotations = o.metadata.annotations ?? {};
  if (
    ours.length === 0 &&
    annotations[Annotations.dependencyReferences] === undefined &&
    annotations[Annotations.deletionTimestamp] === undefined
  )
    return { action: 'leave', target, reason: 'orphaned' };
  return {
    action: 'orphan',
    target,
    patch: orphanPatch(o, refs),
    event: {
      reason: EventReasons.Released,
      message: `orphaned ${describeObject(o)}: its Bundle was deleted with orphan propagation; it keeps only its user's ownerReferences`,
    },
  };
}

/** Uids of the objects the finalizer acts on: for objects applied before dependency references were recorded, a blocking reference to one of them is the operator's. */
function siblingUids(objects: readonly LiveObject[]): Set<string> {
  return new Set(objects.flatMap((o) => (o.metadata.uid !== undefined ? [o.metadata.uid] : [])));
}
