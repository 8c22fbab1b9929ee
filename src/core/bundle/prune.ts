/**
 * What to do with objects the Bundle controls but no longer lists: delete,
 * or count down first when they opt into soft deletion. The soft-delete rules
 * themselves live in core/softdelete; this module applies them to a set of
 * objects and orders the deletes.
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { EventReasons } from '../../api/names.js';
import { decideSoftDelete, deletedAfterWords, deletesNow, type DeletionGate } from '../softdelete/decide.js';
import { buildGraph, levels, topologicalOrder, transpose } from './graph.js';
import { describeObject, isControlledBy, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import type { DeletionRules } from '../softdelete/rules.js';
import { countdownOf } from './countdown.js';
import { type CountdownRecord } from './countdown-record.js';
import type { BundleListing } from './ownership.js';
import { keptReleasePatch, markPatch } from './release.js';

/** Where an object is, plus the preconditions a delete should carry. */
export interface ObjectTarget {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

export interface PlannedEvent {
  reason: string;
  message: string;
}

/**
 * One action per object. `wave` (set by planPrune) groups the writing
 * actions for concurrency: every action of a wave may run at once, and a
 * wave starts only once every action of the waves before it has returned.
 * An object is in a later wave than every pruned object whose
 * ownerReferences name it, so dependents are deleted before what they
 * reference (see pruneWaves).
 */
export type PruneAction = PruneActionOf & { wave?: number };

type PruneActionOf =
  /** Delete now, with uid and resourceVersion as preconditions. `event` once it succeeded. */
  | { action: 'delete'; target: ObjectTarget; afterDelay: boolean; event: PlannedEvent; deletionTimestamp?: string; deleteAfter?: string }
  /** Start the countdown: JSON-patch the deletionTimestamp annotation on. */
  | {
      action: 'mark';
      target: ObjectTarget;
      patch: JsonPatchOperation[];
      deletionTimestamp: string;
      deleteAfter: string;
      deleteAtMs: number;
      gates?: DeletionGate[];
      event: PlannedEvent;
    }
  /** Countdown running; nothing to write. */
  | { action: 'wait'; target: ObjectTarget; deletionTimestamp: string; deleteAfter: string; deleteAtMs: number; gates?: DeletionGate[] }
  /** Due, but a gate is shut (an approval, the Bundle's readiness); nothing to write, the Bundle reports it. */
  | {
      action: 'await';
      target: ObjectTarget;
      waitingFor: DeletionGate;
      deletionTimestamp: string;
      deleteAfter: string;
      message: string;
      event: PlannedEvent;
    }
  /** deletionPolicy Orphan: JSON-patch the operator's references off; the object is kept for good. */
  | { action: 'release'; target: ObjectTarget; patch: JsonPatchOperation[]; event: PlannedEvent }
  /** Unreadable soft-delete annotations: the object is kept and the Bundle reports `message`. */
  | { action: 'invalid'; target: ObjectTarget; message: string; event: PlannedEvent }
  /** Already being deleted by the API server; nothing to do. */
  | { action: 'terminating'; target: ObjectTarget }
  /**
   * Another live Bundle lists the object: it is never deleted or stamped
   * here; that Bundle takes it over (ownership.ts).
   */
  | { action: 'listed-elsewhere'; target: ObjectTarget; by: BundleListing; message: string };

/** A prune action that would write, held back this pass. */
export interface WithheldPrune {
  action: Extract<PruneAction, { action: 'delete' | 'mark' | 'release' }>;
  reason: string;
}

export function targetOf(o: LiveObject): ObjectTarget {
  const { namespace, uid, resourceVersion } = o.metadata;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    ...(namespace !== undefined ? { namespace } : {}),
    name: o.metadata.name,
    ...(uid !== undefined ? { uid } : {}),
    ...(resourceVersion !== undefined ? { resourceVersion } : {}),
  };
}

export interface PruneInput {
  /** Live objects whose controller ownerReference is the Bundle. */
  controlled: readonly LiveObject[];
  /** objectKey of every object the spec lists (in the Bundle's namespace). */
  inSpec: ReadonlySet<string>;
  /** Lower bound of the API server's time (expiry is decided on it). */
  now: number;
  /** Upper bound of the API server's time (new stamps carry it); defaults to `now`. */
  stampAt?: number;
  /** The pruning Bundle's uid: its own claims are not someone else's. */
  selfUid?: string;
  /**
   * UIDs of the live objects at the spec's coordinates, as read for this
   * pass: an object is the one the spec lists when its UID is, whatever
   * kind or group it was listed under (one object served under two groups,
   * read through either), and it is never pruned.
   */
  listedUids?: ReadonlySet<string>;
  /** Live Bundles listing each object (by objectKey). An object another one lists is never pruned. */
  listings?: ReadonlyMap<string, readonly BundleListing[]>;
  /** The pruning Bundle's name (an Orphan object it releases is labelled with it) and spec.deletionDefaults. */
  bundleName?: string;
  defaults?: DeletionDefaults | undefined;
  /** Whether every resource of the Bundle was reported Ready with its current spec: a deleteWhen BundleReady gate opens on it (absent: shut). */
  bundleReady?: boolean;
  /** Proves the stamps this operator wrote; an unproven stamp is read as none (the countdown starts now). Absent: stamps are taken as written. */
  stampSeal?: StampSeal;
  /** Rules an object's deletion may not be looser than, beyond its stamp's (the finalizer: what its manifest declares). */
  floorFor?: (o: LiveObject) => DeletionRules | undefined;
  /** What the Bundle's status records of its countdowns (countdown.ts). */
  countdownRecord?: CountdownRecord;
}

/**
 * One action per controlled object missing from the spec, dependents before
 * the objects they depend on: an object whose ownerReferences point at
 * another pruned object goes first.
 */
export function planPrune(input: PruneInput): PruneAction[] {
  const candidates = input.controlled.filter(
    (o) => !input.inSpec.has(objectKey(o)) && !(o.metadata.uid !== undefined && input.listedUids?.has(o.metadata.uid) === true),
  );
  return orderForDeletion(candidates).map(({ object, wave }) => ({ ...pruneActionFor(object, input), wave }));
}

/** The actions that write (delete, stamp, release). */
export type WritingPruneAction = Extract<PruneAction, { action: 'delete' | 'mark' | 'release' }>;

export function isWritingPrune(a: PruneAction): a is WritingPruneAction {
  return a.action === 'delete' || a.action === 'mark' || a.action === 'release';
}

/**
 * The writing actions of `actions` in the groups a pass carries them out
 * in: waves in ascending order, each in plan order. Every action of a group
 * may run at once; the next group starts only when every action of this
 * one has returned, so an object goes before anything it references. When
 * a writing action carries no wave (a plan not made by planPrune), each
 * goes alone, in plan order: one after another is always a safe reading.
 */
export function pruneWaves(actions: readonly PruneAction[]): WritingPruneAction[][] {
  const writing = actions.filter(isWritingPrune);
  if (writing.some((a) => a.wave === undefined)) return writing.map((a) => [a]);
  const byWave = new Map<number, WritingPruneAction[]>();
  for (const a of writing) {
    const wave = a.wave ?? 0;
    const group = byWave.get(wave);
    if (group) group.push(a);
    else byWave.set(wave, [a]);
  }
  return [...byWave].sort(([a], [b]) => a - b).map(([, group]) => group);
}

/** The oldest live Bundle other than `selfUid` that lists the object, if any. */
export function listedByOther(
  o: LiveObject,
  listings: ReadonlyMap<string, readonly BundleListing[]> | undefined,
  selfUid: string | undefined,
): BundleListing | undefined {
  return listings?.get(objectKey(o))?.find((c) => c.uid !== selfUid);
}

function pruneActionFor(o: LiveObject, input: PruneInput): PruneAction {
  const { now } = input;
  const target = targetOf(o);
  const what = describeObject(o);
  if (o.metadata.deletionTimestamp !== undefined) return { action: 'terminating', target };
  const other = listedByOther(o, input.listings, input.selfUid);
  if (other !== undefined)
    return { action: 'listed-elsewhere', target, by: other, message: `${what} is kept: Bundle ${other.name} lists it and takes it over` };
  const decision = decideSoftDelete({
    inSpec: false,
    ...countdownOf(o, { seal: input.stampSeal, defaults: input.defaults, extra: input.floorFor?.(o), record: input.countdownRecord }),
    now,
    defaults: input.defaults,
    ...(input.stampAt !== undefined ? { stampAt: input.stampAt } : {}),
    ...(input.bundleReady !== undefined ? { bundleReady: input.bundleReady } : {}),
  });
  switch (decision.action) {
    case 'release': {
      const siblings = new Set(input.controlled.flatMap((c) => (c.metadata.uid !== undefined ? [c.metadata.uid] : [])));
      return {
        action: 'release',
        target,
        patch: keptReleasePatch(o, input.bundleName ?? '', { siblingUids: siblings }),
        event: {
          reason: EventReasons.Released,
          message: `released ${what}: no longer in the Bundle, and its deletionPolicy is Orphan: kept, never deleted`,
        },
      };
    }
    case 'await':
      return {
        action: 'await',
        target,
        waitingFor: decision.waitingFor,
        deletionTimestamp: decision.deletionTimestamp,
        deleteAfter: decision.deleteAfter,
        message: `${what} ${decision.message}`,
        event: {
          reason: decision.waitingFor === 'Approval' ? EventReasons.AwaitingApproval : EventReasons.AwaitingBundleReady,
          message: `${what} ${decision.message}`,
        },
      };
    case 'delete':
      return {
        action: 'delete',
        target,
        afterDelay: false,
        event: { reason: EventReasons.Pruned, message: `deleted ${what}: no longer in the Bundle` },
      };
    case 'expired':
      return {
        action: 'delete',
        target,
        afterDelay: true,
        deletionTimestamp: decision.deletionTimestamp,
        deleteAfter: decision.deleteAfter,
        event: { reason: EventReasons.DeletedAfterDelay, message: `deleted ${what}: deletion delay ended at ${decision.deleteAfter}` },
      };
    case 'mark':
      return {
        action: 'mark',
        target,
        patch: markPatch(
          o,
          decision.deletionTimestamp,
          o.metadata.uid !== undefined ? input.stampSeal?.sign(o.metadata.uid, decision.deletionTimestamp, decision.sealed) : undefined,
        ),
        deletionTimestamp: decision.deletionTimestamp,
        deleteAfter: decision.deleteAfter,
        deleteAtMs: decision.deleteAtMs,
        ...(decision.gates ? { gates: decision.gates } : {}),
        event: {
          reason: EventReasons.DeletionScheduled,
          message: `${what} will be deleted ${deletedAfterWords(decision.deleteAfter, decision.gates)}`,
        },
      };
    case 'wait':
      return {
        action: 'wait',
        target,
        deletionTimestamp: decision.deletionTimestamp,
        deleteAfter: decision.deleteAfter,
        deleteAtMs: decision.deleteAtMs,
        ...(decision.gates ? { gates: decision.gates } : {}),
      };
    case 'invalid': {
      const message = `${what} is kept: ${decision.message}`;
      return { action: 'invalid', target, message, event: { reason: EventReasons.InvalidDeletionDelay, message } };
    }
    default: {
      // Out of spec the decision is never keep or cancel; keeping (and saying so) is the safe reading.
      const message = `${what} is kept: unexpected soft-delete decision "${decision.action}"`;
      return { action: 'invalid', target, message, event: { reason: EventReasons.InvalidDeletionDelay, message } };
    }
  }
}

/**
 * Dependents first: an object's ownerReferences to other candidates are its
 * dependencies. Its wave is its level in the reversed graph: 0 for an
 * object no other candidate references, one more than the highest wave of
 * the candidates that reference it otherwise (levels() over the same
 * order). In a cycle among candidates, which the order breaks at its first
 * listed object, the waves follow that order: an object is in a later wave
 * than every candidate placed before it that references it.
 */
function orderForDeletion(objects: readonly LiveObject[]): { object: LiveObject; wave: number }[] {
  const ids = objects.map((o, i) => o.metadata.uid ?? `#${i}`);
  const byId = new Map(objects.map((o, i) => [ids[i] ?? '', o]));
  const edges = objects.flatMap((o, i) => (o.metadata.ownerReferences ?? []).map((ref) => [ids[i] ?? '', ref.uid] as const));
  const reversed = transpose(buildGraph(ids, edges));
  const waveOf = new Map(levels(reversed).flatMap((group, wave) => group.map((id) => [id, wave] as const)));
  return topologicalOrder(reversed).flatMap((id) => {
    const object = byId.get(id);
    return object === undefined ? [] : [{ object, wave: waveOf.get(id) ?? 0 }];
  });
}

export interface RedecideDeleteInput {
  /** The object as read fresh right before the delete; undefined when it is gone. */
  fresh: LiveObject | undefined;
  /** The delete as planned (its uid is the object decided on). */
  target: ObjectTarget;
  bundleUid: string;
  /** Lower bound of the API server's time, refreshed by the read. */
  now: number;
  /** As for planPrune: the Bundle's defaults and readiness decide again with the rest. */
  defaults?: DeletionDefaults | undefined;
  bundleReady?: boolean;
  stampSeal?: StampSeal;
  countdownRecord?: CountdownRecord;
}

/**
 * The prune rules again on a fresh read (before deleting an object whose
 * countdown expired, as read from the cache, and after a delete refused
 * for a changed resourceVersion): the resourceVersion to delete at when the
 * object is still the same one, not being deleted, still controlled by the
 * Bundle and due for deletion (no countdown to start or wait for);
 * undefined otherwise, and the next pass decides.
 */
export function redecideDelete(input: RedecideDeleteInput): string | undefined {
  const { fresh } = input;
  if (
    fresh === undefined ||
    fresh.metadata.uid === undefined ||
    fresh.metadata.uid !== input.target.uid ||
    fresh.metadata.deletionTimestamp !== undefined
  )
    return undefined;
  if (!isControlledBy(fresh, input.bundleUid)) return undefined;
  const decision = decideSoftDelete({
    inSpec: false,
    ...countdownOf(fresh, { seal: input.stampSeal, defaults: input.defaults, record: input.countdownRecord }),
    now: input.now,
    defaults: input.defaults,
    ...(input.bundleReady !== undefined ? { bundleReady: input.bundleReady } : {}),
  });
  return deletesNow(decision) ? fresh.metadata.resourceVersion : undefined;
}
