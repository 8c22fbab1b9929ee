/**
 * The ignored fields of the drift controls (`smith.atlassian.com/ignore`):
 * the object without them (for its hash and the drift comparison), and the
 * manifest to apply with them carried from the live object. Pure. Separate
 * from drift.ts: reading and writing a field by JSON pointer is its own
 * mechanism, with its own rules for lists and co-owned fields.
 */
import { FIELD_MANAGER } from '../../api/names.js';
import type { KubeObjectManifest } from '../../api/resource.js';
import { cloneJson, isRecord } from './objects.js';
import type { DriftControls } from './drift-controls.js';

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
