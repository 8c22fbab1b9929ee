/**
 * Drift controls (issue 27): per object, `smith.atlassian.com/apply`
 * (Always, IfNotPresent), `smith.atlassian.com/ignore` (JSON pointers) and
 * `smith.atlassian.com/drift` (Correct, Warn), over the Bundle's
 * spec.driftDefaults. This module: which live fields have drifted, the
 * bookkeeping patch an object that is not applied still gets, and the
 * decision between the two. What the controls read is in drift-controls.ts,
 * which fields the operator applies in drift-ignore.ts. Pure.
 *
 * The line drawn: the user's fields are what these controls hold back. The
 * operator's bookkeeping is not the user's to hold back, because soft-delete
 * safety rests on it: the controller reference (without it the object is
 * not the Bundle's and is never pruned, or is collected with a sibling), the
 * dependency references and their record, the managed label (the caches
 * select on it) and the smith.atlassian.com annotations (deletion rules and
 * their sealed proof, which the deletion guard and the sweeper read on the
 * object). The take-holds (take-holds.ts) and the prune's stamps are written as
 * before, whatever the controls say.
 */
import { Annotations, GROUP, Labels } from '../../api/names.js';
import type { KubeObjectManifest } from '../../api/resource.js';
import { isRecord, jsonPointerSegment, type JsonPatchOperation, type LiveObject } from './objects.js';
import { recordedDependencyUids } from './owner-references.js';
import type { DriftControls } from './drift-controls.js';

/** Fields of a drift report at most: the condition and the event name this many, then say how many more. */
export const MAX_DRIFTED_NAMED = 10;

/**
 * The JSON pointers of the manifest's fields whose live value differs,
 * compared as needsApply does (desired.ts): a field the manifest does not
 * set is not drift, a list is compared whole by length and then element by
 * element. The operator's bookkeeping (ownerReferences, its label and
 * annotations) is not the user's content: not drift (bookkeepingPatch
 * restores it).
 */
export function driftedFields(desired: KubeObjectManifest, live: LiveObject, limit = 100): string[] {
  const out: string[] = [];
  const walk = (want: unknown, have: unknown, path: readonly string[]): void => {
    if (out.length >= limit) return;
    if (isBookkeeping(path)) return;
    if (
      have === undefined &&
      (want === null || (Array.isArray(want) && want.length === 0) || (isRecord(want) && Object.values(want).every((v) => v === undefined)))
    )
      return;
    if (Array.isArray(want)) {
      if (!Array.isArray(have) || have.length !== want.length) out.push(pointerOf(path));
      else want.forEach((item, i) => walk(item, have[i], [...path, String(i)]));
      return;
    }
    if (isRecord(want)) {
      if (!isRecord(have)) {
        out.push(pointerOf(path));
        return;
      }
      for (const [key, value] of Object.entries(want)) if (value !== undefined) walk(value, have[key], [...path, key]);
      return;
    }
    if (want !== have) out.push(pointerOf(path));
  };
  walk(desired, live, []);
  return out;
}

/**
 * Labels the operator writes on every object it holds: its managed label
 * and, where objects are members of their Bundle's kubectl ApplySet, the
 * applyset.kubernetes.io/ labels (the membership follows the Bundle that
 * holds the object, so an object not re-applied gets them too).
 */
function isOperatorLabel(key: string): boolean {
  return key === Labels.managed || key.startsWith('applyset.kubernetes.io/');
}

function isBookkeeping(path: readonly string[]): boolean {
  if (path[0] !== 'metadata') return false;
  if (path[1] === 'ownerReferences' || path[1] === 'managedFields') return true;
  if (path.length >= 3 && path[1] === 'labels' && isOperatorLabel(path[2] ?? '')) return true;
  if (path.length >= 3 && (path[1] === 'annotations' || path[1] === 'labels')) return (path[2] ?? '').startsWith(`${GROUP}/`);
  return false;
}

export function pointerOf(path: readonly string[]): string {
  return path.map((s) => `/${jsonPointerSegment(s)}`).join('');
}

/** "/data/a, /data/b and 3 more": the drifted fields named, capped. */
export function describeDrift(fields: readonly string[]): string {
  const named = fields.slice(0, MAX_DRIFTED_NAMED).join(', ');
  return fields.length > MAX_DRIFTED_NAMED ? `${named} and ${fields.length - MAX_DRIFTED_NAMED} more` : named;
}

/**
 * The operator's bookkeeping on an object whose fields it does not write
 * (IfNotPresent, or drift Warn with the manifest unchanged), as a JSON patch
 * guarded by the object's uid and resourceVersion: the references the
 * manifest's apply would hold (the Bundle's controller reference, the
 * dependency references; those it recorded and no longer wants go), the
 * operator's labels (managed, ApplySet membership), and every smith.atlassian.com annotation the manifest
 * carries (deletion rules, their sealed proof, the dependency record, the
 * drift controls). Nothing else is touched, and nothing is removed but a
 * dependency reference (and its record) the operator wrote. Empty: nothing
 * to write.
 */
export function bookkeepingPatch(desired: KubeObjectManifest, live: LiveObject): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const meta = live.metadata;

  const liveRefs = meta.ownerReferences ?? [];
  const wanted = desired.metadata.ownerReferences ?? [];
  const wantedUids = new Set(wanted.map((r) => r.uid));
  const dropped = new Set([...recordedDependencyUids(meta.annotations)].filter((uid) => !wantedUids.has(uid)));
  const refs = [
    ...liveRefs.filter((r) => !dropped.has(r.uid)).map((r) => wanted.find((w) => w.uid === r.uid) ?? r),
    ...wanted.filter((w) => !liveRefs.some((r) => r.uid === w.uid)),
  ];
  if (JSON.stringify(refs) !== JSON.stringify(liveRefs)) ops.push({ op: 'add', path: '/metadata/ownerReferences', value: refs });

  const labels = Object.entries(desired.metadata.labels ?? {}).filter(([k, v]) => isOperatorLabel(k) && meta.labels?.[k] !== v);
  if (meta.labels === undefined) {
    if (labels.length > 0) ops.push({ op: 'add', path: '/metadata/labels', value: Object.fromEntries(labels) });
  } else {
    for (const [k, v] of labels) ops.push({ op: 'add', path: `/metadata/labels/${jsonPointerSegment(k)}`, value: v });
  }

  const wantedAnnotations = Object.entries(desired.metadata.annotations ?? {}).filter(
    ([k]) => k.startsWith(`${GROUP}/`) && k !== Annotations.appliedHash,
  );
  const changed = wantedAnnotations.filter(([k, v]) => meta.annotations?.[k] !== v);
  if (meta.annotations === undefined) {
    if (changed.length > 0) ops.push({ op: 'add', path: '/metadata/annotations', value: Object.fromEntries(changed) });
  } else {
    for (const [k, v] of changed) ops.push({ op: 'add', path: `/metadata/annotations/${jsonPointerSegment(k)}`, value: v });
    if (
      desired.metadata.annotations?.[Annotations.dependencyReferences] === undefined &&
      meta.annotations[Annotations.dependencyReferences] !== undefined
    ) {
      ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.dependencyReferences)}` });
    }
  }
  if (ops.length === 0) return [];
  const guard: JsonPatchOperation[] = [];
  if (meta.uid !== undefined) guard.push({ op: 'test', path: '/metadata/uid', value: meta.uid });
  if (meta.resourceVersion !== undefined) guard.push({ op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion });
  return [...guard, ...ops];
}

/** What the drift controls make of one resource's apply, decided on the manifest (ignored fields carried) and the live object. */
export type DriftDecision =
  /** Server-side apply the manifest, as without controls (needed as needsApply says). */
  | { kind: 'apply' }
  /** Write no field of the user's: only the bookkeeping patch (empty: nothing); `drifted` when drift is Warn. */
  | { kind: 'bookkeeping'; patch: JsonPatchOperation[]; drifted?: string[] };

/**
 * IfNotPresent: an existing object is never applied again. Warn: an
 * existing object whose applied-hash matches the manifest (the Bundle did
 * not change it) is not applied; its differing fields are reported. An edit
 * of the manifest (a new hash) is applied whole, as Correct would.
 */
export function decideDrift(
  controls: DriftControls,
  desired: KubeObjectManifest,
  hash: string,
  live: LiveObject | undefined,
): DriftDecision {
  if (live === undefined) return { kind: 'apply' };
  const warn = controls.drift === 'Warn';
  const manifestUnchanged = live.metadata.annotations?.[Annotations.appliedHash] === hash;
  if (controls.apply !== 'IfNotPresent' && !(warn && manifestUnchanged)) return { kind: 'apply' };
  const patch = bookkeepingPatch(desired, live);
  return warn ? { kind: 'bookkeeping', patch, drifted: driftedFields(desired, live) } : { kind: 'bookkeeping', patch };
}
