/**
 * The exact manifest to server-side apply for one resource, its content hash,
 * and whether the live object already matches it (so a no-op reconcile sends
 * no write at all).
 */
import type { KubeObjectManifest, OwnerReference } from '../../api/resource.js';
import { API_VERSION, Annotations, ApplySetLabels, BUNDLE_KIND, Labels } from '../../api/names.js';
import { applySetId } from './applyset.js';
import { contentHash } from './hash.js';
import { cloneJson, isRecord, type LiveObject } from './objects.js';
import { formatDependencyUids } from './owner-references.js';

/** Annotation holding the hash of the manifest last applied. */
export const APPLIED_HASH_ANNOTATION = Annotations.appliedHash;

/**
 * Metadata the server owns. Sending them would make the apply a
 * precondition (resourceVersion) or be ignored, and comparing them would
 * never settle.
 */
const SERVER_METADATA = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

export interface BundleIdentity {
  name: string;
  namespace: string;
  uid: string;
}

export interface DesiredInput {
  bundle: BundleIdentity;
  /** The resource's object with its references already substituted. */
  object: KubeObjectManifest;
  /** Live objects of the resources it references, in reference order (duplicates allowed). */
  dependencies: readonly LiveObject[];
  /**
   * A deletionPolicy the chart's deletion guard protects (Orphan: kept; Approve: waits for an approval) which it takes
   * from spec.deletionDefaults: written onto it, so that the object itself
   * says so. The chart's deletion guard and the released-object sweeper
   * read nothing but the object.
   */
  keepingPolicyFromDefaults?: 'Orphan' | 'Approve' | undefined;
  /** The declared-rules proof of the manifest's deletion rules (Annotations.declaredRules), when it sets any. */
  declaredRulesProof?: string | undefined;
}

export interface DesiredObject {
  manifest: KubeObjectManifest;
  /** Hash of the manifest without the hash annotation; the manifest carries it in APPLIED_HASH_ANNOTATION. */
  hash: string;
}

/**
 * The one builder of a reference to a Bundle: as its controller (what it
 * applies or takes), or as a claim (non-controller, not blocking: a Conflict
 * it lost to another Bundle, see take-holds.ts).
 */
export function bundleOwnerReference(
  bundle: Pick<BundleIdentity, 'name' | 'uid'>,
  role: 'controller' | 'claim' = 'controller',
): OwnerReference {
  const controller = role === 'controller';
  return { apiVersion: API_VERSION, kind: BUNDLE_KIND, name: bundle.name, uid: bundle.uid, controller, blockOwnerDeletion: controller };
}

export function buildDesired(input: DesiredInput): DesiredObject {
  const object = cloneJson(input.object);
  // status is written by the object's controller; applying it would never converge.
  delete object['status'];
  const metadata = object.metadata;
  for (const field of SERVER_METADATA) delete metadata[field];
  metadata.namespace = input.bundle.namespace;
  foldWriteOnlyFields(object);

  const ours: OwnerReference[] = [bundleOwnerReference(input.bundle)];
  for (const dep of input.dependencies) {
    const uid = dep.metadata.uid;
    if (uid === undefined || ours.some((ref) => ref.uid === uid)) continue;
    ours.push({ apiVersion: dep.apiVersion, kind: dep.kind, name: dep.metadata.name, uid, blockOwnerDeletion: true });
  }
  const specRefs = metadata.ownerReferences ?? [];
  const userRefs = specRefs.filter((ref) => !ours.some((o) => o.uid === ref.uid));
  metadata.ownerReferences = [...ours, ...userRefs];

  // The caches select on it (see Labels.managed); a manifest cannot opt out.
  // The Bundle's ApplySet membership (applyset.ts): a description for kubectl, read by no decision. A manifest's own
  // part-of value is replaced, as the Bundle is the set that holds the object.
  metadata.labels = {
    ...(metadata.labels ?? {}),
    [Labels.managed]: 'true',
    [ApplySetLabels.partOf]: applySetId(input.bundle.name, input.bundle.namespace),
  };
  // A listed object is not released: a manifest cannot bring the former-bundle label either (see the annotation below).
  delete metadata.labels[Labels.formerBundle];

  const annotations = { ...(metadata.annotations ?? {}) };
  delete annotations[APPLIED_HASH_ANNOTATION];
  // Only the operator writes the proof: a manifest cannot bring its own.
  delete annotations[Annotations.declaredRules];
  // Nor the claim record (an object exported with `kubectl get -o yaml` carries it): applied, it would own the record and
  // rewrite it over the claims other Bundles wrote (red team 15). The record is written by the claims' patches only.
  delete annotations[Annotations.claimReferences];
  // Nor the mark of a release or a let-go (red team 19: copied from `kubectl get -o yaml`, it hid the object from the
  // finalizer's orphan trace): only the operator's release and let-go patches write it.
  delete annotations[Annotations.formerBundle];
  if (input.declaredRulesProof !== undefined) annotations[Annotations.declaredRules] = input.declaredRulesProof;
  if (input.keepingPolicyFromDefaults !== undefined && annotations[Annotations.deletionPolicy] === undefined)
    annotations[Annotations.deletionPolicy] = input.keepingPolicyFromDefaults;
  // Record which references are the operator's, so that release, cancel and
  // hand-over can take out exactly those (a reference the spec itself names is
  // the user's, even when it also names a dependency).
  delete annotations[Annotations.dependencyReferences];
  const dependencyUids = formatDependencyUids(
    ours
      .slice(1)
      .map((ref) => ref.uid)
      .filter((uid) => !specRefs.some((ref) => ref.uid === uid)),
  );
  if (dependencyUids !== undefined) annotations[Annotations.dependencyReferences] = dependencyUids;
  metadata.annotations = annotations;
  const hash = contentHash(object);
  metadata.annotations = { ...annotations, [APPLIED_HASH_ANNOTATION]: hash };
  return { manifest: object, hash };
}

/**
 * A Secret's stringData is write-only: the server folds it into data and
 * never returns it, so a manifest carrying it would never match the live
 * object. Fold it the same way here (stringData wins over data, as on the
 * server) and apply data instead.
 */
function foldWriteOnlyFields(object: KubeObjectManifest): void {
  if (object.apiVersion !== 'v1' || object.kind !== 'Secret' || !isRecord(object['stringData'])) return;
  const data = isRecord(object['data']) ? { ...object['data'] } : {};
  for (const [key, value] of Object.entries(object['stringData'])) {
    if (typeof value === 'string') data[key] = Buffer.from(value, 'utf8').toString('base64');
  }
  delete object['stringData'];
  object['data'] = data;
}

/**
 * Apply is needed unless the live object carries the same hash annotation
 * and holds every desired field with an equal value. The hash alone is not
 * enough: someone may have edited a field since. Extra live fields (defaults,
 * other managers' fields, status) do not matter.
 *
 * Trap: a desired value that the server normalises (a quantity written as the
 * number 1 comes back as "1") never compares equal, so such a resource is
 * re-applied on every pass. The apply is then a server-side no-op, but it is
 * still a write: write quantities as strings.
 */
export function needsApply(desired: KubeObjectManifest, live: LiveObject | undefined): boolean {
  if (live === undefined) return true;
  const desiredHash = desired.metadata.annotations?.[APPLIED_HASH_ANNOTATION];
  if (desiredHash === undefined || live.metadata.annotations?.[APPLIED_HASH_ANNOTATION] !== desiredHash) return true;
  return !isSubset(desired, live, []);
}

/**
 * Every field of `want` is in `have` with an equal value: objects key by key,
 * arrays element by element with the same length, scalars by ===.
 * metadata.ownerReferences is a list keyed by uid that other managers may
 * extend, so there each wanted reference only needs a match by uid.
 */
export function isSubset(want: unknown, have: unknown, path: readonly string[]): boolean {
  if (path.length === 2 && path[0] === 'metadata' && path[1] === 'ownerReferences') return ownerReferencesSubset(want, have);
  // The server drops empty maps and lists (and nulls) it stores as absent: asking for one is asking for nothing.
  if (have === undefined && (want === null || isEmptyContainer(want))) return true;
  if (Array.isArray(want)) {
    return Array.isArray(have) && want.length === have.length && want.every((item, i) => isSubset(item, have[i], [...path, String(i)]));
  }
  if (isRecord(want)) {
    return (
      isRecord(have) && Object.entries(want).every(([key, value]) => value === undefined || isSubset(value, have[key], [...path, key]))
    );
  }
  return want === have;
}

function isEmptyContainer(value: unknown): boolean {
  return (Array.isArray(value) && value.length === 0) || (isRecord(value) && Object.values(value).every((v) => v === undefined));
}

function ownerReferencesSubset(want: unknown, have: unknown): boolean {
  if (!Array.isArray(want) || !Array.isArray(have)) return want === have;
  return want.every((ref) => {
    const uid = isRecord(ref) ? ref['uid'] : undefined;
    return have.some((candidate) => isRecord(candidate) && candidate['uid'] === uid && isSubset(ref, candidate, []));
  });
}
