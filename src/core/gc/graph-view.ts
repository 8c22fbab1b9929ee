/**
 * The collector's view of one owner's dependents, as data and as Graphviz
 * DOT: what `bundlesmith gc-graph` prints from the operator's debug endpoint
 * (kube-controller-manager serves the same kind of view at
 * /debug/controllers/garbagecollector/graph). Read-only and pure: a walk of
 * the graph as it is; virtual nodes (owners only referenced, not observed)
 * and objects being deleted are marked.
 */
import type { Graph } from './graph.js';
import type { GraphNode } from './graph-node.js';

export interface GraphViewNode {
  uid: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** Referenced as an owner but not observed (yet, or at all). */
  virtual: boolean;
  beingDeleted: boolean;
  /** In foreground deletion: waiting for its blocking dependents. */
  deletingDependents: boolean;
}

export interface GraphViewEdge {
  /** Owner uid. */
  owner: string;
  /** Dependent uid. */
  dependent: string;
  blockOwnerDeletion: boolean;
  controller: boolean;
}

export interface GraphView {
  /** The owner first, then its dependents breadth-first. */
  nodes: GraphViewNode[];
  edges: GraphViewEdge[];
  /** The walk stopped at the node limit. */
  truncated: boolean;
}

export interface OwnerQuery {
  kind: string;
  name: string;
  /** '' or absent: cluster-scoped, or any namespace when `uid` is not given. */
  namespace?: string;
  uid?: string;
}

/** The observed (or virtual) nodes that match the query: by uid, else by kind (case-insensitive), name and namespace. */
export function findOwners(graph: Graph, q: OwnerQuery): GraphNode[] {
  if (q.uid !== undefined) {
    const node = graph.get(q.uid);
    return node ? [node] : [];
  }
  const kind = q.kind.toLowerCase();
  const out: GraphNode[] = [];
  for (const node of graph.nodes.values()) {
    if (node.name !== q.name || node.type.kind.toLowerCase() !== kind) continue;
    if (q.namespace !== undefined && q.namespace !== '' && node.namespace !== q.namespace && node.namespace !== '') continue;
    out.push(node);
  }
  return out;
}

function viewNode(n: GraphNode): GraphViewNode {
  return {
    uid: n.uid,
    apiVersion: n.type.apiVersion,
    kind: n.type.kind,
    namespace: n.namespace,
    name: n.name,
    virtual: n.virtual,
    beingDeleted: n.beingDeleted,
    deletingDependents: n.deletingDependents,
  };
}

/** The dependents subtree under `roots`, breadth-first, each node once, at most `limit` nodes. */
export function dependentsView(roots: readonly GraphNode[], limit = 2_000): GraphView {
  const nodes: GraphViewNode[] = [];
  const edges: GraphViewEdge[] = [];
  const seen = new Set<string>();
  const queue = [...roots];
  let truncated = false;
  for (const r of roots) seen.add(r.uid);
  while (queue.length > 0) {
    const n = queue.shift();
    if (n === undefined) break;
    if (nodes.length >= limit) {
      truncated = true;
      break;
    }
    nodes.push(viewNode(n));
    for (const d of n.dependents().sort((a, b) => `${a.type.kind}/${a.name}`.localeCompare(`${b.type.kind}/${b.name}`))) {
      for (const ref of d.refsTo(n.uid))
        edges.push({ owner: n.uid, dependent: d.uid, blockOwnerDeletion: ref.blockOwnerDeletion, controller: ref.controller });
      if (seen.has(d.uid)) continue;
      seen.add(d.uid);
      queue.push(d);
    }
  }
  const kept = new Set(nodes.map((n) => n.uid));
  return { nodes, edges: edges.filter((e) => kept.has(e.owner) && kept.has(e.dependent)), truncated };
}

function dotString(s: string): string {
  return `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** Graphviz DOT: dashed for virtual nodes, red for objects being deleted, bold edges for blockOwnerDeletion. */
export function toDot(view: GraphView): string {
  const lines = ['digraph dependents {', '  rankdir=TB;', '  node [shape=box, fontname="monospace"];'];
  for (const n of view.nodes) {
    const label = `${n.kind}\\n${n.namespace ? `${n.namespace}/` : ''}${n.name}${n.virtual ? '\\n(virtual)' : ''}${n.deletingDependents ? '\\n(waiting for dependents)' : n.beingDeleted ? '\\n(being deleted)' : ''}`;
    const style = [n.virtual ? 'style=dashed' : '', n.beingDeleted ? 'color=red' : ''].filter((x) => x !== '');
    lines.push(`  ${dotString(n.uid)} [label="${label.replaceAll('"', '\\"')}"${style.length > 0 ? `, ${style.join(', ')}` : ''}];`);
  }
  for (const e of view.edges)
    lines.push(`  ${dotString(e.owner)} -> ${dotString(e.dependent)}${e.blockOwnerDeletion ? ' [style=bold]' : ''};`);
  if (view.truncated) lines.push('  // truncated at the node limit');
  lines.push('}');
  return lines.join('\n');
}
