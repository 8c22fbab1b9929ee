/**
 * One observed change, as the graph builder (builder.ts) takes and answers
 * it: the event, the effects the writer must act on, and what an observed
 * object reads as in the graph (its flags, its compact owner references,
 * its identity). Separate from builder.ts: the writer and the collector use
 * these types without the mutation rules.
 */
import { Finalizers } from '../../api/names.js';
import type { OwnerReference } from '../../api/resource.js';
import type { Graph } from './graph.js';
import { NodeFlags, OwnerRef, refBits } from './graph-node.js';
import type { Identity } from './graph-identity.js';

/** The parts of an object (metadata-only is enough) the graph reads. KubeObject fits. */
export interface ObservedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: readonly string[];
    ownerReferences?: readonly OwnerReference[];
  };
}

export type GraphEvent =
  /**
   * An add or update seen by an informer (or listed by it). `tagged` sets
   * NodeFlags.tagged; `source` names the informer (a small positive number,
   * see 'listed'); `at` is the writer's clock.
   */
  | { type: 'observed'; object: ObservedObject; tagged?: boolean; source?: number; at: number }
  /**
   * An informer's list is complete: `uids` is every object in it (each was
   * applied as 'observed' before this). The observed nodes of this source
   * that it did not list were deleted while the informer was not watching.
   */
  | { type: 'listed'; source: number; uids: ReadonlySet<string>; at: number }
  /** A delete seen by an informer. */
  | { type: 'deleted'; object: ObservedObject; at: number }
  /** A worker verified that nothing with this identity exists on the server. */
  | { type: 'virtual-delete'; identity: Identity; at: number };

export interface InvalidNamespaceReport {
  dependent: Identity;
  /** The reference as the dependent wrote it. */
  ownerRef: { apiVersion: string; kind: string; name: string; uid: string };
}

/** What the writer must do after an event: queue work, remember absences, emit warnings. */
export interface GraphEffects {
  attemptToDelete: Set<string>;
  /** Queue with backoff: a virtual node whose identity was just replaced by an alternate guess. */
  attemptToDeleteRateLimited: Set<string>;
  attemptToOrphan: Set<string>;
  /** Identities verified absent (add to the absent-owner cache). */
  absentOwners: Identity[];
  invalidNamespaceRefs: InvalidNamespaceReport[];
  /** UIDs whose state changed (owner verifications of them are stale). */
  touched: string[];
}

export function emptyEffects(): GraphEffects {
  return {
    attemptToDelete: new Set(),
    attemptToDeleteRateLimited: new Set(),
    attemptToOrphan: new Set(),
    absentOwners: [],
    invalidNamespaceRefs: [],
    touched: [],
  };
}

export function flagsOf(meta: ObservedObject['metadata'], tagged: boolean): number {
  let flags = NodeFlags.observed;
  const finalizers = meta.finalizers ?? [];
  const beingDeleted = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
  if (beingDeleted) flags |= NodeFlags.beingDeleted;
  if (finalizers.includes(Finalizers.orphan)) flags |= NodeFlags.orphanFinalizer;
  if (finalizers.includes(Finalizers.foregroundDeletion)) {
    flags |= NodeFlags.foregroundFinalizer;
    if (beingDeleted) flags |= NodeFlags.deletingDependents;
  }
  if (tagged) flags |= NodeFlags.tagged;
  return flags;
}

/** Compact references; strings are shared with the owner's node when the owner is known. */
export function toRefs(graph: Graph, refs: readonly OwnerReference[] | undefined): readonly OwnerRef[] {
  if (!refs || refs.length === 0) return EMPTY_REFS;
  return refs.map((r) => {
    const owner = graph.get(r.uid);
    const uid = owner ? owner.uid : r.uid;
    const name = owner && owner.name === r.name ? owner.name : r.name;
    return new OwnerRef(uid, graph.internType(r.apiVersion, r.kind), name, refBits(r));
  });
}

const EMPTY_REFS: readonly OwnerRef[] = Object.freeze([]);

export function identityFromObject(graph: Graph, obj: ObservedObject): Identity {
  return {
    uid: obj.metadata.uid,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: graph.internNamespace(obj.metadata.namespace),
  };
}
