/**
 * The finalizer's input and its steps, as data (finalize.ts decides them;
 * the controller carries them out). Apart so that the deciding modules share
 * them without importing each other.
 */
import type { ClaimRecords } from './claim-record.js';
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { Finalizers, type DeletionPropagation } from '../../api/names.js';
import type { ReleaseSigner } from '../softdelete/provenance.js';
import { type JsonPatchOperation, type LiveObject } from './objects.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import { type BundleListing } from './ownership.js';
import { type NamedOwner } from './owner-references.js';
import { type ObjectTarget, type PlannedEvent } from './prune.js';
import { type CountdownRecord } from './countdown-record.js';

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
  /**
   * An orphan deletion a pass read before (status.deletionPropagation,
   * recorded ahead of the first orphan write): read so on every later pass,
   * whatever traces are left on the objects (red team 26).
   */
  recordedOrphan?: boolean;
  /** The Bundle, with its spec.deletionDefaults (a released object takes what it needs of them along). */
  bundle: { name: string; uid: string; namespace?: string; defaults?: DeletionDefaults | undefined };
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
  listings: ReadonlyMap<string, readonly BundleListing[]>;
  /** The claims the namespace's Bundles record in their statuses (claim-record.ts), the one being deleted included. */
  claimRecords?: ClaimRecords;
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

export type FinalizeStep =
  /** Delete with uid and resourceVersion preconditions (background, no deletionDelay). */
  | { action: 'delete'; target: ObjectTarget; event: PlannedEvent }
  /** Release with a countdown (background, a deletionDelay): JSON patch guarded by the ownerReferences it read. */
  | { action: 'release'; target: ObjectTarget; patch: JsonPatchOperation[]; event: PlannedEvent }
  /** Another live Bundle lists the object: let go (no former-bundle label, no countdown); that Bundle adopts it. */
  | { action: 'let-go'; target: ObjectTarget; patch: JsonPatchOperation[]; by: BundleListing; event: PlannedEvent }
  /** Orphan propagation: take out what the operator wrote; the object stays, nobody's. */
  | {
      action: 'orphan';
      target: ObjectTarget;
      patch: JsonPatchOperation[];
      event: PlannedEvent;
      /** Only the operator's references out, its marks (the orphan traces) left: sent while the traces wait (traceStepsFrom). */
      referencesOnly?: JsonPatchOperation[];
    }
  /** Background, an object with an owner besides the Bundle: only the Bundle's references go; the collector decides, as it would. */
  /** Background, another owner left: the operator's references and applied-hash go (disownPatch); the collector deletes it once no owner is left. */
  | { action: 'disown'; target: ObjectTarget; patch: JsonPatchOperation[]; event: PlannedEvent }
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
  /**
   * Orphan: the index of the first step that takes an orphan trace off (the
   * traces and the members they name come last). Carried out only when
   * every step before it was written, so that while anything is left to do
   * a trace is left to read the orphan deletion from (red team 25: an Event,
   * which the collectors never orphan, refused its step after the last
   * trace was gone, and the next pass read a background deletion).
   */
  traceStepsFrom?: number;
}
