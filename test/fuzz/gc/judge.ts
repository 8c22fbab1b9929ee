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
 */
import type { KubeObject } from '../../../src/kube/types.js';
import { snapshotKey, type Snapshot } from './executor.js';
import { KINDS, describeObject, describeStep, namespaceName, objectName, stepIds, type Plan } from './plan.js';

export interface ClusterEnd {
  snapshot: Snapshot;
  /** Logical id -> UIDs of its incarnations in that cluster. */
  uids: Map<string, string[]>;
  notes: string[];
}

export type ObjectView = { present: false } | { present: true; incarnation: string; deleting: boolean; finalizers: string[]; owners: string[] };

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

export function viewOf(plan: Plan, id: string, end: ClusterEnd): ObjectView {
  const o = plan.objects.find((x) => x.id === id);
  if (!o) return { present: false };
  const live = end.snapshot.get(snapshotKey(o.kind, o.ns ? namespaceName(plan.seed, o.ns) : undefined, objectName(plan.seed, o)));
  if (!live) return { present: false };
  const names = uidNames(plan, end.uids);
  const inc = (end.uids.get(id) ?? []).indexOf(live.metadata.uid);
  return {
    present: true,
    incarnation: inc < 0 ? '?' : `#${inc + 1}`,
    deleting: live.metadata.deletionTimestamp !== undefined,
    finalizers: [...(live.metadata.finalizers ?? [])].sort(),
    owners: (live.metadata.ownerReferences ?? [])
      .map((r) => `${names.get(r.uid) ?? `${r.kind}:${r.name}(unknown UID)`}${r.blockOwnerDeletion === true ? '+block' : r.blockOwnerDeletion === false ? '-block' : ''}${r.controller ? '+controller' : ''}`)
      .sort(),
  };
}

export function renderView(v: ObjectView): string {
  if (!v.present) return 'absent';
  return `present ${v.incarnation}${v.deleting ? ' being deleted' : ''}${v.finalizers.length > 0 ? ` finalizers [${v.finalizers.join(', ')}]` : ''} owners [${v.owners.join(', ')}]`;
}

/** Whether `obj` sits on a cycle of blocking references among objects all being deleted in `snap`. */
export function onDeletingCycle(snap: Snapshot, obj: KubeObject): boolean {
  const deleting = [...snap.values()].filter((o) => o.metadata.deletionTimestamp);
  const dependentsOf = (uid: string) => deleting.filter((d) => (d.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.blockOwnerDeletion));
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
 * Same finalizers, and ours holds back at least every owner the reference's
 * holds back (blocking references are the only ones through which a
 * being-deleted object keeps anyone waiting).
 */
function holdsAtLeast(ours: Extract<ObjectView, { present: true }>, reference: Extract<ObjectView, { present: true }>): boolean {
  const blocking = (v: Extract<ObjectView, { present: true }>) => v.owners.filter((x) => x.includes('+block'));
  const ourBlocking = new Set(blocking(ours));
  return ours.finalizers.join(',') === reference.finalizers.join(',') && blocking(reference).every((x) => ourBlocking.has(x));
}

export function judge(plan: Plan, ours: ClusterEnd, reference: ClusterEnd): { divergences: Divergence[]; tolerated: string[] } {
  const divergences: Divergence[] = [];
  const tolerated: string[] = [];
  for (const o of plan.objects) {
    const a = viewOf(plan, o.id, ours);
    const r = viewOf(plan, o.id, reference);
    const ra = renderView(a);
    const rr = renderView(r);
    if (ra === rr) continue;
    const what = `${o.id} (${describeObject(plan, o.id)})`;
    if (r.present && !r.deleting && (!a.present || a.deleting)) {
      divergences.push({ id: o.id, wrongfulDelete: true, line: `WRONGFUL DELETE: ${what}: ours ${ra}; the reference kept it: ${rr}` });
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
      const blockers = [...ours.snapshot.entries()].filter(([, d]) => (d.metadata.ownerReferences ?? []).some((ref) => ourUids.has(ref.uid) && ref.blockOwnerDeletion)).map(([key]) => key.replaceAll('|', ' '));
      if (blockers.length > 0) {
        divergences.push({ id: o.id, wrongfulDelete: true, line: `WRONGFUL DELETE: ${what}: ours deleted it while its blocking dependents still exist there (${blockers.join(', ')}); the reference still waits for them: ${rr}` });
        continue;
      }
      divergences.push({ id: o.id, wrongfulDelete: false, line: `${what}: ours finished deleting it; the reference still holds it: ${rr}` });
      continue;
    }
    if (a.present && r.present && a.deleting && r.deleting && a.incarnation === r.incarnation && holdsAtLeast(a, r)) {
      // Both are deleting the same incarnation, and ours holds back every
      // owner the reference's does: its other references change no one's
      // fate. Which of them a collector removed before the delete depends on
      // whether it looked while another owner still existed (seeds 131, 190,
      // 193), in either collector.
      tolerated.push(`${what}: both are deleting it; non-blocking references differ: ours ${ra}; reference ${rr}`);
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
  const squeezed = lines.filter((line, i) => !(line.endsWith('settle (wait until both clusters are quiet)') && lines[i - 1]?.endsWith('settle (wait until both clusters are quiet)')));
  const kinds = [...new Set(plan.objects.filter((o) => related.has(o.id)).map((o) => `${o.id} = ${describeObject(plan, o.id)}${KINDS[o.kind].namespaced ? '' : ' (cluster-scoped)'}`))];
  return [`objects: ${kinds.join('; ')}`, ...squeezed].join('\n');
}
