/**
 * Which objects the collector may act on. `--gc=bundles` limits it to
 * objects whose owner chain reaches a Bundle; the rest of the cluster is
 * left to whoever else collects it.
 */
import { API_VERSION, BUNDLE_KIND } from '../../api/names.js';
import { NodeFlags, type GraphNode, type ObjectType } from './graph-node.js';
import type { Graph } from './graph.js';

export type GcMode = 'cluster' | 'bundles' | 'off';

/**
 * Events (core v1 and events.k8s.io): high churn, never owners of anything;
 * kube-controller-manager's collector ignores them, and so does ours, so
 * neither ever orphans or collects one (the finalizer reads its orphan
 * traces knowing that).
 */
export function neverCollected(group: string, kind: string): boolean {
  return kind === 'Event' && (group === '' || group === 'events.k8s.io');
}

function isBundleType(t: ObjectType): boolean {
  return t.apiVersion === API_VERSION && t.kind === BUNDLE_KIND;
}

/**
 * True when the node is a Bundle, or one of its owner references names a
 * Bundle (present or not: a dependent of a deleted Bundle still qualifies),
 * or an owner it references does, transitively, or one of these had an
 * owner removed while its chain reached a Bundle (NodeFlags.bundleChain:
 * the chain is remembered once the link is gone). Cycles and long chains stop
 * at `maxVisited` nodes.
 */
export function reachesBundle(graph: Graph, node: GraphNode, maxVisited = 256): boolean {
  if (isBundleType(node.type) || node.has(NodeFlags.bundleChain)) return true;
  const seen = new Set<string>([node.uid]);
  const stack: GraphNode[] = [node];
  while (stack.length > 0 && seen.size <= maxVisited) {
    const n = stack.pop();
    if (!n) break;
    for (const ref of n.owners) {
      if (isBundleType(ref.type)) return true;
      if (seen.has(ref.uid)) continue;
      seen.add(ref.uid);
      const owner = graph.get(ref.uid);
      if (owner?.has(NodeFlags.bundleChain)) return true;
      if (owner) stack.push(owner);
    }
  }
  return false;
}

/** Whether the mode lets the collector act on this node. */
export function inModeScope(mode: GcMode, graph: Graph, node: GraphNode): boolean {
  switch (mode) {
    case 'cluster':
      return true;
    case 'bundles':
      return reachesBundle(graph, node);
    case 'off':
      return false;
  }
}

/** Acting only on part of the cluster (tests on a shared apiserver); the graph still sees everything. */
export interface GcScopeRestriction {
  /** Namespaced objects are acted on only in these namespaces. */
  namespaces: readonly string[];
  /** Cluster-scoped objects are acted on only when they carry this label (any value); none when unset. */
  clusterScopedLabel?: string;
}

/** Whether the restriction lets the collector act on this object (its node is tagged). */
export function inRestriction(
  r: GcScopeRestriction,
  obj: { metadata: { namespace?: string | undefined; labels?: Readonly<Record<string, string>> | undefined } },
): boolean {
  const ns = obj.metadata.namespace;
  if (ns) return r.namespaces.includes(ns);
  return r.clusterScopedLabel !== undefined && obj.metadata.labels?.[r.clusterScopedLabel] !== undefined;
}
