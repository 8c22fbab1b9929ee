/**
 * Dependency graphs over names. An edge "a -> b" means a depends on b
 * (a references b), so b is applied before a and deleted after it.
 * Every order is deterministic: ties go to the node listed first.
 */
export interface DependencyGraph {
  /** Nodes in their given (spec) order. */
  readonly nodes: readonly string[];
  /** Dependencies of each node, in reference order, without duplicates. Unknown nodes are ignored. */
  readonly dependencies: ReadonlyMap<string, readonly string[]>;
}

export function dependenciesOf(graph: DependencyGraph, node: string): readonly string[] {
  return graph.dependencies.get(node) ?? [];
}

/** Builds a graph, dropping edges to nodes that are not in `nodes` (validation reports those). */
export function buildGraph(nodes: readonly string[], edges: Iterable<readonly [from: string, to: string]>): DependencyGraph {
  const known = new Set(nodes);
  const dependencies = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const [from, to] of edges) {
    const deps = dependencies.get(from);
    if (deps === undefined || !known.has(to) || deps.includes(to)) continue;
    deps.push(to);
  }
  return { nodes: [...new Set(nodes)], dependencies };
}

/**
 * Every node, dependencies first; among nodes whose dependencies are all
 * placed, the one listed first goes next. A cycle does not stop the order:
 * the first listed node left is placed anyway, so callers that must refuse
 * cycles check `findCycles` first.
 */
export function topologicalOrder(graph: DependencyGraph): string[] {
  const placed = new Set<string>();
  const order: string[] = [];
  while (order.length < graph.nodes.length) {
    const remaining = graph.nodes.filter((n) => !placed.has(n));
    const next = remaining.find((n) => dependenciesOf(graph, n).every((d) => placed.has(d))) ?? remaining[0];
    if (next === undefined) break;
    placed.add(next);
    order.push(next);
  }
  return order;
}

/**
 * Dependents before what they depend on (the order for deleting); among
 * nodes free to go, the one listed first goes next.
 */
export function deletionOrder(graph: DependencyGraph): string[] {
  return topologicalOrder(transpose(graph));
}

/** The same nodes with every edge turned around: "a -> b" becomes "b -> a". */
export function transpose(graph: DependencyGraph): DependencyGraph {
  const edges = graph.nodes.flatMap((n) => dependenciesOf(graph, n).map((d) => [d, n] as const));
  return buildGraph(graph.nodes, edges);
}

/**
 * Groups of nodes that can be processed in parallel: level 0 has no
 * dependencies, level n depends on nothing above level n-1. Within a level,
 * nodes keep their listed order. Meant for acyclic graphs.
 */
export function levels(graph: DependencyGraph): string[][] {
  const levelOf = new Map<string, number>();
  for (const node of topologicalOrder(graph)) {
    const deps = dependenciesOf(graph, node).map((d) => levelOf.get(d) ?? -1);
    levelOf.set(node, deps.length === 0 ? 0 : Math.max(...deps) + 1);
  }
  const result: string[][] = [];
  for (const node of graph.nodes) {
    const level = levelOf.get(node) ?? 0;
    while (result.length <= level) result.push([]);
    result[level]?.push(node);
  }
  return result;
}

/**
 * Each elementary cycle met by a depth-first walk in listed order, written
 * from its first listed node and closed on itself: ["a", "b", "a"]. A cycle is
 * reported once whatever node the walk entered it by.
 */
export function findCycles(graph: DependencyGraph): string[][] {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const seen = new Set<string>();
  const cycles: string[][] = [];
  const index = new Map(graph.nodes.map((n, i) => [n, i]));

  const visit = (node: string): void => {
    state.set(node, 'visiting');
    stack.push(node);
    for (const dep of dependenciesOf(graph, node)) {
      const s = state.get(dep);
      if (s === 'visiting') {
        const loop = stack.slice(stack.indexOf(dep));
        const canonical = rotateToFirst(loop, index);
        const key = canonical.join('\u0000');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...canonical, canonical[0] ?? dep]);
        }
      } else if (s === undefined) {
        visit(dep);
      }
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.nodes) if (!state.has(node)) visit(node);
  return cycles;
}

function rotateToFirst(loop: readonly string[], index: ReadonlyMap<string, number>): string[] {
  let start = 0;
  loop.forEach((n, i) => {
    if ((index.get(n) ?? 0) < (index.get(loop[start] ?? '') ?? 0)) start = i;
  });
  return [...loop.slice(start), ...loop.slice(0, start)];
}

/** "a -> b -> a" */
export function formatCycle(cycle: readonly string[]): string {
  return cycle.join(' -> ');
}
