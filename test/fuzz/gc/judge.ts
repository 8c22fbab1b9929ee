/**
 * The judge: compares the two clusters' end states per logical object.
 *
 * Per object: present or absent; which incarnation (the n-th creation under
 * that name, by UID); being deleted or not; its finalizers; its owner
 * references, each by logical owner and incarnation (fake and wrong-UID
 * owners by their plan names) with their blockOwnerDeletion / controller
 * flags. Any difference is a divergence; the worst, a wrongful delete, is
 * an object the reference keeps (present, no deletionTimestamp) that ours
 * deleted or is deleting, or a foreground owner ours deleted while a
 * dependent blocking on it still exists in ours.
 *
 * One difference is intended and tolerated: our collector breaks a
 * foreground-deletion cycle after a timeout, while the reference may keep
 * the objects of such a cycle in foreground deletion. An object the
 * reference keeps *with* a deletionTimestamp and the `foregroundDeletion`
 * finalizer, on a cycle of blocking references among objects all being
 * deleted there, may be gone in ours. Any other object the reference keeps
 * with a deletionTimestamp (held by a foreign finalizer, or waiting for a
 * held blocking dependent) must be there, being deleted, in ours too.
 *
 * Two differences come from kube-controller-manager's own processing order
 * and are tolerated, narrowly:
 * - An object both are deleting may differ in references that keep no
 *   existing owner waiting (holdsAtLeast): which ones a collector removed
 *   before deleting it depends on whether it looked while another owner
 *   was still there. Every blocking reference of the reference's that
 *   resolves to an existing owner must be in ours.
 * - The start-up class (startUpClass; seeds 213, 313). A collector queues
 *   an owner's dependents when it sees the owner go into foreground
 *   deletion (upstream's processTransitions). One that starts while the
 *   owner already waits sees that at the owner's first add, and queues only
 *   the dependents already in its graph, and the order its informers hand
 *   the objects over is not fixed (a shared informer that has already
 *   listed replays its store in map order; seed 313 saw both outcomes on
 *   one plan), so which those are is chance. Blocking
 *   dependents are queued again by processDeletingDependentsItem; the
 *   non-blocking ones are not: upstream deletes such a dependent after a
 *   restart only if it came before its owner. Ours queues them all once its
 *   graph is complete (core/gc/builder.ts, foregroundWaitsAtStart), as
 *   upstream does when it was running at the transition. So an object ours
 *   deleted and the reference kept is tolerated when it had a non-blocking
 *   reference to a waiting owner at a collector start and every owner it
 *   has in the reference still waits in foreground deletion (none solid:
 *   upstream deletes it whenever it attempts it), and so is an object whose
 *   every owner in the reference is waiting or in this class (it is kept
 *   there only by an owner ours rightly collected). In both, no owner of it
 *   may be in ours, not being deleted. Likewise an object both keep (it has
 *   a solid owner) whose only difference is that ours removed its
 *   non-blocking references to such waiting owners (startUpRefsOnly), as
 *   upstream does when it attempts it (also when the reference has finished
 *   that owner's wait since, another finalizer keeping it: seed 6000). The reverse (ours kept, the
 *   reference deleted) is not tolerated: ours attempts every such
 *   dependent, so keeping one is a difference of ours.
 *   A dependent recorded at the start is also tolerated when its owner did
 *   wait there and the reference has finished that wait since (no blocking
 *   dependent; another finalizer keeps the owner: seeds 11425, 15336).
 *   Upstream queues the owner and the dependents in its graph together
 *   (processTransitions); processDeletingDependentsItem removes the
 *   owner's `foregroundDeletion` finalizer while another worker's
 *   attemptToDeleteItem classifies the dependent by a live GET of the
 *   owner: still waiting, the dependent is deleted (no solid owner); after,
 *   the owner is solid (being deleted without `foregroundDeletion`) and the
 *   dependent kept. Not extended to what follows from such a dependent.
 * - The orphan race (orphanRaceLeak; seeds 15352, 20104): an object
 *   referring at a start to an owner orphaning it and to one waiting in
 *   foreground deletion or gone, kept by ours with no reference left
 *   (or only to such an object) where the reference deleted it: upstream's own order, a leak, never a delete.
 */
import type { KubeObject } from '../../../src/kube/types.js';
import { snapshotKey, type Snapshot } from './executor.js';
import { KINDS, describeObject, describeStep, namespaceName, objectName, stepIds, type Plan } from './plan.js';

export interface ClusterEnd {
  snapshot: Snapshot;
  /** Logical id -> UIDs of its incarnations in that cluster. */
  uids: Map<string, string[]>;
  notes: string[];
  /** UIDs the executor recorded at collector (re)starts (PlanExecutor.foregroundDependentsAtStart); none when absent. */
  foregroundDependentsAtStart?: ReadonlySet<string>;
  /** UIDs of the owners waiting in foreground deletion at those starts (PlanExecutor.foregroundOwnersAtStart). */
  foregroundOwnersAtStart?: ReadonlySet<string>;
  /** UIDs of objects that at those starts referred both to an owner orphaning its dependents and to one waiting in foreground deletion (PlanExecutor.orphanRaceDependentsAtStart). */
  orphanRaceDependentsAtStart?: ReadonlySet<string>;
}

export type ObjectView =
  { present: false } | { present: true; incarnation: string; deleting: boolean; finalizers: string[]; owners: string[] };

export interface Divergence {
  id: string;
  wrongfulDelete: boolean;
  line: string;
}

function uidNames(plan: Plan, uids: Map<string, string[]>): Map<string, string> {
  const names = new Map<string, string>();
  for (const [id, list] of uids) list.forEach((uid, i) => names.set(uid, `${id}#${i + 1}`));
  for (const step of plan.steps) {
    const refs = step.op === 'create' || step.op === 'recreate' ? step.refs : step.op === 'addRef' ? [step.ref] : [];
    for (const r of refs) {
      if ('fake' in r.owner) names.set(r.owner.fake.uid, `${r.owner.fake.kind}:${r.owner.fake.name}(never exists)`);
      else if (r.wrongUid) names.set(r.wrongUid, `${r.owner.obj}(wrong UID)`);
    }
  }
  return names;
}

function renderRef(names: Map<string, string>, r: NonNullable<KubeObject['metadata']['ownerReferences']>[number]): string {
  return `${names.get(r.uid) ?? `${r.kind}:${r.name}(unknown UID)`}${r.blockOwnerDeletion === true ? '+block' : r.blockOwnerDeletion === false ? '-block' : ''}${r.controller ? '+controller' : ''}`;
}

/** The live object of a logical id in one cluster, if any. */
export function liveOf(plan: Plan, id: string, end: ClusterEnd): KubeObject | undefined {
  const o = plan.objects.find((x) => x.id === id);
  if (!o) return undefined;
  return end.snapshot.get(snapshotKey(o.kind, o.ns ? namespaceName(plan.seed, o.ns) : undefined, objectName(plan.seed, o)));
}

export function viewOf(plan: Plan, id: string, end: ClusterEnd): ObjectView {
  const live = liveOf(plan, id, end);
  if (!live) return { present: false };
  const names = uidNames(plan, end.uids);
  const inc = (end.uids.get(id) ?? []).indexOf(live.metadata.uid);
  return {
    present: true,
    incarnation: inc < 0 ? '?' : `#${inc + 1}`,
    deleting: live.metadata.deletionTimestamp !== undefined,
    finalizers: [...(live.metadata.finalizers ?? [])].sort(),
    owners: (live.metadata.ownerReferences ?? []).map((r) => renderRef(names, r)).sort(),
  };
}

export function renderView(v: ObjectView): string {
  if (!v.present) return 'absent';
  return `present ${v.incarnation}${v.deleting ? ' being deleted' : ''}${v.finalizers.length > 0 ? ` finalizers [${v.finalizers.join(', ')}]` : ''} owners [${v.owners.join(', ')}]`;
}

/** Whether `obj` sits on a cycle of blocking references among objects all being deleted in `snap`. */
export function onDeletingCycle(snap: Snapshot, obj: KubeObject): boolean {
  const deleting = [...snap.values()].filter((o) => o.metadata.deletionTimestamp);
  const dependentsOf = (uid: string) =>
    deleting.filter((d) => (d.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion));
  const seen = new Set<string>();
  const stack = dependentsOf(obj.metadata.uid);
  while (stack.length > 0) {
    const next = stack.pop();
    if (!next || seen.has(next.metadata.uid)) continue;
    if (next.metadata.uid === obj.metadata.uid) return true;
    seen.add(next.metadata.uid);
    stack.push(...dependentsOf(next.metadata.uid));
  }
  return false;
}

/**
 * The blocking references of `live` (rendered as in its view) that name an
 * object of `snap` its owner can be: the same UID, cluster-scoped or in
 * `live`'s namespace. The others are dangling by upstream's classification
 * (isDangling looks the owner up by the reference's coordinates in the
 * dependent's namespace): an owner that never existed, a wrong UID, an
 * owner gone, a namespaced owner in another namespace.
 */
export function resolvingBlockingRefs(plan: Plan, end: ClusterEnd, live: KubeObject): Set<string> {
  const names = uidNames(plan, end.uids);
  const byUid = new Map([...end.snapshot.values()].map((o) => [o.metadata.uid, o]));
  const out = new Set<string>();
  for (const r of live.metadata.ownerReferences ?? []) {
    if (r.blockOwnerDeletion !== true) continue;
    const owner = byUid.get(r.uid);
    if (owner && (!owner.metadata.namespace || owner.metadata.namespace === live.metadata.namespace)) out.add(renderRef(names, r));
  }
  return out;
}

/**
 * Same finalizers, and ours has every blocking reference of the reference's
 * that resolves (resolvingBlockingRefs). Only a blocking reference keeps an
 * owner waiting on a being-deleted object, and only while the owner's UID
 * exists: a reference to a UID nothing has (never existed, wrong UID, gone)
 * holds no one. A namespaced owner named from another namespace is the one
 * dangling reference that upstream's graph still links by UID
 * (blockingDependents compares UIDs only; so does ours), so it would hold
 * that owner in a foreground deletion; it is not required here all the same,
 * because whether it is still there is decided by timing in
 * kube-controller-manager too: attemptToDeleteItem removes dangling
 * references only from an object it classifies while it still has a solid
 * owner, and deletes it with them otherwise (seed 190: whether the object
 * was looked at before its other owner, itself collected, went). If such an
 * owner is ever deleted in the foreground, its own end state is compared
 * like any other, so an early finish shows there.
 */
function holdsAtLeast(
  ours: Extract<ObjectView, { present: true }>,
  reference: Extract<ObjectView, { present: true }>,
  referenceResolving: ReadonlySet<string>,
): boolean {
  const ourBlocking = new Set(ours.owners.filter((x) => x.includes('+block')));
  return ours.finalizers.join(',') === reference.finalizers.join(',') && [...referenceResolving].every((x) => ourBlocking.has(x));
}

/**
 * The start-up class on an object both keep: ours removed its non-blocking
 * references to owners waiting in foreground deletion (or that waited at a
 * collector start and are still being deleted), as upstream's
 * attemptToDeleteItem does to an object with a solid owner, where the
 * reference has not attempted it. Same incarnation, same finalizers, ours'
 * references exactly the reference's minus those.
 */
function startUpRefsOnly(plan: Plan, ours: ClusterEnd, reference: ClusterEnd, ourLive: KubeObject, refLive: KubeObject): boolean {
  if (!(reference.foregroundDependentsAtStart ?? new Set<string>()).has(refLive.metadata.uid)) return false;
  const ourNames = uidNames(plan, ours.uids);
  const refNames = uidNames(plan, reference.uids);
  const byUid = new Map([...reference.snapshot.values()].map((o) => [o.metadata.uid, o]));
  const ourRefs = new Set((ourLive.metadata.ownerReferences ?? []).map((r) => renderRef(ourNames, r)));
  const refRefs = refLive.metadata.ownerReferences ?? [];
  const refRendered = new Set(refRefs.map((r) => renderRef(refNames, r)));
  if ([...ourRefs].some((x) => !refRendered.has(x))) return false;
  const missing = refRefs.filter((r) => !ourRefs.has(renderRef(refNames, r)));
  return (
    missing.length > 0 &&
    missing.every((r) => {
      const owner = byUid.get(r.uid);
      return r.blockOwnerDeletion !== true && owner !== undefined && (waitsInForeground(owner) || waitedAtStart(reference, owner));
    })
  );
}

/**
 * An owner still being deleted that waited in foreground deletion at a
 * collector start, and whose wait the reference has since finished (no
 * blocking dependent; another finalizer keeps it): seed 6000. Upstream
 * removes a non-blocking reference to it only while it waits, so whether
 * the reference did depends on whether it attempted the dependent first.
 */
function waitedAtStart(reference: ClusterEnd, owner: KubeObject): boolean {
  return owner.metadata.deletionTimestamp !== undefined && (reference.foregroundOwnersAtStart ?? new Set<string>()).has(owner.metadata.uid);
}

/**
 * Seed 15352 (a leak, tolerated): at a collector start the object had a
 * reference to an owner being deleted with the `orphan` finalizer and one
 * to an owner that is not solid: waiting in foreground deletion (15352) or
 * gone (20104: deleted while the collector was down). Upstream's
 * classifyReferences counts the orphaning owner as solid (only
 * deletionTimestamp plus `foregroundDeletion` makes an owner waiting), so
 * attemptToDeleteItem, when it attempts the object before the orphan worker
 * has removed that owner's reference, removes the other reference (its
 * `len(solid) != 0` branch) and keeps it; the orphan then removes the
 * orphaning owner's reference, and the object stays with none. Attempted
 * after the orphan, it has only the unsolid owner and is deleted. Both
 * workers are queued at the start, so either order is
 * kube-controller-manager's. Tolerated only as that end: ours kept the same
 * incarnation, not being deleted, with no reference left (a third, solid
 * owner keeps it in both orders and must still be there); or, following from
 * it, ours kept an object every remaining reference of which names such a
 * kept object (seed 20104: a dependent of the leaked one, which the
 * reference collected after it).
 */
function orphanRaceLeak(plan: Plan, ours: ClusterEnd, id: string, visiting = new Set<string>()): boolean {
  const live = liveOf(plan, id, ours);
  if (!live || live.metadata.deletionTimestamp || visiting.has(id)) return false;
  const refs = live.metadata.ownerReferences ?? [];
  if (refs.length === 0) return (ours.orphanRaceDependentsAtStart ?? new Set<string>()).has(live.metadata.uid);
  visiting.add(id);
  const idOf = (uid: string) => [...ours.uids].find(([, uids]) => uids.includes(uid))?.[0];
  return refs.every((r) => {
    const ownerId = idOf(r.uid);
    return ownerId !== undefined && liveOf(plan, ownerId, ours)?.metadata.uid === r.uid && orphanRaceLeak(plan, ours, ownerId, visiting);
  });
}

/**
 * Seeds 21300 and 21909 (a leak, tolerated): a cluster-scoped object naming
 * a namespaced owner (an invalid reference). kube-controller-manager forgets
 * it when it observes the object first; when it observes a namespaced
 * dependent of it (in namespace N) first, the virtual node it makes for the
 * object carries N, and attemptToDeleteItem, run on that node, looks the
 * object's namespaced owners up in N (isDangling's guard fires only for
 * namespace ''): absent there and no other solid owner, it deletes the
 * object, and its dependents follow. Which is observed first is watch order.
 * Ours always leaves it alone (docs/safety.md). Tolerated only as that end:
 * ours kept the same object, not being deleted, with a reference to a
 * namespaced owner, none to a cluster-scoped owner still there, and a
 * namespaced dependent in a namespace where no owner it names is; or,
 * following from it, ours kept an object every reference of which names an
 * object so kept; and the reference collected each of them.
 */
function invalidNamespaceRaceLeak(plan: Plan, ours: ClusterEnd, reference: ClusterEnd, id: string, visiting = new Set<string>()): boolean {
  const live = liveOf(plan, id, ours);
  if (!live || live.metadata.deletionTimestamp || visiting.has(id)) return false;
  // Only what the reference collected (absent, or being deleted) can be this leak, the owners it follows from included.
  const inReference = viewOf(plan, id, reference);
  if (inReference.present && !inReference.deleting) return false;
  visiting.add(id);
  const refs = live.metadata.ownerReferences ?? [];
  const idOf = (uid: string) => [...ours.uids].find(([, uids]) => uids.includes(uid))?.[0];
  const owners = refs.map((r) => {
    const ownerId = idOf(r.uid);
    const planned = plan.objects.find((x) => x.id === ownerId);
    const ownerLive = ownerId === undefined ? undefined : liveOf(plan, ownerId, ours);
    return { planned, live: ownerLive?.metadata.uid === r.uid ? ownerLive : undefined, ownerId };
  });
  const self = plan.objects.find((x) => x.id === id);
  if (self && !KINDS[self.kind].namespaced) {
    const namespacedOwners = owners.filter((w) => w.planned !== undefined && KINDS[w.planned.kind].namespaced);
    const clusterOwnerThere = owners.some((w) => w.planned !== undefined && !KINDS[w.planned.kind].namespaced && w.live !== undefined);
    const ownerNamespaces = new Set(namespacedOwners.map((w) => (w.planned?.ns ? namespaceName(plan.seed, w.planned.ns) : '')));
    const dependentElsewhere = [...ours.snapshot.values()].some(
      (d) =>
        d.metadata.namespace !== undefined &&
        !ownerNamespaces.has(d.metadata.namespace) &&
        (d.metadata.ownerReferences ?? []).some((r) => r.uid === live.metadata.uid),
    );
    if (namespacedOwners.length > 0 && !clusterOwnerThere && dependentElsewhere) return true;
  }
  return (
    refs.length > 0 &&
    owners.every(
      (w) => w.ownerId !== undefined && w.live !== undefined && invalidNamespaceRaceLeak(plan, ours, reference, w.ownerId, visiting),
    )
  );
}

function waitsInForeground(o: KubeObject): boolean {
  return o.metadata.deletionTimestamp !== undefined && (o.metadata.finalizers ?? []).includes('foregroundDeletion');
}

/**
 * The start-up class (see the module comment): logical id -> why it is
 * tolerated. An object qualifies when ours deleted it (absent, or being
 * deleted) and the reference keeps it (present, not being deleted), and
 * - start-up: when the collectors (re)started it had a non-blocking
 *   reference to an owner waiting in foreground deletion, and every owner
 *   it has in the reference still waits in foreground deletion there (so
 *   no owner is solid: upstream deletes it whenever it attempts it); or
 * - follows: every owner it has in the reference either waits there in
 *   foreground deletion or is itself in this class (present in the
 *   reference, deleted in ours), at least one of them in this class;
 * and, both ways, none of those owners is still there, not being deleted,
 * in ours (where ours would have had a solid owner).
 */
export function startUpClass(plan: Plan, ours: ClusterEnd, reference: ClusterEnd): Map<string, string> {
  const atStart = reference.foregroundDependentsAtStart ?? new Set<string>();
  const refIdOf = new Map<string, string>();
  for (const [id, list] of reference.uids) for (const uid of list) refIdOf.set(uid, id);
  const byUid = new Map([...reference.snapshot.values()].map((o) => [o.metadata.uid, o]));
  const candidates = new Map<string, KubeObject>();
  for (const o of plan.objects) {
    const live = liveOf(plan, o.id, reference);
    const a = viewOf(plan, o.id, ours);
    if (!live || live.metadata.deletionTimestamp || (a.present && !a.deleting)) continue;
    if ((live.metadata.ownerReferences ?? []).length === 0) continue;
    candidates.set(o.id, live);
  }
  const tolerated = new Map<string, string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const [id, live] of candidates) {
      if (tolerated.has(id)) continue;
      let viaTolerated: string | undefined;
      let ok = true;
      let viaFinishedWait = false;
      for (const r of live.metadata.ownerReferences ?? []) {
        const owner = byUid.get(r.uid);
        const ownerId = refIdOf.get(r.uid);
        const ourOwner = ownerId === undefined ? undefined : viewOf(plan, ownerId, ours);
        if (!owner || ownerId === undefined || !ourOwner || (ourOwner.present && !ourOwner.deleting)) ok = false;
        else if (waitsInForeground(owner)) continue;
        else if (atStart.has(live.metadata.uid) && waitedAtStart(reference, owner)) {
          // Seeds 11425, 15336: the reference finished this owner's wait (no blocking dependent; another
          // finalizer keeps it) before it attempted the dependent, and then holds it as a solid owner. Queued
          // together at the start, it deletes the dependent when it attempts it first (see finishedWaitAtStart).
          viaFinishedWait = true;
          continue;
        } else if (tolerated.has(ownerId)) viaTolerated = ownerId;
        else ok = false;
        if (!ok) break;
      }
      if (!ok) continue;
      if (viaTolerated !== undefined && !viaFinishedWait) tolerated.set(id, `follows from ${viaTolerated}`);
      else if (atStart.has(live.metadata.uid) && viaTolerated === undefined)
        tolerated.set(id, viaFinishedWait ? 'start-up, wait finished' : 'start-up');
      else continue;
      changed = true;
    }
  }
  return tolerated;
}

/**
 * kube-controller-manager keeps a node at the version its informer first
 * saw the object at; once that version is no longer served it cannot
 * resolve the node, and never deletes the object until it restarts
 * (kubernetes/kubernetes#102641). Ours follows the served version. An
 * object of the upgraded kind that the reference still holds after the old
 * version stopped being served, every owner of which is gone there, is one
 * kube-controller-manager cannot act on, not one it decided to keep.
 */
function stuckAtUnservedVersion(
  plan: Plan,
  o: Plan['objects'][number],
  ours: ClusterEnd,
  reference: ClusterEnd,
  oldUnserved: boolean,
): boolean {
  if (!oldUnserved || o.kind !== 'Gadget' || plan.gadget?.versioned !== true) return false;
  const live = reference.snapshot.get(snapshotKey(o.kind, o.ns ? namespaceName(plan.seed, o.ns) : undefined, objectName(plan.seed, o)));
  const refs = live?.metadata.ownerReferences ?? [];
  if (live === undefined || refs.length === 0) return false;
  const presentIn = (c: ClusterEnd) => new Set([...c.snapshot.values()].map((x) => x.metadata.uid));
  const inReference = presentIn(reference);
  if (refs.some((ref) => inReference.has(ref.uid))) return false;
  // Every owner gone in ours too (an owner of ours still there would make ours' delete wrongful, whatever the reference).
  const inOurs = presentIn(ours);
  const ownerIds = [...reference.uids].filter(([, uids]) => refs.some((ref) => uids.includes(ref.uid))).map(([id]) => id);
  return ownerIds.every((id) => (ours.uids.get(id) ?? []).every((uid) => !inOurs.has(uid)));
}

export function judge(
  plan: Plan,
  ours: ClusterEnd,
  reference: ClusterEnd,
  opts: { oldVersionUnserved?: boolean } = {},
): { divergences: Divergence[]; tolerated: string[] } {
  const divergences: Divergence[] = [];
  const tolerated: string[] = [];
  const startUp = startUpClass(plan, ours, reference);
  for (const o of plan.objects) {
    const a = viewOf(plan, o.id, ours);
    const r = viewOf(plan, o.id, reference);
    const ra = renderView(a);
    const rr = renderView(r);
    if (ra === rr) continue;
    const what = `${o.id} (${describeObject(plan, o.id)})`;
    if (r.present && !r.deleting && !a.present && stuckAtUnservedVersion(plan, o, ours, reference, opts.oldVersionUnserved === true)) {
      tolerated.push(
        `${what}: ours collected it (every owner gone); the reference cannot resolve the version it first saw it at, no longer served (kubernetes/kubernetes#102641): ours ${ra}; reference ${rr}`,
      );
      continue;
    }
    if (r.present && !r.deleting && (!a.present || a.deleting)) {
      const why = startUp.get(o.id);
      if (why !== undefined) {
        const how =
          why === 'start-up'
            ? 'the reference has not attempted it (a dependent of an owner already waiting in foreground deletion at a collector start)'
            : why === 'start-up, wait finished'
              ? 'the reference finished the wait of its owner (waiting in foreground deletion at a collector start) before attempting it'
              : `the reference has not attempted it (${why})`;
        tolerated.push(`${what}: ours collected it, ${how}: ours ${ra}; reference ${rr}`);
        continue;
      }
      divergences.push({ id: o.id, wrongfulDelete: true, line: `WRONGFUL DELETE: ${what}: ours ${ra}; the reference kept it: ${rr}` });
      continue;
    }
    if (a.present && !a.deleting && (!r.present || r.deleting) && orphanRaceLeak(plan, ours, o.id)) {
      tolerated.push(
        `${what}: ours kept it with no reference left or only references to an object so kept, the reference collected it (an owner orphaning it and one waiting in foreground deletion or gone at a collector start, or an owner so kept: which finished first is order, in kube-controller-manager too): ours ${ra}; reference ${rr}`,
      );
      continue;
    }
    if (a.present && !a.deleting && (!r.present || r.deleting) && invalidNamespaceRaceLeak(plan, ours, reference, o.id)) {
      tolerated.push(
        `${what}: ours left alone a cluster-scoped object naming a namespaced owner (or kept an object naming only such objects); the reference collected it, having observed a namespaced dependent of it first (watch order, in kube-controller-manager too): ours ${ra}; reference ${rr}`,
      );
      continue;
    }
    if (r.present && r.deleting && !a.present) {
      const live = reference.snapshot.get(snapshotKey(o.kind, o.ns ? namespaceName(plan.seed, o.ns) : undefined, objectName(plan.seed, o)));
      if (live && r.finalizers.includes('foregroundDeletion') && onDeletingCycle(reference.snapshot, live)) {
        tolerated.push(`${what}: ours broke the foreground cycle; the reference still waits: ${rr}`);
        continue;
      }
      // A foreground owner gone from ours while ours still has a dependent blocking on it: deleted too early.
      const ourUids = new Set(ours.uids.get(o.id) ?? []);
      const blockers = [...ours.snapshot.entries()]
        .filter(([, d]) => (d.metadata.ownerReferences ?? []).some((ref) => ourUids.has(ref.uid) && ref.blockOwnerDeletion))
        .map(([key]) => key.replaceAll('|', ' '));
      if (blockers.length > 0) {
        divergences.push({
          id: o.id,
          wrongfulDelete: true,
          line: `WRONGFUL DELETE: ${what}: ours deleted it while its blocking dependents still exist there (${blockers.join(', ')}); the reference still waits for them: ${rr}`,
        });
        continue;
      }
      // The reference waits only for dependents that name this namespaced owner from another namespace: their
      // blocking reference resolves to nothing there (it holds the owner only by UID in the graph), and whether a
      // collector had removed it while another owner stood is timing, in kube-controller-manager too (seed 483).
      // Ours has no dependent blocking on it (checked above), so nothing was deleted out of order.
      const refUids = new Set(reference.uids.get(o.id) ?? []);
      const ownerNamespace = live?.metadata.namespace;
      const refBlockers = [...reference.snapshot.values()].filter((d) =>
        (d.metadata.ownerReferences ?? []).some((ref) => refUids.has(ref.uid) && ref.blockOwnerDeletion),
      );
      if (
        live &&
        ownerNamespace !== undefined &&
        r.finalizers.includes('foregroundDeletion') &&
        refBlockers.length > 0 &&
        refBlockers.every((d) => d.metadata.namespace !== ownerNamespace)
      ) {
        tolerated.push(
          `${what}: ours finished its foreground deletion; the reference still waits only for dependents naming it from another namespace: ${rr}`,
        );
        continue;
      }
      divergences.push({
        id: o.id,
        wrongfulDelete: false,
        line: `${what}: ours finished deleting it; the reference still holds it: ${rr}`,
      });
      continue;
    }
    const refLive = liveOf(plan, o.id, reference);
    if (
      a.present &&
      r.present &&
      refLive &&
      a.deleting &&
      r.deleting &&
      a.incarnation === r.incarnation &&
      holdsAtLeast(a, r, resolvingBlockingRefs(plan, reference, refLive))
    ) {
      // Both are deleting the same incarnation, and ours holds back every
      // owner the reference's does: its other references change no one's
      // fate. Which of them a collector removed before the delete depends on
      // whether it looked while another owner still existed (seeds 131, 190,
      // 193), in either collector.
      tolerated.push(`${what}: both are deleting it; references that hold no existing owner differ: ours ${ra}; reference ${rr}`);
      continue;
    }
    const ourLive = liveOf(plan, o.id, ours);
    if (
      a.present &&
      r.present &&
      ourLive &&
      refLive &&
      !a.deleting &&
      !r.deleting &&
      a.incarnation === r.incarnation &&
      a.finalizers.join(',') === r.finalizers.join(',') &&
      startUpRefsOnly(plan, ours, reference, ourLive, refLive)
    ) {
      tolerated.push(
        `${what}: ours removed its non-blocking references to owners waiting in foreground deletion since before a collector start, the reference has not attempted it: ours ${ra}; reference ${rr}`,
      );
      continue;
    }
    divergences.push({ id: o.id, wrongfulDelete: false, line: `${what}: ours ${ra}; reference ${rr}` });
  }
  // Wrongful deletes first: they are what a reader must see.
  divergences.sort((x, y) => Number(y.wrongfulDelete) - Number(x.wrongfulDelete));
  return { divergences, tolerated };
}

/**
 * The plan's steps that touch the diverging objects, their owners and their
 * dependents, with every kill / start / settle / CRD step kept for timing
 * context, up to the step after which the last of them diverged; numbered
 * as in the full plan.
 */
/** The objects, their owners and their dependents, as the plan wrote references. */
export function relatedIds(plan: Plan, ids: string[]): string[] {
  const related = new Set(ids);
  for (const s of plan.steps) {
    const touched = stepIds(s);
    const [subject, ...owners] = touched;
    if (subject === undefined) continue;
    if (ids.includes(subject)) for (const owner of owners) related.add(owner);
    if (owners.some((owner) => ids.includes(owner))) related.add(subject);
  }
  return [...related];
}

/** Both clusters' views of these objects, one line each (for the replay: the state at the divergence). */
export function describeStates(plan: Plan, ids: string[], ours: ClusterEnd, reference: ClusterEnd): string[] {
  return ids.map((id) => `${id}: ours ${renderView(viewOf(plan, id, ours))} | reference ${renderView(viewOf(plan, id, reference))}`);
}

export function replay(plan: Plan, ids: string[], throughStep = plan.steps.length): string {
  const related = new Set(relatedIds(plan, ids));
  const lines: string[] = [];
  plan.steps.slice(0, throughStep).forEach((s, i) => {
    const touched = stepIds(s);
    if (touched.length === 0 || touched.some((id) => related.has(id))) lines.push(`${String(i + 1).padStart(3)}. ${describeStep(plan, s)}`);
  });
  // Consecutive settles (and kill/start pairs around nothing relevant) say little: squeeze them.
  const squeezed = lines.filter(
    (line, i) =>
      !(
        line.endsWith('settle (wait until both clusters are quiet)') &&
        lines[i - 1]?.endsWith('settle (wait until both clusters are quiet)')
      ),
  );
  const kinds = [
    ...new Set(
      plan.objects
        .filter((o) => related.has(o.id))
        .map((o) => `${o.id} = ${describeObject(plan, o.id)}${KINDS[o.kind].namespaced ? '' : ' (cluster-scoped)'}`),
    ),
  ];
  return [`objects: ${kinds.join('; ')}`, ...squeezed].join('\n');
}
