/**
 * The finalizer's steps for objects it does not delete: let go to another
 * live Bundle that lists them, released from the cascade (deletionPolicy
 * Orphan or Approve, rules that cannot be read), orphaned
 * (what the operator wrote taken out), and claims withdrawn; with the
 * manifest floor and reference context every step shares. Pure.
 */
import { Annotations, ApplySetLabels, EventReasons } from '../../api/names.js';
import { isMemberOf } from './applyset.js';
import { readDeletionRules, stricterRules, type DeletionRules } from '../softdelete/rules.js';
import { controllerOf, describeObject, jsonPointerSegment, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';
import { claimWithdrawal, type BundleListing } from './ownership.js';
import { hasClaimReference, operatorWrittenReferences, recordNamesAny, type ReferenceOwnerContext } from './owner-references.js';
import { listedByOther, targetOf } from './prune.js';
import { keptReleasePatch, letGoPatch, orphanPatch, referencesOnlyPatch, releasePatch } from './release.js';
import { countdownOf } from './countdown.js';
import type { FinalizeInput, FinalizeStep } from './finalize-types.js';
import { orphanCandidacy } from './orphan-evidence.js';

/**
 * What the manifest declares for an object, over the Bundle's defaults: a
 * floor for its live rules (stricterRules), so that a deletionPolicy or
 * deletionDelay taken off or loosened by hand while the finalizer held
 * (nothing re-applies it then) does not turn an Orphan or Approve object, or
 * a delayed one, into one deleted sooner.
 */
export function manifestFloor(o: LiveObject, input: FinalizeInput): DeletionRules | undefined {
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
export function unreadableManifest(o: LiveObject, input: FinalizeInput): string | undefined {
  const declared = input.declared?.get(objectKey(o));
  if (declared === undefined) return undefined;
  const reading = readDeletionRules(declared, input.bundle.defaults);
  return reading.ok ? undefined : reading.message;
}

export function keptForUnreadableManifest(o: LiveObject, input: FinalizeInput, refs: ReferenceOwnerContext, why: string): FinalizeStep {
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

export function letGo(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep | undefined {
  if (o.metadata.deletionTimestamp !== undefined) return undefined;
  const by = listedByOther(o, input.listings, input.bundle.uid);
  return by === undefined ? undefined : letGoStep(o, input.bundle.name, referenceContext(o, input, siblings), by);
}

/**
 * Foreground is the full cascade, but an object whose deletionPolicy is
 * Orphan or Approve asked never to be deleted without that: it is released
 * (Orphan for good, Approve with a signed countdown) as soon as the
 * finalizer sees the deletion. The collector acts on the same event; only
 * an admission guard on its deletes makes the
 * release certain to come first.
 */
export function keptFromCascade(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep | undefined {
  if (o.metadata.deletionTimestamp !== undefined) return undefined;
  const why = unreadableManifest(o, input);
  if (why !== undefined) return keptForUnreadableManifest(o, input, referenceContext(o, input, siblings), why);
  const reading = readDeletionRules(o.metadata.annotations, input.bundle.defaults);
  const floor = manifestFloor(o, input);
  const countdown = countdownOf(o, { seal: input.stampSeal, defaults: input.bundle.defaults, extra: floor, record: input.countdownRecord });
  const what = describeObject(o);
  const refs = referenceContext(o, input, siblings);
  const released = (patch: JsonPatchOperation[], why: string): FinalizeStep => ({
    action: 'release',
    target: targetOf(o),
    patch,
    event: { reason: EventReasons.Released, message: `released ${what} from the foreground cascade: ${why}` },
  });
  const kept = (): FinalizeStep =>
    released(keptReleasePatch(o, input.bundle.name, refs), 'its deletionPolicy is Orphan; kept, never deleted');
  const countingDown = (why: string): FinalizeStep =>
    released(
      releasePatch(
        o,
        { name: input.bundle.name, defaults: input.bundle.defaults },
        refs,
        { now: input.now, stampAt: input.stampAt },
        input.signRelease,
        { seal: input.stampSeal, floor, record: input.countdownRecord },
      ),
      why,
    );
  if (!reading.ok) {
    // Nothing is deleted on a value that could not be read, the cascade included: the floors (manifest, sealed
    // rules) still decide Orphan; otherwise it is released as a background deletion releases it (no countdown can
    // start on rules that cannot be read: the sweeper keeps it and reports them).
    if (countdown.floor?.policy === 'Orphan') return kept();
    return countingDown(`its deletion rules cannot be read (${reading.message}); kept, never deleted on a value that could not be read`);
  }
  const rules = stricterRules(reading.rules, countdown.floor);
  if (rules.policy === 'Orphan') return kept();
  if (rules.policy === 'Approve') return countingDown('its deletionPolicy is Approve; deleted once approved');
  return undefined;
}

export function letGoStep(o: LiveObject, bundleName: string, refs: ReferenceOwnerContext, by: BundleListing): FinalizeStep {
  return {
    action: 'let-go',
    target: targetOf(o),
    by,
    patch: letGoPatch(o, bundleName, refs),
    event: { reason: EventReasons.Released, message: `let ${describeObject(o)} go to Bundle ${by.name}, which lists it` },
  };
}

/** Which of an object's references the operator wrote, as the finalizer sees it: the claims of live Bundles listing it stay. */
export function referenceContext(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): ReferenceOwnerContext {
  const listings = input.listings.get(objectKey(o)) ?? [];
  const named = input.namedOwners?.get(objectKey(o));
  return {
    siblingUids: siblings,
    liveClaimUids: new Set(listings.filter((c) => c.uid !== input.bundle.uid).map((c) => c.uid)),
    claimRecords: input.claimRecords,
    ...(named !== undefined ? { namedByManifest: named } : {}),
  };
}

/**
 * Claims this Bundle recorded on objects another controller holds (it lost
 * a Conflict over them) are withdrawn (see claimWithdrawal). Uncontrolled
 * objects carrying its claim are held (background, foreground) or orphan
 * candidates (orphan): propagationSteps decides for them.
 */
export function withdrawSteps(input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep[] {
  const steps: FinalizeStep[] = [];
  for (const o of input.objects) {
    if (o.metadata.deletionTimestamp !== undefined) continue;
    const controller = controllerOf(o);
    const step =
      controller === undefined
        ? staleClaimStep(o, input, siblings)
        : controller.uid === input.bundle.uid
          ? undefined
          : withdrawStep(o, input, `which ${controller.kind} ${controller.name} controls`);
    if (step !== undefined) steps.push(step);
  }
  return steps;
}

function withdrawStep(o: LiveObject, input: FinalizeInput, why: string): FinalizeStep | undefined {
  const patch = claimWithdrawal(o, input.bundle.uid, input.listings.get(objectKey(o)) ?? [], input.claimRecords);
  if (patch === undefined) return undefined;
  return {
    action: 'withdraw',
    target: targetOf(o),
    patch,
    event: { reason: EventReasons.Released, message: `withdrew the claim on ${describeObject(o)}, ${why}` },
  };
}

/**
 * A claim on an uncontrolled object the Bundle no longer lists (its spec
 * dropped it, and an invalid spec planned no withdrawal) is withdrawn, not
 * held: the object is not the Bundle's to delete, and left in place the
 * claim would make it the collector's once the Bundle is gone (red team 21).
 * Orphaning takes the claim out with the rest (orphanStep).
 */
function staleClaimStep(o: LiveObject, input: FinalizeInput, siblings: ReadonlySet<string>): FinalizeStep | undefined {
  if (input.propagation === 'Orphan' || input.coordinates.has(objectKey(o)) || !hasClaimReference(o, input.bundle.uid, input.claimRecords))
    return undefined;
  // Another live Bundle lists it: let go to that one (the mark and all), as a held object would be.
  return letGo(o, input, siblings) ?? withdrawStep(o, input, 'which the Bundle no longer lists');
}

/** Uids of the objects at the Bundle's coordinates. */
export function coordinateUidsOf(input: FinalizeInput): Set<string> {
  return new Set(
    input.objects.flatMap((o) => (o.metadata.uid !== undefined && input.coordinates.has(objectKey(o)) ? [o.metadata.uid] : [])),
  );
}

/**
 * Orphan candidates: what still names the Bundle, and what the collector
 * orphaned before the finalizer saw it: no controller, and at one of the
 * Bundle's coordinates what only the operator writes (its dependency
 * record, a countdown stamp, its applied-hash) or the Bundle's ApplySet
 * membership (red team 22: another tool removed the record); off them, the
 * Bundle's membership, or a dependency record naming an object at the
 * coordinates or another candidate (a dependent the spec no longer lists
 * whose prune was held back, or not yet decided, when the Bundle was
 * deleted: red team 13; with its former sibling dropped too: red teams 21
 * and 22, another tool's ApplySet having relabelled it), which would
 * otherwise go with that former sibling. An object another controller
 * holds, or one a Bundle released (former-bundle label: the sweeper's), is
 * never touched. `coordinateUids`: uids of the objects at the coordinates.
 */
export function orphanCandidates(input: FinalizeInput, coordinateUids: ReadonlySet<string>): LiveObject[] {
  const chosen = new Set<LiveObject>();
  const dependents: LiveObject[] = [];
  for (const o of input.objects) {
    const verdict = orphanCandidacy(o, input);
    if (verdict === 'candidate') chosen.add(o);
    else if (verdict === 'if-its-record-names-one') dependents.push(o);
  }
  // A dependent whose record names an object at the coordinates or a candidate is one too, transitively.
  const named = new Set([...coordinateUids, ...[...chosen].flatMap((o) => o.metadata.uid ?? [])]);
  for (let grew = true; grew;) {
    grew = false;
    for (const o of dependents) {
      if (chosen.has(o) || !recordNamesAny(o.metadata.annotations, named)) continue;
      chosen.add(o);
      if (o.metadata.uid !== undefined) named.add(o.metadata.uid);
      grew = true;
    }
  }
  return input.objects.filter((o) => chosen.has(o));
}

export function orphanStep(o: LiveObject, refs: ReferenceOwnerContext, bundle: FinalizeInput['bundle']): FinalizeStep {
  const target = targetOf(o);
  if (o.metadata.deletionTimestamp !== undefined) return { action: 'leave', target, reason: 'terminating' };
  const ours = operatorWrittenReferences(o.metadata, refs);
  const annotations = o.metadata.annotations ?? {};
  // Orphaned, it leaves the Bundle's ApplySet too: a Bundle later created under the same name must not find it a member
  // (red team 23), and kubectl's ApplySet prune must not take it for one.
  const member = isMemberOf(o, bundle.name, bundle.namespace);
  if (
    ours.length === 0 &&
    !member &&
    annotations[Annotations.dependencyReferences] === undefined &&
    annotations[Annotations.deletionTimestamp] === undefined &&
    annotations[Annotations.appliedHash] === undefined
  )
    return { action: 'leave', target, reason: 'orphaned' };
  const referencesOnly = referencesOnlyPatch(o, refs);
  return {
    action: 'orphan',
    target,
    patch: withoutMembership(orphanPatch(o, refs), member),
    event: {
      reason: EventReasons.Released,
      message: `orphaned ${describeObject(o)}: its Bundle was deleted with orphan propagation; it keeps only its user's ownerReferences`,
    },
    ...(referencesOnly ? { referencesOnly } : {}),
  };
}

/** The patch, taking the part-of label off too when the object is the Bundle's member and the patch does not already. */
function withoutMembership(patch: JsonPatchOperation[], member: boolean): JsonPatchOperation[] {
  const path = `/metadata/labels/${jsonPointerSegment(ApplySetLabels.partOf)}`;
  return member && !patch.some((op) => op.path === path) ? [...patch, { op: 'remove', path }] : patch;
}

/** Uids of the objects the finalizer acts on: for objects applied before dependency references were recorded, a blocking reference to one of them is the operator's. */
export function siblingUids(objects: readonly LiveObject[]): Set<string> {
  return new Set(objects.flatMap((o) => (o.metadata.uid !== undefined ? [o.metadata.uid] : [])));
}
