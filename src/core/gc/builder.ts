/**
 * The graph builder: applies one observed change to the graph and says which
 * nodes need attention. It is the only code that mutates a Graph, and it is
 * run by a single writer (the controller's graph loop), one event at a time.
 * No I/O and no clock: the event carries the time it was taken.
 *
 * The rules follow upstream's GraphBuilder.processGraphChanges: virtual nodes
 * for owners not yet seen (verified by an attempt-to-delete), virtual nodes
 * replaced by the observed identity, dependents re-checked when their
 * references may be invalid, and transitions into orphan or foreground
 * deletion queued.
 *
 * The event and effect types are in graph-change.ts, the comparisons of
 * owner references in owner-refs.ts.
 */
import type { Graph } from './graph.js';
import { NodeFlags, type GraphNode, type OwnerRef } from './graph-node.js';
import { identityOf, sameIdentity, refMatchesCoordinates, type Identity } from './graph-identity.js';
import {
  emptyEffects,
  flagsOf,
  identityFromObject,
  toRefs,
  type GraphEffects,
  type GraphEvent,
  type ObservedObject,
} from './graph-change.js';
import { alternateOwnerIdentity, partitionDependents, referencesDiff, type RefsDiff } from './owner-refs.js';
import { reachesBundle } from './scope.js';

/** Applies one event to the graph. The single writer calls this; nothing else mutates the graph. */
export function applyEvent(graph: Graph, event: GraphEvent): GraphEffects {
  const fx = emptyEffects();
  switch (event.type) {
    case 'observed':
      applyObserved(graph, event.object, event.tagged ?? false, event.source ?? 0, event.at, fx);
      break;
    case 'listed':
      applyListed(graph, event.source, event.uids, fx);
      break;
    case 'deleted': {
      const node = graph.get(event.object.metadata.uid);
      if (node) removeNode(graph, node, identityFromObject(graph, event.object), fx);
      break;
    }
    case 'virtual-delete':
      applyVirtualDelete(graph, event.identity, fx);
      break;
  }
  return fx;
}

/**
 * Nodes this source observed that its list did not hold: deleted while the
 * informer was not watching (its watch failed, or it relisted after 410).
 * Removed as a delete event would remove them, from what the graph knows.
 */
function applyListed(graph: Graph, source: number, uids: ReadonlySet<string>, fx: GraphEffects): void {
  if (source <= 0) return;
  const gone: GraphNode[] = [];
  for (const node of graph.nodes.values()) if (node.observed && node.source === source && !uids.has(node.uid)) gone.push(node);
  for (const node of gone) if (graph.get(node.uid) === node) removeNode(graph, node, identityOf(node), fx);
}

function applyObserved(graph: Graph, obj: ObservedObject, tagged: boolean, source: number, at: number, fx: GraphEffects): void {
  const meta = obj.metadata;
  let node = graph.get(meta.uid);
  const type = graph.internType(obj.apiVersion, obj.kind);
  // A relist repeats every object: one whose resourceVersion this source already applied changed nothing (the server's
  // resourceVersion changes with every write; only events naming their source are compared). Unless it comes at
  // another version: a source is one group and resource across versions, and when its served version moves on (a
  // CRD upgrade) the unchanged objects it lists again must move with it, or the node stays at a version no longer
  // served and every attempt to delete it waits for good.
  if (
    source > 0 &&
    node &&
    node.observed &&
    node.source === source &&
    node.type === type &&
    meta.resourceVersion &&
    node.hasResourceVersion(meta.resourceVersion)
  )
    return;
  const observedId = identityFromObject(graph, obj);
  const flags = flagsOf(meta, tagged);
  fx.touched.push(meta.uid);

  if (node && node.virtual) {
    // First sight of an owner that dependents referenced. If they guessed
    // its identity wrong (namespace, kind, name), re-check those dependents:
    // this covers the "bad child seen before good parent" order.
    if (!sameIdentity(identityOf(node), observedId)) {
      const { nonmatching } = partitionDependents(node.dependents(), observedId);
      for (const dep of nonmatching) {
        if (observedId.namespace !== '' && dep.namespace !== observedId.namespace) reportInvalidNamespace(dep, observedId.uid, fx);
        fx.attemptToDelete.add(dep.uid);
      }
      graph.setIdentity(node, type, meta.name, observedId.namespace);
    }
  }

  if (!node) {
    const refs = toRefs(graph, meta.ownerReferences);
    node = graph.newNode(meta.uid, type, meta.name, observedId.namespace, meta.resourceVersion ?? '', flags);
    if (source > 0) node.source = source;
    graph.setOwners(node, refs);
    addDependentToOwners(graph, node, refs, fx);
    // Owners first seen just now (virtual) are in the graph only since addDependentToOwners.
    if (refs.length === 1) graph.setOwners(node, refs);
    processTransitions(graph, 0, node, at, fx);
    return;
  }
  if (source > 0) node.source = source;

  // An observed object may be served under another version of its group.
  if (node.type !== type) graph.setIdentity(node, type, node.name, node.namespace);

  const newRefs = toRefs(graph, meta.ownerReferences);
  const diff = referencesDiff(node.owners, newRefs);
  if (diff.added.length > 0 || diff.removed.length > 0 || diff.changed.length > 0) {
    addUnblockedOwnersToDeleteQueue(graph, diff, fx);
    graph.setOwners(node, newRefs);
    addDependentToOwners(graph, node, diff.added, fx);
    if (newRefs.length === 1 && diff.added.length > 0) graph.setOwners(node, newRefs);
    removeDependentFromOwners(graph, node, diff.removed);
    // A reference that now names other coordinates may no longer be valid.
    if (diff.changed.some(([o, n]) => o.name !== n.name || o.type !== n.type)) fx.attemptToDelete.add(node.uid);
  }
  const oldFlags = node.flags;
  node.flags = flags | (oldFlags & NodeFlags.bundleChain);
  node.resourceVersion = meta.resourceVersion ?? node.resourceVersion;
  processTransitions(graph, oldFlags, node, at, fx);
}

/** Queues the orphaning or foreground wait that starts with this change. */
function processTransitions(graph: Graph, oldFlags: number, node: GraphNode, at: number, fx: GraphEffects): void {
  const wasOrphaning = (oldFlags & NodeFlags.beingDeleted) !== 0 && (oldFlags & NodeFlags.orphanFinalizer) !== 0;
  if (node.beingDeleted && node.has(NodeFlags.orphanFinalizer) && !wasOrphaning) {
    fx.attemptToOrphan.add(node.uid);
    return;
  }
  if (!node.deletingDependents) {
    graph.deletingDependentsSince.delete(node.uid);
    return;
  }
  if ((oldFlags & NodeFlags.deletingDependents) === 0) {
    graph.deletingDependentsSince.set(node.uid, at);
    for (const dep of node.dependents()) fx.attemptToDelete.add(dep.uid);
    fx.attemptToDelete.add(node.uid);
  }
}

/**
 * Every owner waiting in foreground deletion, and every dependent of one,
 * for the collector's first complete graph.
 *
 * An owner's dependents are queued at its transition into foreground
 * deletion (processTransitions). A collector that starts while the owner is
 * already waiting sees that transition at the owner's first add, and queues
 * only the dependents added to the graph before it: which ones depends on
 * the order the informers hand the objects over. In upstream's collector
 * that order is not fixed (a shared informer that has already listed
 * replays its store to a new handler in map order; fuzz seed 313 saw both
 * outcomes on one plan), and a non-blocking dependent is deleted only if it
 * came first, since processDeletingDependentsItem re-queues blocking
 * dependents alone. Queuing them all once the graph is complete
 * makes ours give every such dependent the attempt a collector that was
 * running at the transition would have given it: the same decision
 * (attempt-to-delete, with owners verified live) in every order.
 */
export function foregroundWaitsAtStart(graph: Graph): string[] {
  const uids = new Set<string>();
  for (const node of graph.nodes.values()) {
    if (node.virtual || !node.deletingDependents) continue;
    uids.add(node.uid);
    for (const dep of node.dependents()) uids.add(dep.uid);
  }
  return [...uids].sort();
}

/** An owner waiting on its dependents is re-checked when a blocking reference to it goes away or stops blocking. */
function addUnblockedOwnersToDeleteQueue(graph: Graph, diff: RefsDiff, fx: GraphEffects): void {
  for (const r of diff.removed) if (r.blockOwnerDeletion && graph.get(r.uid)) fx.attemptToDelete.add(r.uid);
  for (const [o, n] of diff.changed) if (o.blockOwnerDeletion && !n.blockOwnerDeletion && graph.get(n.uid)) fx.attemptToDelete.add(n.uid);
}

function addDependentToOwners(graph: Graph, node: GraphNode, refs: readonly OwnerRef[], fx: GraphEffects): void {
  let potentiallyInvalid = false;
  for (const ref of refs) {
    let owner = graph.get(ref.uid);
    if (!owner) {
      // Not seen yet: a virtual node, verified by an attempt-to-delete. Its
      // namespace is a guess (the dependent's), as upstream.
      owner = graph.newNode(ref.uid, ref.type, ref.name, node.namespace, '', 0);
      owner.addDependent(node);
      fx.attemptToDelete.add(owner.uid);
      continue;
    }
    owner.addDependent(node);
    if (potentiallyInvalid) continue;
    const ownerNamespaced = owner.namespace !== '';
    if (ownerNamespaced && owner.namespace !== node.namespace) {
      // A namespaced owner lives in the dependent's namespace or nowhere.
      // This covers the "good parent seen before bad child" order.
      if (owner.observed) reportInvalidNamespace(node, owner.uid, fx);
      potentiallyInvalid = true;
    } else if (!refMatchesCoordinates(ref, identityOf(owner))) {
      potentiallyInvalid = true;
    } else if (!ownerNamespaced && owner.namespace !== node.namespace && owner.virtual) {
      // A virtual cluster-scoped owner guessed from a cluster-scoped
      // dependent: it may really be a namespaced kind (never valid there).
      potentiallyInvalid = true;
    }
  }
  if (potentiallyInvalid) fx.attemptToDelete.add(node.uid);
}

function removeDependentFromOwners(graph: Graph, node: GraphNode, refs: readonly OwnerRef[]): void {
  for (const ref of refs) graph.get(ref.uid)?.removeDependent(node);
}

function removeNode(graph: Graph, node: GraphNode, deletedIdentity: Identity, fx: GraphEffects): void {
  graph.removeNode(node);
  graph.deletingDependentsSince.delete(node.uid);
  removeDependentFromOwners(graph, node, node.owners);
  fx.touched.push(node.uid);
  const dependents = node.dependents();
  // Its dependents lose the link through it: remember that their chain reached a Bundle.
  if (dependents.length > 0 && reachesBundle(graph, node)) for (const dep of dependents) dep.flags |= NodeFlags.bundleChain;
  // The UID is gone for good: remember it, so every dependent is decided without asking the server about this owner.
  if (dependents.length > 0) fx.absentOwners.push(deletedIdentity);
  for (const dep of dependents) fx.attemptToDelete.add(dep.uid);
  for (const ref of node.owners) {
    const owner = graph.get(ref.uid);
    if (owner?.deletingDependents) fx.attemptToDelete.add(owner.uid);
  }
}

function applyVirtualDelete(graph: Graph, deleted: Identity, fx: GraphEffects): void {
  const node = graph.get(deleted.uid);
  if (!node) return;
  if (node.virtual) {
    // Only a guess at the owner's identity was verified absent. Dependents
    // that name it otherwise keep the node alive, under their identity.
    const { matching, nonmatching } = partitionDependents(node.dependents(), deleted);
    if (nonmatching.length > 0) {
      if (matching.length > 0) {
        fx.absentOwners.push(deleted);
        for (const dep of matching) fx.attemptToDelete.add(dep.uid);
      }
      if (sameIdentity(identityOf(node), deleted)) {
        const alternate = alternateOwnerIdentity(nonmatching, deleted);
        if (alternate) {
          graph.setIdentity(
            node,
            graph.internType(alternate.apiVersion, alternate.kind),
            alternate.name,
            graph.internNamespace(alternate.namespace),
          );
          fx.attemptToDeleteRateLimited.add(node.uid);
        }
      }
      return;
    }
  } else if (!sameIdentity(identityOf(node), deleted)) {
    // The real object exists under other coordinates: only the dependents
    // naming the absent coordinates are affected.
    const { matching } = partitionDependents(node.dependents(), deleted);
    if (matching.length > 0) {
      fx.absentOwners.push(deleted);
      for (const dep of matching) fx.attemptToDelete.add(dep.uid);
    }
    return;
  }
  removeNode(graph, node, deleted, fx);
}

function reportInvalidNamespace(dep: GraphNode, ownerUid: string, fx: GraphEffects): void {
  const ref = dep.owners.find((r) => r.uid === ownerUid);
  if (!ref) return;
  fx.invalidNamespaceRefs.push({
    dependent: identityOf(dep),
    ownerRef: { apiVersion: ref.type.apiVersion, kind: ref.type.kind, name: ref.name, uid: ref.uid },
  });
}
