/**
 * Owner-reference classification, as upstream's classifyReferences but pure:
 * the owner states are fetched first (live, by UID, see the controller's
 * owner verifier), then sorted here.
 */
import type { OwnerRef } from './graph-node.js';

/**
 * What a live lookup found for one owner reference of a dependent.
 *
 * - present: an object at the reference's coordinates has its UID.
 * - present-deleting-dependents: as present, and it is being deleted in the
 *   foreground (deletionTimestamp + foregroundDeletion finalizer).
 * - absent: nothing at those coordinates (404, or known absent).
 * - coordinates-mismatch: an object is at those coordinates but with another
 *   UID, or the UID exists under other coordinates: the reference names
 *   nothing that exists.
 * - wrong-namespace: the UID exists, but in another namespace than the
 *   dependent's (a namespaced owner lives in its dependent's namespace or
 *   nowhere).
 * - namespaced-owner-of-cluster-scoped: the dependent is cluster-scoped and
 *   the owner's kind is namespaced: never valid, never decided.
 * - unknown-kind: discovery does not know the owner's apiVersion/kind (yet).
 * - lookup-failed: the server did not answer (retry later).
 */
export type OwnerStateKind =
  | 'present'
  | 'present-deleting-dependents'
  | 'absent'
  | 'coordinates-mismatch'
  | 'wrong-namespace'
  | 'namespaced-owner-of-cluster-scoped'
  | 'unknown-kind'
  | 'lookup-failed';

export interface OwnerState {
  ref: OwnerRef;
  state: OwnerStateKind;
  /** For humans (events, logs): what the lookup saw. */
  detail?: string;
}

export interface Classification {
  /** Owners that exist and are not waiting for their dependents: they keep the dependent. */
  solid: OwnerRef[];
  /** Owners that do not exist (under the referenced coordinates). */
  dangling: OwnerRef[];
  /** Owners being deleted in the foreground, waiting for their dependents to go. */
  waiting: OwnerRef[];
  /** Set when the references cannot be classified now: the item is not decided. */
  undecidable?: { state: 'namespaced-owner-of-cluster-scoped' | 'unknown-kind' | 'lookup-failed'; ref: OwnerRef; detail?: string };
}

export function classifyReferences(ownerStates: readonly OwnerState[]): Classification {
  const result: Classification = { solid: [], dangling: [], waiting: [] };
  for (const s of ownerStates) {
    switch (s.state) {
      case 'present':
        result.solid.push(s.ref);
        break;
      case 'present-deleting-dependents':
        result.waiting.push(s.ref);
        break;
      case 'absent':
      case 'coordinates-mismatch':
      case 'wrong-namespace':
        result.dangling.push(s.ref);
        break;
      case 'namespaced-owner-of-cluster-scoped':
        // Upstream stops at the first such reference: the whole item is left alone.
        return {
          solid: [],
          dangling: [],
          waiting: [],
          undecidable: { state: s.state, ref: s.ref, ...(s.detail ? { detail: s.detail } : {}) },
        };
      case 'unknown-kind':
      case 'lookup-failed':
        if (!result.undecidable) result.undecidable = { state: s.state, ref: s.ref, ...(s.detail ? { detail: s.detail } : {}) };
        break;
    }
  }
  if (result.undecidable) return { solid: [], dangling: [], waiting: [], undecidable: result.undecidable };
  return result;
}
