/**
 * `bundlesmith gc-graph --owner KIND/NAME`: the dependents the operator's
 * garbage collector holds under an owner, read from the operator's
 * read-only debug endpoint (--debug-addr; reach it with kubectl
 * port-forward). Text (a tree), JSON, or Graphviz DOT.
 */
import { z } from 'zod';
import type { GraphView, GraphViewNode } from '../core/gc/graph-view.js';
import { EXIT_PROBLEMS, type ObjectRef } from './args.js';
import { CliError } from './io.js';

export const DEFAULT_DEBUG_URL = 'http://127.0.0.1:8082';

const GraphViewSchema = z.object({
  nodes: z.array(
    z.object({
      uid: z.string(),
      apiVersion: z.string(),
      kind: z.string(),
      namespace: z.string(),
      name: z.string(),
      virtual: z.boolean(),
      beingDeleted: z.boolean(),
      deletingDependents: z.boolean(),
    }),
  ),
  edges: z.array(z.object({ owner: z.string(), dependent: z.string(), blockOwnerDeletion: z.boolean(), controller: z.boolean() })),
  truncated: z.boolean(),
});

/** The endpoint's JSON, checked: an operator of another version may answer differently. */
export function parseGraphView(body: string): GraphView {
  const parsed = GraphViewSchema.safeParse(JSON.parse(body));
  if (!parsed.success)
    throw new CliError(
      `the debug endpoint answered something this CLI does not read: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      EXIT_PROBLEMS,
    );
  return parsed.data;
}

export async function fetchGraph(
  debugUrl: string,
  owner: ObjectRef,
  namespace: string | undefined,
  format: 'json' | 'dot',
): Promise<string> {
  const url = new URL('/debug/gc/graph', debugUrl);
  url.searchParams.set('kind', owner.kind);
  url.searchParams.set('name', owner.name);
  if (namespace !== undefined) url.searchParams.set('namespace', namespace);
  url.searchParams.set('format', format);
  let res: Response;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new CliError(
      `cannot reach the operator's debug endpoint at ${debugUrl} (is it started with --debug-addr, and port-forwarded?): ${err instanceof Error ? err.message : String(err)}`,
      EXIT_PROBLEMS,
    );
  }
  const body = await res.text();
  if (!res.ok) throw new CliError(`debug endpoint: ${res.status}: ${body.trim()}`, EXIT_PROBLEMS);
  return body;
}

function label(n: GraphViewNode): string {
  const marks = [
    n.virtual ? 'virtual: referenced, not observed' : '',
    n.deletingDependents ? 'waiting for its dependents' : n.beingDeleted ? 'being deleted' : '',
  ].filter((m) => m !== '');
  return `${n.kind}/${n.namespace ? `${n.namespace}/` : ''}${n.name}${marks.length > 0 ? `  (${marks.join(', ')})` : ''}`;
}

/** The view as a tree: each dependent under the first owner the walk reached it from; "blocks" marks blockOwnerDeletion. */
export function renderGraph(view: GraphView): string[] {
  const byUid = new Map(view.nodes.map((n) => [n.uid, n]));
  const children = new Map<string, { uid: string; blocks: boolean }[]>();
  const placed = new Set<string>(view.nodes[0] ? [view.nodes[0].uid] : []);
  for (const e of view.edges) {
    if (placed.has(e.dependent)) continue;
    placed.add(e.dependent);
    const list = children.get(e.owner) ?? [];
    list.push({ uid: e.dependent, blocks: e.blockOwnerDeletion });
    children.set(e.owner, list);
  }
  const out: string[] = [];
  const walk = (uid: string, prefix: string) => {
    const kids = children.get(uid) ?? [];
    kids.forEach((k, i) => {
      const last = i === kids.length - 1;
      const n = byUid.get(k.uid);
      if (!n) return;
      out.push(`${prefix}${last ? '└─ ' : '├─ '}${label(n)}${k.blocks ? '  [blocks owner deletion]' : ''}`);
      walk(k.uid, `${prefix}${last ? '   ' : '│  '}`);
    });
  };
  const root = view.nodes[0];
  if (root) {
    out.push(label(root));
    walk(root.uid, '');
  }
  if (view.truncated) out.push(`(truncated at ${view.nodes.length} nodes)`);
  return out;
}
