/**
 * Drift controls (issue 27): per object, `smith.atlassian.com/apply`
 * (Always, IfNotPresent), `smith.atlassian.com/ignore` (JSON pointers) and
 * `smith.atlassian.com/drift` (Correct, Warn), over the Bundle's
 * spec.driftDefaults. What they read, which fields the operator applies,
 * which live fields have drifted, and the bookkeeping patch an object that
 * is not applied still gets. Pure.
 *
 * The line drawn: the user's fields are what these controls hold back. The
 * operator's bookkeeping is not the user's to hold back, because soft-delete
 * safety rests on it: the controller reference (without it the object is
 * not the Bundle's and is never pruned, or is collected with a sibling), the
 * dependency references and their record, the managed label (the caches
 * select on it) and the smith.atlassian.com annotations (deletion rules and
 * their sealed proof, which the deletion guard and the sweeper read on the
 * object). The claims (claims.ts) and the prune's stamps are written as
 * before, whatever the controls say.
 */
import { APPLY_MODES, Annotations, DRIFT_MODES, FIELD_MANAGER, GROUP, Labels, type ApplyMode, type DriftMode } from '../../api/names.js';
import {
  MAX_IGNORED_POINTERS,
  MAX_POINTER_LENGTH,
  type BundleSpec,
  type DriftDefaults,
  type KubeObjectManifest,
} from '../../api/bundle.js';
import { cloneJson, isRecord, jsonPointerSegment, type JsonPatchOperation, type LiveObject } from './objects.js';
import { recordedDependencyUids } from './ownership.js';

export interface DriftControls {
  apply: ApplyMode;
  /** Parsed JSON pointers, as segments. */
  ignore: readonly (readonly string[])[];
  drift: DriftMode;
}

export const DEFAULT_DRIFT_CONTROLS: DriftControls = { apply: 'Always', ignore: [], drift: 'Correct' };

export type PointerRead = { ok: true; segments: string[] } | { ok: false; message: string };

/** An RFC 6901 pointer into an object ("" is the whole object, refused: it is never a field). */
export function parseJsonPointer(text: string): PointerRead {
  if (text.length > MAX_POINTER_LENGTH) return { ok: false, message: `is longer than ${MAX_POINTER_LENGTH} characters` };
  if (!text.startsWith('/')) return { ok: false, message: 'is not a JSON pointer: it must start with "/" (e.g. "/spec/replicas")' };
  const segments: string[] = [];
  for (const raw of text.slice(1).split('/')) {
    if (/~[^01]|~$/.test(raw)) return { ok: false, message: 'is not a JSON pointer: "~" must be written "~0", and "/" inside a key "~1"' };
    segments.push(raw.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return { ok: true, segments };
}

/**
 * Why a pointer may not be ignored, if it may not: the object's identity and
 * ownership, and the operator's own annotations and labels (the CRD's
 * IGNORABLE_POINTER_RULES say the same of spec.driftDefaults.ignore).
 */
export function unignorable(segments: readonly string[]): string | undefined {
  const [top, field, key] = segments;
  if (top === 'apiVersion' || top === 'kind') return `${top} is the object's identity`;
  if (top !== 'metadata') return undefined;
  if (field === undefined) return "metadata holds the object's identity and ownership";
  if (field === 'name' || field === 'namespace') return `metadata.${field} is the object's identity`;
  if (field === 'ownerReferences') return 'ownerReferences are how the Bundle owns, prunes and soft-deletes the object';
  if ((field === 'annotations' || field === 'labels') && key === undefined)
    return `all of metadata.${field} would take the operator's own ${field} with them`;
  if ((field === 'annotations' || field === 'labels') && key !== undefined && key.startsWith(`${GROUP}/`))
    return `${key} is the operator's own (soft deletes and ownership read it)`;
  return undefined;
}

/** A list of pointers (the annotation's comma-separated text, or spec.driftDefaults.ignore), read and checked. */
export function readIgnoreList(
  pointers: readonly string[],
  where: string,
): { ok: true; ignore: string[][] } | { ok: false; message: string } {
  if (pointers.length > MAX_IGNORED_POINTERS)
    return { ok: false, message: `${where} lists ${pointers.length} pointers: at most ${MAX_IGNORED_POINTERS}` };
  const ignore: string[][] = [];
  for (const text of pointers) {
    const read = parseJsonPointer(text);
    if (!read.ok) return { ok: false, message: `${where}: ${JSON.stringify(text)} ${read.message}` };
    const why = unignorable(read.segments);
    if (why !== undefined) return { ok: false, message: `${where}: ${JSON.stringify(text)} may not be ignored: ${why}` };
    ignore.push(read.segments);
  }
  return { ok: true, ignore };
}

export type DriftControlsRead = { ok: true; controls: DriftControls } | { ok: false; message: string };

/** The object's drift controls: its annotations over the Bundle's spec.driftDefaults. */
export function readDriftControls(
  annotations: Readonly<Record<string, string>> | undefined,
  defaults: DriftDefaults | undefined,
): DriftControlsRead {
  const applyText = annotations?.[Annotations.apply];
  const driftText = annotations?.[Annotations.drift];
  const ignoreText = annotations?.[Annotations.ignore];
  const apply = applyText ?? defaults?.apply ?? 'Always';
  if (!isOneOf(APPLY_MODES, apply))
    return { ok: false, message: `annotation ${Annotations.apply} ${JSON.stringify(apply)} is not one of ${APPLY_MODES.join(', ')}` };
  const drift = driftText ?? defaults?.drift ?? 'Correct';
  if (!isOneOf(DRIFT_MODES, drift))
    return { ok: false, message: `annotation ${Annotations.drift} ${JSON.stringify(drift)} is not one of ${DRIFT_MODES.join(', ')}` };
  const pointers =
    ignoreText !== undefined
      ? ignoreText
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p !== '')
      : (defaults?.ignore ?? []);
  const ignore = readIgnoreList(pointers, ignoreText !== undefined ? `annotation ${Annotations.ignore}` : 'spec.driftDefaults.ignore');
  if (!ignore.ok) return ignore;
  return { ok: true, controls: { apply, ignore: ignore.ignore, drift } };
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** Every drift control of the spec that cannot be read, for validateBundle: the defaults once, then each object. */
export function driftControlIssues(spec: Pick<BundleSpec, 'resources' | 'driftDefaults'>): { resource?: string; message: string }[] {
  const defaults = spec.driftDefaults;
  const out: { resource?: string; message: string }[] = [];
  const fromDefaults = readDriftControls(undefined, defaults);
  if (!fromDefaults.ok) out.push({ message: fromDefaults.message });
  for (const r of spec.resources) {
    const annotations = r.spec.object?.metadata.annotations;
    if (
      annotations?.[Annotations.apply] === undefined &&
      annotations?.[Annotations.drift] === undefined &&
      annotations?.[Annotations.ignore] === undefined
    )
      continue;
    // Read without the defaults: a bad default is said once, above.
    const read = readDriftControls(annotations, undefined);
    if (!read.ok) out.push({ resource: r.name, message: read.message });
  }
  return out;
}

/** The value at `segments`, undefined when there is none. */
export function valueAt(value: unknown, segments: readonly string[]): unknown {
  let at: unknown = value;
  for (const s of segments) {
    if (Array.isArray(at)) at = /^(0|[1-9][0-9]*)$/.test(s) ? at[Number(s)] : undefined;
    else if (isRecord(at)) at = Object.hasOwn(at, s) ? at[s] : undefined;
    else return undefined;
  }
  return at;
}

/** Sets (a value) or removes (undefined) the field at `segments`, creating maps on the way; a path through a scalar or past a list's end is left alone. */
function setAt(root: Record<string, unknown>, segments: readonly string[], value: unknown): void {
  let at: unknown = root;
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i] ?? '';
    if (Array.isArray(at)) {
      at = /^(0|[1-9][0-9]*)$/.test(s) ? at[Number(s)] : undefined;
    } else if (isRecord(at)) {
      if (!isRecord(at[s]) && !Array.isArray(at[s])) {
        if (value === undefined) return;
        at[s] = {};
      }
      at = at[s];
    } else return;
    if (!isRecord(at) && !Array.isArray(at)) return;
  }
  const last = segments[segments.length - 1] ?? '';
  if (Array.isArray(at)) {
    if (!/^(0|[1-9][0-9]*)$/.test(last) || Number(last) >= at.length) return;
    if (value === undefined) at.splice(Number(last), 1);
    else at[Number(last)] = value;
  } else if (isRecord(at)) {
    if (value === undefined) delete at[last];
    else at[last] = value;
  }
}

/** The object without the ignored fields: what its hash and the drift comparison are taken over. */
export function withoutIgnored<T extends KubeObjectManifest>(object: T, ignore: DriftControls['ignore']): T {
  if (ignore.length === 0) return object;
  const copy = cloneJson(object);
  // Deepest first, so that removing an element of a list does not shift a pointer into a later one.
  for (const segments of [...ignore].sort((a, b) => b.length - a.length)) setAt(copy, segments, undefined);
  return copy;
}

/**
 * The manifest to apply, its ignored fields taken from `source`: the live
 * object once there is one (the operator never changes them, so another
 * manager may), the manifest itself at creation. A field the source lacks
 * is left out, and so is a scalar field another field manager owns on the
 * live object (its managedFields): the operator lets go of it, and the
 * other manager, still owning it, keeps its value (a server-side apply of
 * theirs then meets no conflict). One only the operator owns keeps the live
 * value: left out, the API server would remove it. status is never
 * applied, so it is never carried.
 */
export function withIgnoredFrom<T extends KubeObjectManifest>(
  desired: T,
  source: unknown,
  ignore: DriftControls['ignore'],
  managedFields?: unknown,
): T {
  if (ignore.length === 0) return desired;
  const copy = cloneJson(desired);
  for (const segments of ignore) {
    if (segments[0] === 'status') continue;
    const value = valueAt(source, segments);
    setAt(copy, segments, value === undefined || ownedByAnother(managedFields, segments) ? undefined : cloneJson(value));
  }
  return copy;
}

/**
 * Whether a field manager other than the operator owns the scalar field at
 * `segments` (a leaf of its fieldsV1, reached through map keys). A map, a
 * list or a path through a list is never read as owned: leaving out a
 * whole map the operator shares could remove the keys only it owns.
 */
function ownedByAnother(managedFields: unknown, segments: readonly string[]): boolean {
  if (!Array.isArray(managedFields)) return false;
  return managedFields.some((entry: unknown) => {
    if (!isRecord(entry) || entry['manager'] === FIELD_MANAGER) return false;
    let node: unknown = entry['fieldsV1'];
    for (const s of segments) {
      node = isRecord(node) ? node[`f:${s}`] : undefined;
      if (node === undefined) return false;
    }
    return isRecord(node) && Object.keys(node).length === 0;
  });
}

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
