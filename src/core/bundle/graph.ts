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
 * cycles check `findCycles` first. O((n + e) log n): a Bundle at its bounds
 * orders without holding the event loop.
 */
export function topologicalOrder(graph: DependencyGraph): string[] {
  const index = new Map(graph.nodes.map((n, i) => [n, i]));
  const waitingOn = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const n of graph.nodes) {
    const deps = dependenciesOf(graph, n);
    waitingOn.set(n, deps.length);
    for (const d of deps) {
      const list = dependents.get(d);
      if (list) list.push(n);
      else dependents.set(d, [n]);
    }
  }
  const ready = new MinHeap();
  for (const n of graph.nodes) if (waitingOn.get(n) === 0) ready.push(index.get(n) ?? 0);
  const placed = new Set<string>();
  const order: string[] = [];
  let firstUnplaced = 0;
  while (order.length < graph.nodes.length) {
    let at = ready.pop();
    while (at !== undefined && placed.has(graph.nodes[at] ?? '')) at = ready.pop();
    if (at === undefined) {
      // Only cycles are left: place the first listed node anyway.
      while (firstUnplaced < graph.nodes.length && placed.has(graph.nodes[firstUnplaced] ?? '')) firstUnplaced++;
      at = firstUnplaced;
    }
    const node = graph.nodes[at];
    if (node === undefined) break;
    placed.add(node);
    order.push(node);
    for (const d of dependents.get(node) ?? []) {
      const left = (waitingOn.get(d) ?? 0) - 1;
      waitingOn.set(d, left);
      if (left === 0 && !placed.has(d)) ready.push(index.get(d) ?? 0);
    }
  }
  return order;
}

/** A binary min-heap of list positions: the first listed ready node goes next. */
class MinHeap {
  private readonly items: number[] = [];

  push(value: number): void {
    const a = this.items;
    a.push(value);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((a[parent] ?? 0) <= value) break;
      a[i] = a[parent] ?? 0;
      i = parent;
    }
    a[i] = value;
  }

  pop(): number | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= a.length) break;
      const right = left + 1;
      const child = right < a.length && (a[right] ?? 0) < (a[left] ?? 0) ? right : left;
      if ((a[child] ?? 0) >= last) break;
      a[i] = a[child] ?? 0;
      i = child;
    }
    a[i] = last;
    return top;
  }
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
  const seen = new Set<string>();
  const cycles: string[][] = [];
  const index = new Map(graph.nodes.map((n, i) => [n, i]));
  // Iterative: a chain as long as the bounds allow must not exhaust the call stack.
  const path: string[] = [];
  const next: number[] = [];
  for (const root of graph.nodes) {
    if (state.has(root)) continue;
    state.set(root, 'visiting');
    path.push(root);
    next.push(0);
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top] ?? '';
      const deps = dependenciesOf(graph, node);
      const i = next[top] ?? 0;
      if (i >= deps.length) {
        state.set(node, 'done');
        path.pop();
        next.pop();
        continue;
      }
      next[top] = i + 1;
      const dep = deps[i] ?? '';
      const s = state.get(dep);
      if (s === 'visiting') {
        const canonical = rotateToFirst(path.slice(path.lastIndexOf(dep)), index);
        const key = canonical.join('\u0000');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...canonical, canonical[0] ?? dep]);
        }
      } else if (s === undefined) {
        state.set(dep, 'visiting');
        path.push(dep);
        next.push(0);
      }
    }
  }
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
