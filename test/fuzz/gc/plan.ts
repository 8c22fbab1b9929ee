/**
 * A seed's whole plan, as data: the objects (named logically, "o3"), their
 * owner references (to other logical objects, or to fixed fake owners) and
 * the steps that create, edit and delete them, kill and restart the
 * collectors, and wait for quiescence. Generated from the seed alone, then
 * executed identically against both clusters (executor.ts).
 *
 * How the generator keeps the reference's end state determined (so a
 * difference is the collector's, not the interleaving's):
 * - steps come in groups, each ending with `settle` (both clusters quiet);
 * - an "up" group (collectors running) acts on distinct connected
 *   components of the ownership graph, one action each, so no action races
 *   a cascade another one started; a kill + restart may fall between two of
 *   its actions (a crash mid-cascade: the end state does not depend on it);
 * - a "down" group kills both collectors, issues any actions (deletes of
 *   every policy, reference edits, recreations, finalizer removals) on any
 *   objects, and restarts them: the apiserver alone decides what happens
 *   while they are down, so both clusters hand the same state to their
 *   restarted collector. Every seed has at least one down group with a
 *   delete in it;
 * - ownership cycles and foreground deletions never meet in one component
 *   (see addRef): there, kube-controller-manager's own outcome depends on
 *   the order it processes the cycle in; nor do foreground deletions and
 *   non-blocking references of objects that have dependents of their own
 *   (see racyForeground), for the same reason.
 * The judge compares the clusters at every settle, not only at the end.
 *
 * Extend the generator whenever a wrongful delete is found by other means,
 * so that a seed would have found it.
 *
 * Widened dimensions (issue 23; GcDimensions), drawn per seed from a stream
 * of their own so that a seed drawing none plans exactly what it planned
 * before:
 * - handEdits: another field manager edits graph objects by hand (the
 *   managed label smith.atlassian.com/managed put on or taken off, other
 *   labels, annotations: `touch`); reference edits always go through the
 *   field manager fuzz-hand.
 * - crdVersions: the seed's mid-run CRD is served at v1alpha1 only, and its
 *   objects and the references to them name v1alpha1; between two groups it
 *   gains v1 as its storage version (objects and references written from
 *   then on name v1), and later stops serving v1alpha1, so earlier
 *   references name a version the server no longer serves.
 * - longNames: about half the objects get names of 253 characters (the
 *   limit of the kinds' names).
 * - rbac (drawn from a stream of its own, so that the other dimensions'
 *   draws stay as they were): our collector loses some of its rights
 *   (rbac.ts) for the steps of one group and gets them back after it;
 *   kube-controller-manager keeps its own. Only wrongful deletes are judged
 *   while they are missing; after, ours must reach the same end.
 */
import { Random } from '../random.js';

/** The widened dimensions a seed drew (see the top of this file). */
export interface GcDimensions {
  handEdits: boolean;
  crdVersions: boolean;
  longNames: boolean;
  /** What our collector loses for one group of steps (rbac.ts). */
  rbac?: GcRevocation;
}

/** What an rbac revocation takes from our collector (rbac.ts collectorRules). */
export type GcRevocation = 'configmaps-delete' | 'configmaps-patch' | 'configmaps-list' | 'crs-list';

export type TouchEdit = 'label-managed' | 'unlabel-managed' | 'label-other' | 'annotate-other';
/** The managed label of bundlesmith (src/api/names.ts Labels.managed): hand edits put it on and take it off. */
export const MANAGED_LABEL = 'smith.atlassian.com/managed';

export type KindName = 'ConfigMap' | 'Secret' | 'Widget' | 'ClusterRole' | 'Realm' | 'Gadget';
export type Policy = 'Background' | 'Foreground' | 'Orphan';

export const TEST_GROUP = 'gc.bundlesmith.test';
/** Every object a seed creates carries it (the snapshot lists by it). */
export const SEED_LABEL = 'gcfuzz.bundlesmith.test/seed';
/** The foreign finalizer: holds an object in deletion until the plan releases it. */
export const HOLD_FINALIZER = 'gcfuzz.bundlesmith.test/hold';

export interface KindInfo {
  apiVersion: string;
  namespaced: boolean;
}

/** Gadget is the CRD created mid-run; its real kind is per seed (Plan.gadget). */
export const KINDS: Record<KindName, KindInfo> = {
  ConfigMap: { apiVersion: 'v1', namespaced: true },
  Secret: { apiVersion: 'v1', namespaced: true },
  Widget: { apiVersion: `${TEST_GROUP}/v1`, namespaced: true },
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
  Realm: { apiVersion: `${TEST_GROUP}/v1`, namespaced: false },
  Gadget: { apiVersion: `${TEST_GROUP}/v1`, namespaced: true },
};

export interface PlanObject {
  id: string;
  kind: KindName;
  /** Which of the seed's two namespaces (namespaced kinds only). */
  ns?: 'a' | 'b';
  /** Created with the foreign finalizer. */
  hold: boolean;
  /** Named with 253 characters (longNames). */
  longName?: boolean;
}

/** An owner that is not one of the plan's objects: never existed, or an unknown kind. */
export interface FakeOwner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

export interface PlanRef {
  /** A logical object (resolved to its current UID in each cluster when written), or a fake owner. */
  owner: { obj: string } | { fake: FakeOwner };
  /** Names a real object but with this UID (which no incarnation of it has). */
  wrongUid?: string;
  blocking?: boolean;
  controller?: boolean;
}

export type Step =
  | { op: 'create'; obj: string; refs: PlanRef[] }
  | { op: 'delete'; obj: string; policy: Policy }
  | { op: 'addRef'; obj: string; ref: PlanRef }
  | { op: 'removeRef'; obj: string; owner: string }
  /** Delete (background) and create again under the same name: a new UID. */
  | { op: 'recreate'; obj: string; refs: PlanRef[] }
  /** Remove the foreign finalizer. */
  | { op: 'release'; obj: string }
  | { op: 'kill' }
  | { op: 'start' }
  | { op: 'installCrd' }
  /** A hand edit of labels or annotations by another field manager. */
  | { op: 'touch'; obj: string; edit: TouchEdit }
  /** The mid-run CRD (crdVersions): gains v1 as its storage version, or stops serving v1alpha1. */
  | { op: 'crdVersion'; stage: 'add-v1' | 'unserve-old' }
  /** Our collector loses `revoke` (or, without it, gets every right back); the reference is untouched. */
  | { op: 'rbac'; revoke?: GcRevocation }
  | { op: 'settle' };

export interface Plan {
  seed: number;
  objects: PlanObject[];
  steps: Step[];
  /** The mid-run CRD's kind and plural, when this seed creates it; versioned: created at v1alpha1 and upgraded (crdVersions). */
  gadget?: { kind: string; plural: string; versioned?: boolean };
  dims?: GcDimensions;
}

export function namespaceName(seed: number, ns: 'a' | 'b'): string {
  return `gcf${seed}-${ns}`;
}

export function objectName(seed: number, o: PlanObject): string {
  const name = KINDS[o.kind].namespaced ? `${o.kind.toLowerCase()}-${o.id}` : `gcf${seed}-${o.kind.toLowerCase()}-${o.id}`;
  if (!o.longName) return name;
  // 253 characters: the name, then labels of the id's letters and digits.
  let long = `${name}.`;
  while (long.length < 253) long += `${o.id}-long-name-`.slice(0, 253 - long.length);
  return long.replace(/[-.]+$/, (tail) => 'x'.repeat(tail.length));
}

function fakeUid(rnd: Random): string {
  const hex = () => rnd.int(0, 0xffff).toString(16).padStart(4, '0');
  return `00000000-0000-4000-8000-${hex()}${hex()}${hex()}`;
}

/** Union-find over logical ids: objects linked by any reference ever written are one component. */
class Components {
  private readonly parent = new Map<string, string>();
  find(x: string): string {
    const p = this.parent.get(x) ?? x;
    if (p === x) return x;
    const root = this.find(p);
    this.parent.set(x, root);
    return root;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }
}

interface Model {
  rnd: Random;
  seed: number;
  objects: PlanObject[];
  steps: Step[];
  /** Objects the plan has not deleted (the collector may have). */
  live: Set<string>;
  held: Set<string>;
  /** Plan references per object (as last written), for edits and recreation. */
  refs: Map<string, PlanRef[]>;
  components: Components;
  /** Objects on an ownership cycle the plan closed. */
  cyclic: Set<string>;
  /** Objects the plan deleted in the foreground. */
  foreground: Set<string>;
  next: number;
  gadget?: { kind: string; plural: string; versioned?: boolean };
  dims: GcDimensions;
  /** The dimensions' own stream: never the plan's. */
  dimRnd: Random;
}

const kindWeights = (m: Model, allowGadget: boolean): [number, KindName][] => [
  [4, 'ConfigMap'],
  [2, 'Secret'],
  [2, 'Widget'],
  [1.5, 'ClusterRole'],
  [1, 'Realm'],
  ...(allowGadget && m.gadget ? ([[4, 'Gadget']] as [number, KindName][]) : []),
];

function newObject(m: Model, allowGadget: boolean): PlanObject {
  const kind = m.rnd.weighted(kindWeights(m, allowGadget));
  const o: PlanObject = {
    id: `o${m.next++}`,
    kind,
    hold: m.rnd.chance(0.2),
    ...(KINDS[kind].namespaced ? { ns: m.rnd.chance(0.8) ? 'a' : 'b' } : {}),
    ...(m.dims.longNames && m.dimRnd.chance(0.5) ? { longName: true } : {}),
  };
  m.objects.push(o);
  return o;
}

function objectRef(m: Model, owner: PlanObject): PlanRef {
  const ref: PlanRef = { owner: { obj: owner.id }, ...flags(m) };
  // Inside a component with a foreground delete, references block (see racyForeground).
  return sameComponent(m, owner.id, m.foreground) ? { ...ref, blocking: true } : ref;
}

function flags(m: Model): { blocking?: boolean; controller?: boolean } {
  const blocking = m.rnd.weighted<boolean | undefined>([
    [3, true],
    [1, false],
    [1, undefined],
  ]);
  return { ...(blocking !== undefined ? { blocking } : {}), ...(m.rnd.chance(0.25) ? { controller: true } : {}) };
}

/** A reference that can never be satisfied (or, for an unknown kind, never decided). */
function fakeRef(m: Model, candidates: PlanObject[]): PlanRef {
  const what = m.rnd.weighted<'missing' | 'missing-cluster' | 'unknown-kind' | 'wrong-uid'>([
    [2, 'missing'],
    [1, 'missing-cluster'],
    [1, 'unknown-kind'],
    [candidates.length > 0 ? 3 : 0, 'wrong-uid'],
  ]);
  const uid = fakeUid(m.rnd);
  if (what === 'wrong-uid') return { owner: { obj: m.rnd.pick(candidates).id }, wrongUid: uid, ...flags(m) };
  const fake: FakeOwner =
    what === 'missing'
      ? { apiVersion: 'v1', kind: 'ConfigMap', name: `never-${m.rnd.token()}`, uid }
      : what === 'missing-cluster'
        ? { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: `gcf${m.seed}-never-${m.rnd.token()}`, uid }
        : { apiVersion: 'unknown.example.com/v1', kind: 'Thing', name: `thing-${m.rnd.token()}`, uid };
  return { owner: { fake }, ...flags(m) };
}

/** At most one controller reference per object (the apiserver refuses two). */
function oneController(refs: PlanRef[]): PlanRef[] {
  let seen = false;
  return refs.map((r) => {
    if (!r.controller) return r;
    if (seen) return { ...r, controller: false };
    seen = true;
    return r;
  });
}

function link(m: Model, obj: string, refs: PlanRef[]): void {
  for (const r of refs) if ('obj' in r.owner) m.components.union(obj, r.owner.obj);
}

/** Creates `size` objects, each owned by 0-2 earlier ones (and sometimes a fake owner); sometimes closes a cycle. */
function graph(m: Model, size: number, allowGadget: boolean, existing: PlanObject[]): void {
  const members: PlanObject[] = [];
  for (let i = 0; i < size; i++) {
    const o = newObject(m, allowGadget);
    const all = [...members, ...existing];
    // A cluster-scoped object naming a namespaced owner is a case of its own
    // (kube-controller-manager leaves it alone, unless it observes a
    // namespaced dependent of it first: judge.ts, invalidNamespaceRaceLeak):
    // drawn, but not so often that it drowns the others.
    const clusterOwners = all.filter((x) => !KINDS[x.kind].namespaced);
    const pool = !KINDS[o.kind].namespaced && clusterOwners.length > 0 && m.rnd.chance(0.7) ? clusterOwners : all;
    const ownerCount =
      pool.length === 0
        ? 0
        : m.rnd.weighted([
            [1, 0],
            [5, 1],
            [2, 2],
          ]);
    const owners = m.rnd.shuffle(pool).slice(0, ownerCount);
    let refs = owners.map((owner) => objectRef(m, owner));
    if (m.rnd.chance(0.15)) refs.push(fakeRef(m, pool));
    refs = oneController(refs);
    m.steps.push({ op: 'create', obj: o.id, refs });
    m.refs.set(o.id, refs);
    link(m, o.id, refs);
    m.live.add(o.id);
    if (o.hold) m.held.add(o.id);
    members.push(o);
  }
  const [first] = members;
  const last = members[members.length - 1];
  // Not onto an object created with no owner that can exist: both collectors
  // delete it at once, and whether that happens before this reference lands
  // is a race in each (kube-controller-manager's outcome would be no reference).
  const realOwner = (id: string) => (m.refs.get(id) ?? []).some((r) => 'obj' in r.owner && !r.wrongUid);
  if (first && last && first !== last && m.rnd.chance(0.2) && realOwner(first.id)) addRef(m, first.id, objectRef(m, last));
}

/** Whether `of` is among `id`'s owners, transitively. */
function ownsTransitively(m: Model, of: string, id: string): boolean {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === undefined || seen.has(next)) continue;
    if (next === of) return true;
    seen.add(next);
    for (const r of m.refs.get(next) ?? []) if ('obj' in r.owner && !r.wrongUid) stack.push(r.owner.obj);
  }
  return false;
}

const sameComponent = (m: Model, id: string, set: Set<string>) => [...set].some((x) => m.components.find(x) === m.components.find(id));

/**
 * Cycles and foreground deletions are kept apart: where a foreground
 * deletion meets a cycle of blocking references, kube-controller-manager's
 * own outcome depends on the order it processes the cycle's objects in (its
 * cycle guard unblocks references of whichever it reaches first), so the
 * reference would not be a reference. A component with a cycle gets no
 * foreground delete, and no cycle is closed in a component with one.
 */
function addRef(m: Model, obj: string, ref: PlanRef): void {
  const closesCycle = 'obj' in ref.owner && !ref.wrongUid && ownsTransitively(m, obj, ref.owner.obj);
  if (closesCycle && sameComponent(m, obj, m.foreground)) return;
  if (closesCycle) m.cyclic.add(obj);
  m.steps.push({ op: 'addRef', obj, ref });
  m.refs.set(obj, oneController([...(m.refs.get(obj) ?? []), ref]));
  link(m, obj, [ref]);
}

/**
 * A foreground deletion whose cascade can reach an object that has
 * dependents of its own through a reference that does not block: whether
 * that object is deleted in the foreground (its owner still waits) or in the
 * background (its owner, not held by it, finished first) depends on which
 * the collector processes first, and so do its dependents' fates. Both are
 * correct; neither collector can be a reference for the other there. Such a
 * component gets no foreground delete, and references into a component that
 * has one always block.
 */
function racyForeground(m: Model, target: string): boolean {
  const root = m.components.find(target);
  const owners = new Set<string>();
  for (const refs of m.refs.values()) for (const r of refs) if ('obj' in r.owner && !r.wrongUid) owners.add(r.owner.obj);
  for (const [id, refs] of m.refs) {
    if (!m.live.has(id) || m.components.find(id) !== root || !owners.has(id)) continue;
    if (refs.some((r) => 'obj' in r.owner && !r.wrongUid && r.blocking !== true)) return true;
  }
  return false;
}

function deleteStep(m: Model, target: string, drawn: Policy): void {
  const policy = drawn === 'Foreground' && (sameComponent(m, target, m.cyclic) || racyForeground(m, target)) ? 'Background' : drawn;
  if (policy === 'Foreground') m.foreground.add(target);
  m.steps.push({ op: 'delete', obj: target, policy });
}

/** One action on `target`; `pool` are the objects an added reference may point to. */
function action(m: Model, target: string, pool: PlanObject[], down: boolean): void {
  const held = m.held.has(target);
  const others = pool.filter((o) => o.id !== target);
  const ownRefs = (m.refs.get(target) ?? []).filter((r) => 'obj' in r.owner && !r.wrongUid);
  const kind = m.rnd.weighted<'delete' | 'addRef' | 'removeRef' | 'recreate' | 'release' | 'createDependent' | 'touch'>([
    [down ? 8 : 5, 'delete'],
    [others.length > 0 ? 2 : 0, 'addRef'],
    [ownRefs.length > 0 ? 1 : 0, 'removeRef'],
    [held ? 0 : 1.5, 'recreate'],
    [held ? 1.5 : 0, 'release'],
    [1.5, 'createDependent'],
    // Last and weight 0 without the dimension: the other draws are unchanged.
    [m.dims.handEdits ? 2 : 0, 'touch'],
  ]);
  switch (kind) {
    case 'touch':
      m.steps.push({
        op: 'touch',
        obj: target,
        edit: m.rnd.weighted<TouchEdit>([
          [2, 'unlabel-managed'],
          [2, 'label-managed'],
          [1, 'label-other'],
          [1, 'annotate-other'],
        ]),
      });
      return;
    case 'delete': {
      deleteStep(
        m,
        target,
        m.rnd.weighted<Policy>([
          [1, 'Background'],
          [1.3, 'Foreground'],
          [1, 'Orphan'],
        ]),
      );
      m.live.delete(target);
      return;
    }
    case 'addRef':
      addRef(m, target, m.rnd.chance(0.1) ? fakeRef(m, others) : objectRef(m, m.rnd.pick(others)));
      return;
    case 'removeRef': {
      const r = m.rnd.pick(ownRefs);
      if (!('obj' in r.owner)) return;
      const owner = r.owner.obj;
      m.steps.push({ op: 'removeRef', obj: target, owner });
      m.refs.set(
        target,
        (m.refs.get(target) ?? []).filter((x) => !('obj' in x.owner) || x.owner.obj !== owner || x.wrongUid),
      );
      return;
    }
    case 'recreate': {
      // Created again with its references as they were planned: to owners'
      // current incarnations, so owners recreated earlier are seen anew.
      const refs = m.refs.get(target) ?? [];
      m.steps.push({ op: 'recreate', obj: target, refs });
      return;
    }
    case 'release':
      m.steps.push({ op: 'release', obj: target });
      m.held.delete(target);
      return;
    case 'createDependent': {
      const targetObj = m.objects.find((o) => o.id === target);
      if (!targetObj) return;
      const o = newObject(m, true);
      const refs = oneController([
        objectRef(m, targetObj),
        ...(others.length > 0 && m.rnd.chance(0.3) ? [objectRef(m, m.rnd.pick(others))] : []),
      ]);
      m.steps.push({ op: 'create', obj: o.id, refs });
      m.refs.set(o.id, refs);
      link(m, o.id, refs);
      m.live.add(o.id);
      if (o.hold) m.held.add(o.id);
      return;
    }
  }
}

function liveObjects(m: Model): PlanObject[] {
  return m.objects.filter((o) => m.live.has(o.id));
}

/** Live objects grouped by component. */
function componentsOf(m: Model): PlanObject[][] {
  const groups = new Map<string, PlanObject[]>();
  for (const o of liveObjects(m)) {
    const root = m.components.find(o.id);
    groups.set(root, [...(groups.get(root) ?? []), o]);
  }
  return [...groups.values()];
}

/** Owners are the interesting targets (cascades, orphaning, foreground waits): picked three times as often as leaves. */
function pickTarget(m: Model, candidates: PlanObject[]): string {
  const owners = new Set<string>();
  for (const refs of m.refs.values()) for (const r of refs) if ('obj' in r.owner && !r.wrongUid) owners.add(r.owner.obj);
  return m.rnd.weighted(candidates.map((o) => [owners.has(o.id) ? 3 : 1, o.id] as const));
}

function upGroup(m: Model): void {
  const components = m.rnd.shuffle(componentsOf(m)).slice(0, m.rnd.int(1, 3));
  const crashAfter = m.rnd.chance(0.3) ? m.rnd.int(0, components.length - 1) : -1;
  components.forEach((members, i) => {
    // Snapshot of the component before the action: an added reference stays inside it.
    action(m, pickTarget(m, members), [...members], false);
    if (i === crashAfter) m.steps.push({ op: 'kill' }, { op: 'start' });
  });
  m.steps.push({ op: 'settle' });
}

function downGroup(m: Model, forceDelete: boolean): void {
  m.steps.push({ op: 'kill' });
  const count = m.rnd.int(1, 3);
  for (let i = 0; i < count; i++) {
    const live = liveObjects(m);
    if (live.length === 0) break;
    const target = pickTarget(m, live);
    if (forceDelete && i === 0) {
      deleteStep(
        m,
        target,
        m.rnd.weighted<Policy>([
          [1, 'Background'],
          [1.5, 'Foreground'],
          [1.5, 'Orphan'],
        ]),
      );
      m.live.delete(target);
    } else {
      action(m, target, m.objects, true);
    }
  }
  m.steps.push({ op: 'start' }, { op: 'settle' });
}

export interface GenerateOptions {
  /** Probability of creating a CRD mid-run (each costs the reference's ~30 s re-discovery). */
  crdChance?: number;
  /** Draw the widened dimensions (GcDimensions); default true. False plans each seed exactly as before. */
  widen?: boolean;
}

export const NO_GC_DIMENSIONS: GcDimensions = { handEdits: false, crdVersions: false, longNames: false };

export function drawGcDimensions(rnd: Random, rbacRnd?: Random): GcDimensions {
  const dims: GcDimensions = { handEdits: rnd.chance(0.5), crdVersions: rnd.chance(0.3), longNames: rnd.chance(0.35) };
  if (rbacRnd?.chance(0.3))
    dims.rbac = rbacRnd.weighted<GcRevocation>([
      [3, 'configmaps-delete'],
      [2, 'configmaps-patch'],
      [2, 'configmaps-list'],
      [2, 'crs-list'],
    ]);
  return dims;
}

/** The rbac dimension's stream (its own, so that adding it left every other draw of a seed as it was). */
function rbacRandom(seed: number): Random {
  return new Random((Math.imul(seed, 2246822519) + 0x5bd) >>> 0);
}

export function generatePlan(seed: number, options: GenerateOptions = {}): Plan {
  const rnd = new Random(seed);
  const dimRnd = new Random((Math.imul(seed, 2654435761) + 0x9c) >>> 0);
  const rbacRnd = rbacRandom(seed);
  const dims = options.widen === false ? NO_GC_DIMENSIONS : drawGcDimensions(dimRnd, rbacRnd);
  const m: Model = {
    rnd,
    seed,
    objects: [],
    steps: [],
    live: new Set(),
    held: new Set(),
    refs: new Map(),
    components: new Components(),
    cyclic: new Set(),
    foreground: new Set(),
    next: 1,
    dims,
    dimRnd,
  };
  // The versioned CRD is the mid-run one, created at v1alpha1.
  const withCrd = rnd.chance(options.crdChance ?? 0.08) || dims.crdVersions;
  const graphs = rnd.int(2, 3);
  for (let g = 0; g < graphs; g++) graph(m, rnd.int(3, 5), false, []);
  m.steps.push({ op: 'settle' });
  if (withCrd) {
    m.gadget = { kind: `Gadget${seed}`, plural: `gadgets${seed}`, ...(dims.crdVersions ? { versioned: true } : {}) };
    m.steps.push({ op: 'installCrd' });
    // Gadgets mixed into a new graph, some owned by earlier objects.
    graph(m, rnd.int(3, 4), true, rnd.shuffle(liveObjects(m)).slice(0, 2));
    m.steps.push({ op: 'settle' });
  }
  const groups = rnd.int(2, 3);
  const downAt = rnd.int(0, groups - 1);
  // The versioned CRD's upgrade, at group boundaries drawn from the dimensions' stream (unserving may come last).
  const addV1At = dims.crdVersions ? dimRnd.int(0, groups - 1) : -1;
  const unserveAt = dims.crdVersions ? dimRnd.int(addV1At + 1, groups) : -1;
  const revokedIn = dims.rbac ? rbacRnd.int(0, groups - 1) : -1;
  for (let g = 0; g <= groups; g++) {
    if (g === addV1At) m.steps.push({ op: 'crdVersion', stage: 'add-v1' }, { op: 'settle' });
    if (g === unserveAt) m.steps.push({ op: 'crdVersion', stage: 'unserve-old' }, { op: 'settle' });
    if (g === groups) break;
    if (g === revokedIn) m.steps.push({ op: 'rbac', ...(dims.rbac ? { revoke: dims.rbac } : {}) });
    if (g === downAt) downGroup(m, true);
    else if (rnd.chance(0.35)) downGroup(m, false);
    else upGroup(m);
    if (g === revokedIn) m.steps.push({ op: 'rbac' }, { op: 'settle' });
  }
  if (m.held.size > 0 && rnd.chance(0.6)) {
    for (const id of m.held) m.steps.push({ op: 'release', obj: id });
    m.held.clear();
    m.steps.push({ op: 'settle' });
  }
  return {
    seed,
    objects: m.objects,
    steps: m.steps,
    ...(m.gadget ? { gadget: m.gadget } : {}),
    ...(options.widen === false ? {} : { dims }),
  };
}

// ---- readable output ---------------------------------------------------------

export function describeObject(plan: Plan, id: string): string {
  const o = plan.objects.find((x) => x.id === id);
  if (!o) return id;
  const kind = o.kind === 'Gadget' && plan.gadget ? plan.gadget.kind : o.kind;
  return `${kind} ${o.ns ? `${namespaceName(plan.seed, o.ns)}/` : ''}${objectName(plan.seed, o)}${o.hold ? ' [hold]' : ''}`;
}

export function describeRef(plan: Plan, r: PlanRef): string {
  const flag = `${r.blocking === true ? ' block' : r.blocking === false ? ' noblock' : ''}${r.controller ? ' controller' : ''}`;
  if ('fake' in r.owner) return `${r.owner.fake.kind} ${r.owner.fake.name} (never exists)${flag}`;
  return `${r.owner.obj}${r.wrongUid ? ' (wrong UID)' : ''}${flag}`;
}

export function describeStep(plan: Plan, s: Step): string {
  switch (s.op) {
    case 'create':
    case 'recreate':
      return `${s.op} ${s.obj} = ${describeObject(plan, s.obj)}${s.refs.length > 0 ? ` owners [${s.refs.map((r) => describeRef(plan, r)).join(', ')}]` : ''}`;
    case 'delete':
      return `delete ${s.obj} ${s.policy.toLowerCase()}`;
    case 'addRef':
      return `edit ${s.obj}: add owner ${describeRef(plan, s.ref)}`;
    case 'removeRef':
      return `edit ${s.obj}: remove owner ${s.owner}`;
    case 'release':
      return `release ${s.obj} (remove ${HOLD_FINALIZER})`;
    case 'kill':
      return 'SIGKILL both collectors';
    case 'start':
      return 'start both collectors';
    case 'installCrd':
      return `create CRD ${plan.gadget?.plural ?? 'gadgets'}.${TEST_GROUP} and wait until both collectors watch it`;
    case 'touch':
      return `by hand (field manager fuzz-hand): ${s.edit === 'label-managed' ? `label ${s.obj} ${MANAGED_LABEL}=true` : s.edit === 'unlabel-managed' ? `remove ${MANAGED_LABEL} from ${s.obj}` : s.edit === 'label-other' ? `label ${s.obj} team.example.com/owner` : `annotate ${s.obj} example.com/last-edited-by`}`;
    case 'crdVersion':
      return s.stage === 'add-v1'
        ? `CRD ${plan.gadget?.plural ?? 'gadgets'}.${TEST_GROUP}: add v1 as the storage version (v1alpha1 still served); objects and references written from now on name v1`
        : `CRD ${plan.gadget?.plural ?? 'gadgets'}.${TEST_GROUP}: stop serving v1alpha1 (earlier references still name it), and wait until both collectors act on v1`;
    case 'rbac':
      return s.revoke ? `our collector loses ${s.revoke} (RBAC; the reference keeps its rights)` : 'our collector gets its rights back';
    case 'settle':
      return 'settle (wait until both clusters are quiet)';
  }
}

/** Ids a step touches (the object acted on and any owner it names). */
export function stepIds(s: Step): string[] {
  switch (s.op) {
    case 'create':
    case 'recreate':
      return [s.obj, ...s.refs.flatMap((r) => ('obj' in r.owner ? [r.owner.obj] : []))];
    case 'addRef':
      return [s.obj, ...('obj' in s.ref.owner ? [s.ref.owner.obj] : [])];
    case 'removeRef':
      return [s.obj, s.owner];
    case 'delete':
    case 'release':
    case 'touch':
      return [s.obj];
    default:
      return [];
  }
}

export function summarize(plan: Plan): string {
  const count = (op: Step['op']) => plan.steps.filter((s) => s.op === op).length;
  const deletes = plan.steps.filter((s): s is Extract<Step, { op: 'delete' }> => s.op === 'delete');
  const byPolicy = (p: Policy) => deletes.filter((d) => d.policy === p).length;
  const d = plan.dims;
  const widened = d
    ? [
        ...(d.handEdits ? [`${count('touch')} hand edits`] : []),
        ...(d.crdVersions ? ['CRD v1alpha1 -> v1, old unserved'] : []),
        ...(d.longNames ? [`${plan.objects.filter((o) => o.longName).length} names of 253 characters`] : []),
        ...(d.rbac ? [`our collector without ${d.rbac} for one group`] : []),
      ]
    : [];
  return `${plan.objects.length} objects, ${plan.steps.length} steps: deletes bg/fg/orphan ${byPolicy('Background')}/${byPolicy('Foreground')}/${byPolicy('Orphan')}, ${count('addRef') + count('removeRef')} ref edits, ${count('recreate')} recreations, ${count('kill')} kills${plan.gadget ? ', CRD mid-run' : ''}${widened.length > 0 ? `, ${widened.join(', ')}` : ''}`;
}
