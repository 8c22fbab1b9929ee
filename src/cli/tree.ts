/**
 * `bundlesmith tree`: a Bundle's resources as a tree, dependencies above
 * the resources that reference them, each with its state from the Bundle's
 * status, what the garbage collector sees it owning below it, and the
 * objects counting down to deletion. Pure: the caller reads the Bundle and
 * the objects; this module shapes and renders them.
 */
import type { Bundle } from '../api/bundle.js';
import type { Condition, PendingDeletion } from '../api/bundle-status.js';
import { ResourceConditionTypes } from '../api/names.js';
import { parseRfc3339 } from '../core/rfc3339.js';
import { formatRemaining } from '../core/duration.js';

/** What the tree needs of an object: identity and owner references. */
export interface TreeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    uid?: string | undefined;
    deletionTimestamp?: string | undefined;
    ownerReferences?: readonly { uid: string }[] | undefined;
  };
}

export type ResourceState = 'Ready' | 'InProgress' | 'Blocked' | 'Error' | 'Unknown';

export interface TreeNode {
  /** The Bundle's resource name; absent for an object the collector sees owned. */
  resource?: string;
  kind: string;
  name: string;
  /** Resources only: from the Bundle's status. */
  state?: ResourceState;
  /** Why, when not Ready (the condition's message). */
  detail?: string;
  /** Resources listed under another dependency too. */
  alsoNeeds?: string[];
  /** The object is being deleted (deletionTimestamp set). */
  terminating?: boolean;
  /** No live object at the resource's coordinates. */
  missing?: boolean;
  children: TreeNode[];
  /** What the collector sees this object owning (ownerReferences to it). */
  owned: TreeNode[];
}

export interface PendingNode {
  kind: string;
  name: string;
  deleteAfter: string;
  /** Milliseconds until deleteAfter (negative: overdue). */
  remainingMs: number | undefined;
  /** What the deletion waits for besides time (the status's waitingFor): an approval, or the Bundle's resources to be Ready. */
  gate?: 'Approval' | 'BundleReady';
}

export interface BundleTree {
  namespace: string;
  name: string;
  /** "Ready", "InProgress", "Error" (the Bundle's own conditions), or "Deleting". */
  state: string;
  ready: string | undefined;
  resources: TreeNode[];
  pending: PendingNode[];
}

export interface TreeInput {
  bundle: Bundle;
  /** The live object at each resource's coordinates, by resource name. */
  live: ReadonlyMap<string, TreeObject>;
  /** Every object of the namespace that carries an ownerReference (any kind the cluster lists). */
  owners: readonly TreeObject[];
  now: number;
  /** How deep to follow what the collector sees owned (default 4). */
  ownedDepth?: number;
}

function conditionTrue(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type && c.status === 'True');
}

/** Error first, then Blocked, InProgress, Ready: the state a reader acts on. */
export function resourceState(conditions: readonly Condition[] | undefined): { state: ResourceState; detail?: string } {
  for (const state of [ResourceConditionTypes.Error, ResourceConditionTypes.Blocked, ResourceConditionTypes.InProgress] as const) {
    const c = conditionTrue(conditions, state);
    if (c) return { state, ...(c.message ? { detail: c.message } : {}) };
  }
  return conditionTrue(conditions, ResourceConditionTypes.Ready) ? { state: 'Ready' } : { state: 'Unknown' };
}

function bundleState(bundle: Bundle): string {
  if (bundle.metadata.deletionTimestamp) return 'Deleting';
  const conditions = bundle.status?.conditions;
  if (conditionTrue(conditions, 'Error')) return 'Error';
  if (conditionTrue(conditions, 'Ready')) return 'Ready';
  if (conditionTrue(conditions, 'InProgress')) return 'InProgress';
  return 'Unknown';
}

/** Objects carrying an ownerReference to each uid. */
function dependentsByOwner(objects: readonly TreeObject[]): Map<string, TreeObject[]> {
  const out = new Map<string, TreeObject[]>();
  for (const o of objects) {
    for (const ref of new Set((o.metadata.ownerReferences ?? []).map((r) => r.uid))) {
      const list = out.get(ref) ?? [];
      list.push(o);
      out.set(ref, list);
    }
  }
  for (const list of out.values()) list.sort((a, b) => `${a.kind}/${a.metadata.name}`.localeCompare(`${b.kind}/${b.metadata.name}`));
  return out;
}

function ownedNodes(uid: string | undefined, byOwner: ReadonlyMap<string, TreeObject[]>, depth: number, seen: Set<string>): TreeNode[] {
  if (uid === undefined || depth <= 0) return [];
  const nodes: TreeNode[] = [];
  for (const o of byOwner.get(uid) ?? []) {
    const id = o.metadata.uid;
    if (id === undefined || seen.has(id)) continue;
    seen.add(id);
    nodes.push({
      kind: o.kind,
      name: o.metadata.name,
      ...(o.metadata.deletionTimestamp ? { terminating: true } : {}),
      children: [],
      owned: ownedNodes(id, byOwner, depth - 1, seen),
    });
  }
  return nodes;
}

export function buildTree(input: TreeInput): BundleTree {
  const { bundle } = input;
  const resources = bundle.spec.resources;
  const byOwner = dependentsByOwner(input.owners);
  const statuses = new Map((bundle.status?.resourceStatuses ?? []).map((s) => [s.name, s.conditions] as const));
  // The Bundle's own objects are nodes of the tree, never "owned" under a sibling that references them.
  const seen = new Set<string>([...input.live.values()].flatMap((o) => (o.metadata.uid ? [o.metadata.uid] : [])));
  const names = new Set(resources.map((r) => r.name));
  const dependencies = new Map(
    resources.map(
      (r) => [r.name, [...new Set((r.references ?? []).map((ref) => ref.resource).filter((n) => names.has(n) && n !== r.name))]] as const,
    ),
  );

  // Each resource hangs under its first dependency (spec order), the others are named; a cycle (an invalid
  // spec) or a dangling reference puts the resource at the top.
  const parentOf = new Map<string, string>();
  for (const r of resources) {
    const first = dependencies.get(r.name)?.[0];
    if (first === undefined) continue;
    let ancestor: string | undefined = first;
    const path = new Set([r.name]);
    while (ancestor !== undefined && !path.has(ancestor)) {
      path.add(ancestor);
      ancestor = parentOf.get(ancestor);
    }
    if (ancestor === undefined) parentOf.set(r.name, first);
  }

  const nodes = new Map<string, TreeNode>();
  for (const r of resources) {
    const live = input.live.get(r.name);
    const { state, detail } = resourceState(statuses.get(r.name));
    const alsoNeeds = (dependencies.get(r.name) ?? []).filter((d) => d !== parentOf.get(r.name));
    nodes.set(r.name, {
      resource: r.name,
      kind: r.spec.object?.kind ?? r.spec.plugin?.name ?? '?',
      name: r.spec.object?.metadata.name ?? r.spec.plugin?.objectName ?? r.name,
      state,
      ...(detail !== undefined ? { detail } : {}),
      ...(alsoNeeds.length > 0 ? { alsoNeeds } : {}),
      ...(live === undefined ? { missing: true } : {}),
      ...(live?.metadata.deletionTimestamp ? { terminating: true } : {}),
      children: [],
      owned: ownedNodes(live?.metadata.uid, byOwner, input.ownedDepth ?? 4, seen),
    });
  }
  const roots: TreeNode[] = [];
  for (const r of resources) {
    const node = nodes.get(r.name);
    if (!node) continue;
    const parent = parentOf.get(r.name);
    (parent !== undefined ? (nodes.get(parent)?.children ?? roots) : roots).push(node);
  }
  return {
    namespace: bundle.metadata.namespace,
    name: bundle.metadata.name,
    state: bundleState(bundle),
    ready: bundle.status?.resourcesReady,
    resources: roots,
    pending: (bundle.status?.pendingDeletions ?? []).map((p: PendingDeletion) => {
      const at = parseRfc3339(p.deleteAfter);
      const gate = isHeldByGate(p.waitingFor) ? { gate: p.waitingFor } : {};
      return {
        kind: p.kind,
        name: p.name,
        deleteAfter: p.deleteAfter,
        remainingMs: at === undefined ? undefined : at - input.now,
        ...gate,
      };
    }),
  };
}

/** ANSI colours, or none (piped output). */
export interface Palette {
  ok(s: string): string;
  warn(s: string): string;
  bad(s: string): string;
  dim(s: string): string;
}

const plain: Palette = { ok: (s) => s, warn: (s) => s, bad: (s) => s, dim: (s) => s };
const ansi = (code: number) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
const coloured: Palette = { ok: ansi(32), warn: ansi(33), bad: ansi(31), dim: ansi(2) };

export function palette(colour: boolean): Palette {
  return colour ? coloured : plain;
}

function paint(state: string, p: Palette): string {
  if (state === 'Ready') return p.ok(state);
  if (state === 'Error' || state === 'Deleting') return p.bad(state);
  return p.warn(state);
}

/** "in 3m12s" / "overdue by 4s", whole seconds. */
export function countdownWords(remainingMs: number | undefined): string {
  if (remainingMs === undefined) return 'at an unreadable time';
  const words = formatRemaining(remainingMs);
  return words.startsWith('in ') ? `deletes ${words}` : words;
}

const GATE_WORDS = {
  Approval: 'waits for approval (bundlesmith approve)',
  BundleReady: "waits for the Bundle's resources to be Ready",
} as const;

/** Whether a pending deletion is due and held by a gate (the status's waitingFor): time alone will not delete it. */
export function isHeldByGate(waitingFor: string | undefined): waitingFor is keyof typeof GATE_WORDS {
  return waitingFor === 'Approval' || waitingFor === 'BundleReady';
}

/**
 * A pending deletion in words, as tree and status say it: what holds it
 * when a gate does (an approval, the Bundle's readiness), else its countdown.
 */
export function pendingWords(waitingFor: string | undefined, remainingMs: number | undefined): string {
  return isHeldByGate(waitingFor) ? GATE_WORDS[waitingFor] : countdownWords(remainingMs);
}

function nodeLine(n: TreeNode, p: Palette): string {
  const parts = [`${n.kind}/${n.name}`];
  if (n.state !== undefined) parts.push(paint(n.state, p));
  if (n.missing) parts.push(p.dim('(not created)'));
  if (n.terminating) parts.push(p.bad('terminating'));
  if (n.alsoNeeds) parts.push(p.dim(`also needs ${n.alsoNeeds.join(', ')}`));
  if (n.detail !== undefined && n.state !== 'Ready') parts.push(p.dim(n.detail));
  return parts.join('  ');
}

function renderNodes(nodes: readonly TreeNode[], prefix: string, p: Palette, out: string[]): void {
  nodes.forEach((n, i) => {
    const last = i === nodes.length - 1;
    out.push(
      `${prefix}${last ? '└─ ' : '├─ '}${n.resource === undefined ? p.dim(`${n.kind}/${n.name}${n.terminating ? ' terminating' : ''}`) : nodeLine(n, p)}`,
    );
    // What the collector sees owned first, then the resources that depend on this one.
    renderNodes([...n.owned, ...n.children], `${prefix}${last ? '   ' : '│  '}`, p, out);
  });
}

export function renderTree(tree: BundleTree, p: Palette): string[] {
  const head = [`Bundle ${tree.namespace}/${tree.name}`, paint(tree.state, p)];
  if (tree.ready !== undefined) head.push(`${tree.ready} ready`);
  if (tree.pending.length > 0) head.push(`${tree.pending.length} pending deletion${tree.pending.length === 1 ? '' : 's'}`);
  const out = [head.join('  ')];
  renderNodes(tree.resources, '', p, out);
  if (tree.pending.length > 0) {
    out.push('pending deletion (put the resource back in the Bundle to keep it):');
    tree.pending.forEach((d, i) =>
      out.push(
        `${i === tree.pending.length - 1 ? '└─ ' : '├─ '}${d.kind}/${d.name}  ${p.warn(pendingWords(d.gate, d.remainingMs))}  ${p.dim(`(after ${d.deleteAfter})`)}`,
      ),
    );
  }
  return out;
}
