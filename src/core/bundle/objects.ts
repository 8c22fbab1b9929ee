/**
 * Plain-data helpers over Kubernetes objects as the API returns them (JSON).
 * Nothing here reads a clock or talks to a server.
 */
import type { OwnerReference } from '../../api/resource.js';

/** Object metadata fields the decisions read; everything else is carried along untouched. */
export interface LiveObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

/** A Kubernetes object read from the API server. */
export interface LiveObject {
  apiVersion: string;
  kind: string;
  metadata: LiveObjectMeta;
  [key: string]: unknown;
}

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** "apps/v1" -> "apps", "v1" -> "" (the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** "apps/v1" -> "v1". */
export function versionOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
}

/**
 * The three keys of this code base, one constructor each. Two are
 * version-sensitive on purpose, one is not:
 *  - KindKey (kindKey): a kind at one API version, "apps/v1/Deployment".
 *    Kind tables and discovery answers are per served version.
 *  - VersionedObjectKey (versionedObjectKey): an object at one API version, as a
 *    watch of that version or a read at it sees it. Caches and fresh reads.
 *  - ObjectKey (objectKey): an object whatever version names it (group,
 *    kind, namespace, name). Every decision about what a Bundle lists,
 *    claims or may delete is keyed by it: one object served at two versions
 *    must never count as two. A Bundle's coordinates (what its spec lists)
 *    are ObjectKeys.
 * Branded strings: each is a string, but one cannot be passed where
 * another is expected.
 */
export type KindKey = string & { readonly __key: 'KindKey' };
export type VersionedObjectKey = string & { readonly __key: 'VersionedObjectKey' };
export type ObjectKey = string & { readonly __key: 'ObjectKey' };

/** Key of kind tables: apiVersion + '/' + kind, e.g. "apps/v1/Deployment", "v1/ConfigMap". */
export function kindKey(apiVersion: string, kind: string): KindKey {
  return `${apiVersion}/${kind}` as KindKey;
}

/** An object at one API version: kindKey, namespace and name joined by '|' (none of them holds one). */
export function versionedObjectKey(apiVersion: string, kind: string, namespace: string | undefined, name: string): VersionedObjectKey {
  return `${kindKey(apiVersion, kind)}|${namespace ?? ''}|${name}` as VersionedObjectKey;
}

/** A versionedObjectKey read back; undefined when it is not one. */
export function parseVersionedObjectKey(key: string): { apiVersion: string; kind: string; namespace: string; name: string } | undefined {
  const [gvk = '', namespace, name] = key.split('|');
  const kind = parseKindKey(gvk);
  return kind === undefined || namespace === undefined || name === undefined ? undefined : { ...kind, namespace, name };
}

/** A versioned object key ("apiVersion/kind|namespace|name") as log fields. */
export function versionedKeyFields(key: string): { kind: string; namespace: string; name: string } {
  const at = parseVersionedObjectKey(key);
  return { kind: at === undefined ? key : kindKey(at.apiVersion, at.kind), namespace: at?.namespace ?? '', name: at?.name ?? '' };
}

/** A kindKey read back; undefined when it is not one. */
export function parseKindKey(key: string): { apiVersion: string; kind: string } | undefined {
  const slash = key.lastIndexOf('/');
  return slash <= 0 ? undefined : { apiVersion: key.slice(0, slash), kind: key.slice(slash + 1) };
}

/**
 * Kinds Kubernetes serves under a second group as the very same objects:
 * an Event is both a v1 Event and an events.k8s.io/v1 Event. Keyed by the
 * group of the one they are the same as.
 */
const SAME_OBJECTS_AS: ReadonlyMap<string, string> = new Map([['events.k8s.io/Event', '']]);

/** The group an object's key names: its own, or the one its kind is served under as the same objects. */
export function keyGroupOf(group: string, kind: string): string {
  return SAME_OBJECTS_AS.get(`${group}/${kind}`) ?? group;
}

/**
 * Identity of an object across API versions: group, kind, namespace, name.
 * The version is left out because one object is served at several versions,
 * and a group that serves the same objects as another is keyed as that one
 * (keyGroupOf), so one object has one key however a manifest names it.
 */
export function objectKey(o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string | undefined } }): ObjectKey {
  return `${keyGroupOf(groupOf(o.apiVersion), o.kind)}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}` as ObjectKey;
}

/** "Deployment web" or "Deployment ns/web": how messages name an object. */
export function describeObject(o: { kind: string; metadata: { name: string; namespace?: string | undefined } }): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** The controller ownerReference of an object, if any. */
export function controllerOf(o: { metadata: { ownerReferences?: readonly OwnerReference[] | undefined } }): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** Whether the object's controller ownerReference is the Bundle with this uid: what "the Bundle controls it" means everywhere. */
export function isControlledBy(o: { metadata: { ownerReferences?: readonly OwnerReference[] | undefined } }, bundleUid: string): boolean {
  return controllerOf(o)?.uid === bundleUid;
}

/** A deep copy of a JSON value, so decisions never share (and mutate) the caller's objects. */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}

/** One element of a JSON Patch (RFC 6902), as sent with `application/json-patch+json`. */
export type JsonPatchOperation = { op: 'add' | 'replace' | 'test'; path: string; value: unknown } | { op: 'remove'; path: string };

/** RFC 6901 escaping of one JSON Pointer segment ("a/b~c" -> "a~1b~0c"). */
export function jsonPointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Value of a condition of `type` in `status.conditions`, if the object has one. */
export function findCondition(o: JsonRecord, type: string): JsonRecord | undefined {
  const status = o['status'];
  if (!isRecord(status)) return undefined;
  const conditions = status['conditions'];
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find((c): c is JsonRecord => isRecord(c) && c['type'] === type);
}

/**
 * Whether an object of this name can be requested at all: the apiserver's
 * path-segment rule refuses "." and ".." (they would name the collection or
 * its parent) and names holding "/" or "%". Nothing can exist under such a
 * name; validation refuses it, and nothing reads or writes it.
 */
export function isRequestableName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}
