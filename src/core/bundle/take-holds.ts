/**
 * Take-holds: how a Bundle takes hold of what it lists before anything else
 * in a pass (cancel a countdown, adopt, take over from a Bundle that let go,
 * write a claim where it loses a Conflict), and how it withdraws its claims
 * on what it no longer lists. Part of the plan (plan.ts calls planTakeHolds
 * and planWithdrawals); pure, every patch guarded by what was read.
 */
import type { Resource } from '../../api/resource.js';
import { Annotations, EventReasons, Labels } from '../../api/names.js';
import { declarationToSeal } from './countdown.js';
import { declaredIdentityOf } from './countdown-record.js';
import { partOfTakeover } from './applyset.js';
import { bundleOwnerReference } from './desired.js';
import { describeObject, jsonPointerSegment, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';
import { claimWithdrawal, type BundleListing, type Ownership } from './ownership.js';
import { claimRecordOps, claimsStillOn, isBundleReference, recordedClaimUids, userReferences } from './owner-references.js';
import type { PlanBundle, PlanInput } from './plan-types.js';
import type { ClaimRecords } from './claim-record.js';
import { carriesReleaseMarks } from '../softdelete/release-record.js';
import { targetOf, type ObjectTarget, type PlannedEvent } from './prune.js';

/**
 * Taking hold of a listed object before anything else in the pass, whatever
 * the wait for its references, the other resources or the spec's validity say:
 * listing an object again cancels its countdown at once, so that it can
 * neither be swept nor keep an old stamp.
 *  - cancel: ours already; the stamp (and a former-bundle label) go;
 *  - adopt: released or uncontrolled and counting down; we take the
 *    controller reference;
 *  - hand-over: controlled by a Bundle that no longer lists it; we take the
 *    controller reference from it (the other Bundle gets an event too).
 *  - reference: controlled by another Bundle that still lists it (a Conflict
 *    this Bundle loses); we record our claim as a non-controller reference to
 *    this Bundle (blockOwnerDeletion false), so that neither collector
 *    deletes the object when the controlling Bundle is deleted in the
 *    foreground (the object still has a live owner), and we take it over
 *    afterwards.
 *  - declare: ours already, and its manifest declares deletion rules the
 *    object's declared-rules proof does not carry yet: the proof is written
 *    now (see declareOps), with any of the claims above too.
 * `patch` is a JSON patch guarded by uid and resourceVersion tests: it lands
 * only on the object as read.
 */
export interface TakeHold {
  name: string;
  kind: 'cancel' | 'adopt' | 'hand-over' | 'reference' | 'declare';
  target: ObjectTarget;
  patch: JsonPatchOperation[];
  /** Events on this Bundle once the patch went through. */
  events: PlannedEvent[];
  /**
   * The take-hold ends any release of the object, recorded before the patch
   * is sent: 'carried' where the object shows a release's marks (recorded
   * ended whatever was recorded), 'if-recorded' where it shows none (they may
   * have been taken off first: red team 30; ended only where a record is).
   */
  endsRelease?: 'carried' | 'if-recorded';
  /** hand-over: the Bundle giving the object up, and the event it gets. */
  from?: { name: string; uid: string; event: PlannedEvent };
}

/** One take-hold per listed live object that needs one (see TakeHold), in spec order. */
export function planTakeHolds(resources: readonly Resource[], ownership: ReadonlyMap<string, Ownership>, input: PlanInput): TakeHold[] {
  const out: TakeHold[] = [];
  const seen = new Set<string>();
  for (const r of resources) {
    const live = input.live.get(r.name);
    const owned = ownership.get(r.name);
    if (live === undefined || owned === undefined || live.metadata.deletionTimestamp !== undefined || live.metadata.uid === undefined)
      continue;
    if (seen.has(live.metadata.uid)) continue;
    const takeHold = takeHoldFor(r, live, owned, input);
    if (takeHold === undefined) continue;
    seen.add(live.metadata.uid);
    if (takeHold.kind === 'reference' || takeHold.kind === 'declare') out.push(takeHold);
    else out.push({ ...takeHold, endsRelease: carriesReleaseMarks(live.metadata) ? 'carried' : 'if-recorded' });
  }
  return out;
}

function takeHoldFor(resource: Resource, live: LiveObject, ownership: Ownership, input: PlanInput): TakeHold | undefined {
  const name = resource.name;
  const what = describeObject(live);
  const declare = declareOps(resource, live, input);
  // A stale approval goes with the stamp: it must never count for a later countdown.
  const stamped =
    live.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined ||
    live.metadata.annotations?.[Annotations.deletionApproved] !== undefined;
  // Released (the label, a release proof), or let go to this Bundle (the annotation alone): the take-hold patch removes the
  // marks, so that they never outlive the taking (red team 19: left on, one hid the object from effectivePropagation's
  // orphan trace), and the release is recorded ended before it is sent (red team 29: written back later, it counts no more).
  const released = carriesReleaseMarks(live.metadata);
  const cancelled: PlannedEvent[] = stamped
    ? [{ reason: EventReasons.DeletionCancelled, message: `resource "${name}": deletion of ${what} cancelled, it is in the Bundle again` }]
    : [];
  const target = targetOf(live);
  switch (ownership.kind) {
    case 'own':
      if (!stamped && !released)
        return declare.length === 0 ? undefined : { name, kind: 'declare', target, patch: [...uidTest(live), ...declare], events: [] };
      return { name, kind: 'cancel', target, patch: [...takeHoldPatch(live, undefined), ...declare], events: cancelled };
    case 'adopt':
      // An uncontrolled object without a countdown is adopted by the apply, once its references are ready.
      if (!stamped && !released) return undefined;
      return {
        name,
        kind: 'adopt',
        target,
        patch: [
          ...takeHoldPatch(live, { bundle: input.bundle, otherClaims: otherClaimsOn(live, input), claimRecords: input.claimRecords }),
          ...declare,
        ],
        events: [...cancelled, { reason: EventReasons.Adopted, message: `resource "${name}": adopted ${what}` }],
      };
    case 'hand-over': {
      const from = ownership.from;
      return {
        name,
        kind: 'hand-over',
        target,
        patch: [
          ...takeHoldPatch(live, { bundle: input.bundle, otherClaims: otherClaimsOn(live, input), claimRecords: input.claimRecords }),
          ...declare,
        ],
        events: [
          ...cancelled,
          {
            reason: EventReasons.HandedOver,
            message: `resource "${name}": ${what} handed over from Bundle ${from.name}, which no longer lists it`,
          },
        ],
        from: {
          name: from.name,
          uid: from.uid,
          event: { reason: EventReasons.HandedOver, message: `handed ${what} over to Bundle ${input.bundle.name}, which lists it` },
        },
      };
    }
    case 'conflict': {
      const controller = ownership.controller;
      if (controller === undefined || !isBundleReference(controller) || controller.uid === input.bundle.uid) return undefined;
      const refs = live.metadata.ownerReferences ?? [];
      if (refs.some((r) => r.uid === input.bundle.uid)) return undefined;
      return { name, kind: 'reference', target, patch: claimReferencePatch(live, input.bundle), events: [] };
    }
    default:
      return undefined;
  }
}

/**
 * The manifest's deletion rules, sealed (declared-rules), written onto the
 * object before anything else in the pass when its proof does not carry them
 * yet. The apply writes the same, but a resource blocked behind its
 * dependencies (or failing) is not applied, while a foreground deletion of
 * the Bundle, and the chart's deletion guard that orders the collector
 * behind the finalizer, read the object: an Orphan or Approve added to the
 * manifest must reach it at once. Only the proof is written (the guard reads
 * its policy in clear; every decision reads it as a floor); the rules
 * themselves wait for the apply. Rules that cannot be read are sealed too
 * (the resource is an error and not applied): the guard then holds the
 * collector back from the object, as the finalizer keeps it. None without
 * the key (the CLI).
 */
function declareOps(resource: Resource, live: LiveObject, input: PlanInput): JsonPatchOperation[] {
  const object = resource.spec.object;
  if (input.stampSeal === undefined || object === undefined) return [];
  const proof = input.stampSeal.sealDeclared(
    declaredIdentityOf(object, input.bundle.namespace),
    declarationToSeal(object.metadata.annotations, input.spec.deletionDefaults),
  );
  if (proof === undefined || proof === live.metadata.annotations?.[Annotations.declaredRules]) return [];
  if (live.metadata.annotations === undefined)
    return [{ op: 'add', path: '/metadata/annotations', value: { [Annotations.declaredRules]: proof } }];
  return [{ op: 'add', path: `/metadata/annotations/${jsonPointerSegment(Annotations.declaredRules)}`, value: proof }];
}

function uidTest(live: LiveObject): JsonPatchOperation[] {
  return live.metadata.uid === undefined ? [] : [{ op: 'test', path: '/metadata/uid', value: live.metadata.uid }];
}

/** A claim reference to take out: the Bundle no longer lists the object. */
export interface ClaimWithdrawal {
  target: ObjectTarget;
  /** Guarded by the reference list as read. */
  patch: JsonPatchOperation[];
}

export function planWithdrawals(claimed: readonly LiveObject[], inSpec: ReadonlySet<string>, input: PlanInput): ClaimWithdrawal[] {
  return claimed.flatMap((o) => {
    const key = objectKey(o);
    const patch = inSpec.has(key) ? undefined : claimWithdrawal(o, input.bundle.uid, input.listings?.get(key) ?? [], input.claimRecords);
    return patch === undefined ? [] : [{ target: targetOf(o), patch }];
  });
}

/** The live Bundles other than this one that list the object. */
function otherClaimsOn(live: LiveObject, input: PlanInput): BundleListing[] {
  return (input.listings?.get(objectKey(live)) ?? []).filter((c) => c.uid !== input.bundle.uid);
}

/** Guarded by uid, resourceVersion and the ownerReferences list as read: appends this Bundle's claim reference. */
function claimReferencePatch(live: LiveObject, bundle: PlanBundle): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  if (live.metadata.uid !== undefined) ops.push({ op: 'test', path: '/metadata/uid', value: live.metadata.uid });
  if (live.metadata.resourceVersion !== undefined)
    ops.push({ op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion });
  const refs = live.metadata.ownerReferences ?? [];
  ops.push({ op: 'test', path: '/metadata/ownerReferences', value: refs });
  ops.push({ op: 'add', path: '/metadata/ownerReferences', value: [...refs, bundleOwnerReference(bundle, 'claim')] });
  // Recorded with the claim, in the same patch: what tells the operator's claim from a user's reference to a Bundle.
  ops.push(...claimRecordOps(live, new Set([...recordedClaimUids(live.metadata.annotations), bundle.uid])));
  return ops;
}

/**
 * Guarded by the object's uid and resourceVersion. Removes the countdown
 * stamp and the former-bundle label; when taking the object, replaces the
 * ownerReferences with ours plus the user's (the previous Bundle's controller
 * reference and its dependency references go; the next apply writes ours).
 */
function takeHoldPatch(
  live: LiveObject,
  take: { bundle: PlanBundle; otherClaims: readonly BundleListing[]; claimRecords: ClaimRecords | undefined } | undefined,
): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  if (live.metadata.uid !== undefined) ops.push({ op: 'test', path: '/metadata/uid', value: live.metadata.uid });
  if (live.metadata.resourceVersion !== undefined)
    ops.push({ op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion });
  const annotations = live.metadata.annotations ?? {};
  if (annotations[Annotations.deletionTimestamp] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.deletionTimestamp)}` });
  if (live.metadata.labels?.[Labels.formerBundle] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/labels/${jsonPointerSegment(Labels.formerBundle)}` });
  if (annotations[Annotations.stampProof] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.stampProof)}` });
  if (annotations[Annotations.formerBundle] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.formerBundle)}` });
  if (annotations[Annotations.releaseProof] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.releaseProof)}` });
  if (annotations[Annotations.deletionApproved] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.deletionApproved)}` });
  if (take !== undefined) {
    // Every Bundle reference goes (the previous controller's, our own claim: the apiserver folds two references with one
    // uid), but the claims of the other live Bundles listing the object: they stay in Conflict and keep their claim.
    // A reference to this Bundle that is no claim of ours (the user's) gives way to the controller reference: one uid, one reference.
    const kept = userReferences(live.metadata, {
      liveClaimUids: new Set(take.otherClaims.map((c) => c.uid)),
      claimRecords: take.claimRecords,
    }).filter((r) => r.uid !== take.bundle.uid);
    ops.push({ op: 'add', path: '/metadata/ownerReferences', value: [bundleOwnerReference(take.bundle), ...kept] });
    ops.push(...claimRecordOps(live, claimsStillOn(live, kept)));
    if (annotations[Annotations.dependencyReferences] !== undefined)
      ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.dependencyReferences)}` });
    ops.push(...partOfTakeover(live, take.bundle));
  }
  return ops;
}
