/**
 * What to do about one queued item: pure decisions over the graph's view of
 * the item and, when needed, the already-fetched owner states. The
 * controller gathers the facts, calls these, and carries out the result.
 */
import type { DeletionPropagation } from '../../api/names.js';
import { Finalizers } from '../../api/names.js';
import type { Classification } from './classify.js';
import { NodeFlags, type GraphNode, type OwnerRef } from './graph-node.js';
import type { Graph } from './graph.js';

/** The first step of an attempt-to-delete: what information the decision needs. */
export type AttemptToDeletePlan =
  /** Nothing to do now (reason for logs). */
  | { kind: 'skip'; reason: 'not-in-graph' | 'being-deleted' | 'no-owners' }
  /** A virtual node: verify on the server whether anything with its identity exists. */
  | { kind: 'verify-virtual' }
  /** The item waits for its dependents (foreground deletion): see decideDeletingDependents. */
  | { kind: 'deleting-dependents' }
  /** Look up the owners, classify, then decideAttemptToDelete. */
  | { kind: 'classify-owners'; refs: readonly OwnerRef[] };

export function planAttemptToDelete(node: GraphNode | undefined): AttemptToDeletePlan {
  if (!node) return { kind: 'skip', reason: 'not-in-graph' };
  // Being deleted is a one-way trip: wait for the final delete, which queues the dependents.
  if (node.beingDeleted && !node.deletingDependents) return { kind: 'skip', reason: 'being-deleted' };
  if (node.virtual) return { kind: 'verify-virtual' };
  if (node.deletingDependents) return { kind: 'deleting-dependents' };
  if (node.ownerCount === 0) return { kind: 'skip', reason: 'no-owners' };
  return { kind: 'classify-owners', refs: node.owners };
}

/** The facts about the item itself that the decision reads (from the graph or a fresh read). */
export interface ItemFacts {
  orphanFinalizer: boolean;
  foregroundFinalizer: boolean;
  /** It has dependents of its own (then a waiting owner makes it go in the foreground too). */
  hasDependents: boolean;
  /** One of its dependents is itself waiting in foreground deletion: a potential cycle. */
  dependentDeletingDependents: boolean;
}

export function itemFacts(graph: Graph, node: GraphNode): ItemFacts {
  const deps = node.dependents();
  return {
    orphanFinalizer: node.has(NodeFlags.orphanFinalizer),
    foregroundFinalizer: node.has(NodeFlags.foregroundFinalizer),
    hasDependents: deps.length > 0,
    dependentDeletingDependents: deps.some((d) => graph.get(d.uid)?.deletingDependents === true),
  };
}

export type AttemptToDeleteDecision =
  /** Keep the item: it has a solid owner and no reference to clean. */
  | { kind: 'keep'; reason: string }
  /** Cannot decide now; retry with backoff (unknown owner kind, failed lookup). */
  | { kind: 'requeue'; reason: string }
  /** Never decidable (namespaced owner of a cluster-scoped item): drop it. */
  | { kind: 'forget'; reason: string }
  /** It has a solid owner: drop only the references to absent or waiting owners. */
  | { kind: 'remove-refs'; uids: string[]; causes: OwnerRef[] }
  /**
   * Delete it. `unblockRefsFirst`: set blockOwnerDeletion=false on its own
   * references before a foreground delete, because one of its dependents is
   * also waiting on it (upstream's cycle guard).
   */
  | { kind: 'delete'; propagation: DeletionPropagation; unblockRefsFirst: boolean; causes: OwnerRef[] };

/** Upstream's attemptToDeleteItem switch, after classification. */
export function decideAttemptToDelete(item: ItemFacts, c: Classification): AttemptToDeleteDecision {
  if (c.undecidable) {
    const what = `${c.undecidable.ref.type.kind} ${c.undecidable.ref.name}`;
    if (c.undecidable.state === 'namespaced-owner-of-cluster-scoped')
      return { kind: 'forget', reason: `cluster-scoped object refers to namespaced owner ${what}` };
    return {
      kind: 'requeue',
      reason: `${c.undecidable.state} for owner ${what}${c.undecidable.detail ? `: ${c.undecidable.detail}` : ''}`,
    };
  }
  if (c.solid.length > 0) {
    if (c.dangling.length === 0 && c.waiting.length === 0) return { kind: 'keep', reason: 'has a solid owner' };
    // References to waiting owners must go too, or those owners wait forever on a dependent that stays.
    const causes = [...c.dangling, ...c.waiting];
    return { kind: 'remove-refs', uids: causes.map((r) => r.uid), causes };
  }
  if (c.waiting.length > 0 && item.hasDependents) {
    return {
      kind: 'delete',
      propagation: 'Foreground',
      unblockRefsFirst: item.dependentDeletingDependents,
      causes: [...c.waiting, ...c.dangling],
    };
  }
  // No solid owner and nobody needs it gone first: honour a finalizer the item already has.
  const propagation: DeletionPropagation = item.orphanFinalizer ? 'Orphan' : item.foregroundFinalizer ? 'Foreground' : 'Background';
  return { kind: 'delete', propagation, unblockRefsFirst: false, causes: [...c.dangling, ...c.waiting] };
}

/** What an owner in foreground deletion waits on, as the graph shows it. */
export interface DeletingDependentsFacts {
  /** Dependents whose reference to the owner blocks its deletion. */
  blockers: readonly { uid: string; deletingDependents: boolean }[];
  /** Whether the owner sits on a cycle of blocking references among objects all waiting in foreground deletion. */
  onForegroundCycle: boolean;
  /** How long the owner has waited so far (ms, by the collector's clock). */
  waitedMs: number;
  /** Dependents, direct and indirect: the cycle timeout scales with them. */
  transitiveDependents: number;
  cycleTimeoutPerDependentMs: number;
}

export type DeletingDependentsDecision =
  | { kind: 'remove-finalizer'; finalizer: typeof Finalizers.foregroundDeletion; reason: 'no-blocking-dependents' }
  | {
      kind: 'remove-finalizer';
      finalizer: typeof Finalizers.foregroundDeletion;
      reason: 'cycle-timeout';
      blockers: string[];
      waitedMs: number;
      timeoutMs: number;
    }
  /** Queue these blockers (they are not yet on their way out); `recheckAfterMs` when only a cycle timeout can end the wait. */
  | { kind: 'wait'; enqueue: string[]; recheckAfterMs?: number };

export function decideDeletingDependents(f: DeletingDependentsFacts): DeletingDependentsDecision {
  if (f.blockers.length === 0)
    return { kind: 'remove-finalizer', finalizer: Finalizers.foregroundDeletion, reason: 'no-blocking-dependents' };
  const notYetDeleting = f.blockers.filter((b) => !b.deletingDependents).map((b) => b.uid);
  if (notYetDeleting.length > 0) return { kind: 'wait', enqueue: notYetDeleting };
  // Every blocker waits on its own dependents. That is progress unless it is a cycle.
  if (!f.onForegroundCycle) return { kind: 'wait', enqueue: [] };
  const cycle = decideCycleBreak(f.waitedMs, f.transitiveDependents, f.cycleTimeoutPerDependentMs);
  if (cycle.kind === 'wait') return { kind: 'wait', enqueue: [], recheckAfterMs: cycle.recheckAfterMs };
  return {
    kind: 'remove-finalizer',
    finalizer: Finalizers.foregroundDeletion,
    reason: 'cycle-timeout',
    blockers: f.blockers.map((b) => b.uid),
    waitedMs: f.waitedMs,
    timeoutMs: cycle.timeoutMs,
  };
}

/** A foreground-deletion cycle is broken once the owner waited longer than a timeout proportional to its dependents. */
export function decideCycleBreak(
  waitedMs: number,
  transitiveDependents: number,
  timeoutPerDependentMs: number,
): { kind: 'wait'; recheckAfterMs: number } | { kind: 'break'; timeoutMs: number } {
  const timeoutMs = timeoutPerDependentMs * Math.max(1, transitiveDependents);
  if (waitedMs >= timeoutMs) return { kind: 'break', timeoutMs };
  return { kind: 'wait', recheckAfterMs: Math.max(1, timeoutMs - waitedMs) };
}

/**
 * True when a path of blocking references leads from the owner back to
 * itself through objects that all wait in foreground deletion: none of them
 * can finish before another does.
 */
export function onForegroundCycle(graph: Graph, ownerUid: string, maxVisited = 10_000): boolean {
  const start = graph.get(ownerUid);
  if (!start?.deletingDependents) return false;
  const seen = new Set<string>();
  const stack: GraphNode[] = [start];
  while (stack.length > 0 && seen.size < maxVisited) {
    const n = stack.pop();
    if (!n) break;
    for (const dep of graph.blockingDependents(n)) {
      if (dep.uid === ownerUid) return true;
      if (!dep.deletingDependents || seen.has(dep.uid)) continue;
      seen.add(dep.uid);
      stack.push(dep);
    }
  }
  return false;
}

export function deletingDependentsFacts(
  graph: Graph,
  owner: GraphNode,
  nowMs: number,
  cycleTimeoutPerDependentMs: number,
): DeletingDependentsFacts {
  const blockers = graph.blockingDependents(owner).map((d) => ({ uid: d.uid, deletingDependents: d.deletingDependents }));
  const since = graph.deletingDependentsSince.get(owner.uid) ?? nowMs;
  const allWaiting = blockers.length > 0 && blockers.every((b) => b.deletingDependents);
  return {
    blockers,
    onForegroundCycle: allWaiting && onForegroundCycle(graph, owner.uid),
    waitedMs: Math.max(0, nowMs - since),
    transitiveDependents: allWaiting ? graph.transitiveDependentCount(owner.uid) : owner.dependentCount(),
    cycleTimeoutPerDependentMs,
  };
}

export type AttemptToOrphanDecision =
  | { kind: 'forget'; reason: string }
  /** Remove the owner's reference from each dependent, then the orphan finalizer from the owner. */
  | { kind: 'orphan'; dependents: string[] };

export function decideAttemptToOrphan(owner: GraphNode | undefined): AttemptToOrphanDecision {
  if (!owner) return { kind: 'forget', reason: 'not in graph' };
  if (!owner.beingDeleted || !owner.has(NodeFlags.orphanFinalizer)) return { kind: 'forget', reason: 'not waiting to orphan' };
  return { kind: 'orphan', dependents: owner.dependents().map((d) => d.uid) };
}

/**
 * The owner chain behind a collection, for the event on the deleted object:
 * each cause, then its owners upwards as far as the graph knows them.
 */
export function describeOwnerChain(graph: Graph, causes: readonly OwnerRef[], maxDepth = 6): string {
  const chains = causes.map((cause) => {
    const parts: string[] = [];
    let ref: OwnerRef | undefined = cause;
    const seen = new Set<string>();
    for (let depth = 0; ref && depth < maxDepth && !seen.has(ref.uid); depth++) {
      seen.add(ref.uid);
      const node = graph.get(ref.uid);
      const state =
        !node || node.virtual ? 'gone' : node.deletingDependents ? 'deleting dependents' : node.beingDeleted ? 'being deleted' : 'present';
      parts.push(`${ref.type.kind} ${ref.name} (${state})`);
      ref = node?.owners[0];
    }
    return parts.join(' <- ');
  });
  return chains.join('; ');
}
