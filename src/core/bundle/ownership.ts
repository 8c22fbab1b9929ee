/**
 * Who may hold an object, and which of its ownerReferences the operator
 * wrote. Three questions every path that gives an object up or takes it
 * over asks (release on Bundle deletion, `bundlesmith cancel`, hand-over
 * between Bundles, the released-object sweep):
 *  - which live Bundles list the object (claims), and which of them is the
 *    oldest claim;
 *  - which ownerReferences are the operator's (the Bundle's controller
 *    reference and one reference per resolved dependency) and which are the
 *    user's (everything else, in particular the spec's own
 *    metadata.ownerReferences);
 *  - whether a Bundle may take an object it lists (own, adopt, hand-over)
 *    or must report a Conflict.
 * Pure: Bundles and objects come in as plain data.
 */
import type { OwnerReference } from '../../api/resource.js';
import { API_VERSION, Annotations, BUNDLE_KIND, FIELD_MANAGER, GROUP } from '../../api/names.js';
import { controllerOf, describeObject, groupOf, isRecord, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';

/** A live Bundle that lists an object. */
export interface BundleClaim {
  name: string;
  uid: string;
  /** RFC 3339; a claim without one counts as the newest. */
  creationTimestamp?: string;
}

/** A Bundle as read from the API, before (or without) schema validation. */
export interface BundleLike {
  metadata: {
    name: string;
    namespace?: string | undefined;
    uid?: string | undefined;
    creationTimestamp?: string | undefined;
    deletionTimestamp?: string | undefined;
  };
  spec?: unknown;
}

/** Where an object a Bundle lists lives. */
export interface ListedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * Every object a Bundle's spec lists, read leniently (no schema): a Bundle
 * whose spec is partly invalid still protects what it names. Objects are
 * applied in the Bundle's namespace, whatever their manifest says.
 */
export function listedObjects(bundle: BundleLike): ListedObject[] {
  const spec = bundle.spec;
  const resources = isRecord(spec) && Array.isArray(spec['resources']) ? (spec['resources'] as unknown[]) : [];
  const out: ListedObject[] = [];
  for (const r of resources) {
    const object = isRecord(r) && isRecord(r['spec']) ? r['spec']['object'] : undefined;
    if (!isRecord(object) || !isRecord(object['metadata'])) continue;
    const { apiVersion, kind } = object;
    const name = object['metadata']['name'];
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string') continue;
    out.push({ apiVersion, kind, namespace: bundle.metadata.namespace ?? '', name });
  }
  return out;
}

/** objectKey of every object a Bundle's spec lists (see listedObjects). */
export function listedObjectKeys(bundle: BundleLike): string[] {
  return listedObjects(bundle).map((o) =>
    objectKey({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.name, namespace: o.namespace } }),
  );
}

/** Whether a Bundle is live: it exists and is not being deleted (a Bundle being deleted lists nothing any more). */
export function isLiveBundle(bundle: BundleLike): boolean {
  return bundle.metadata.deletionTimestamp === undefined && bundle.metadata.uid !== undefined;
}

/** Oldest first: by creationTimestamp (absent last), then name, then uid. */
export function compareClaims(a: BundleClaim, b: BundleClaim): number {
  const at = a.creationTimestamp ?? '~';
  const bt = b.creationTimestamp ?? '~';
  // RFC 3339 in UTC as the API server writes it ("...Z", whole seconds) sorts as text.
  if (at !== bt) return at < bt ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** Every live Bundle's claim on each object it lists, oldest claim first. */
export function claimsByObject(bundles: readonly BundleLike[]): Map<string, BundleClaim[]> {
  const out = new Map<string, BundleClaim[]>();
  for (const b of bundles) {
    if (!isLiveBundle(b)) continue;
    const claim: BundleClaim = {
      name: b.metadata.name,
      uid: b.metadata.uid ?? '',
      ...(b.metadata.creationTimestamp !== undefined ? { creationTimestamp: b.metadata.creationTimestamp } : {}),
    };
    for (const key of new Set(listedObjectKeys(b))) {
      const list = out.get(key) ?? [];
      list.push(claim);
      out.set(key, list);
    }
  }
  for (const list of out.values()) list.sort(compareClaims);
  return out;
}

/** Whether the reference names a Bundle (any version of our group). */
export function isBundleReference(ref: Pick<OwnerReference, 'apiVersion' | 'kind'>): boolean {
  return ref.kind === BUNDLE_KIND && (ref.apiVersion === API_VERSION || ref.apiVersion.startsWith(`${GROUP}/`));
}

/** The uids the dependencyReferences annotation records. */
export function recordedDependencyUids(annotations: Readonly<Record<string, string>> | undefined): Set<string> {
  const text = annotations?.[Annotations.dependencyReferences];
  return new Set(
    (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

/** The annotation value recording dependency reference uids; undefined when there are none. */
export function formatDependencyUids(uids: readonly string[]): string | undefined {
  const sorted = [...new Set(uids)].sort();
  return sorted.length === 0 ? undefined : sorted.join(',');
}

export interface ReferenceOwnerContext {
  /**
   * Live Bundles that list the object: their claim references (a Bundle
   * that loses a Conflict records its claim as a non-controller reference
   * to itself) stay, so that the object keeps a live owner while the claim
   * stands. Every other reference to a Bundle is the operator's.
   */
  liveClaimUids?: ReadonlySet<string> | undefined;
  /**
   * Uids of the Bundle's other objects. A non-controller reference to one of
   * them, with blockOwnerDeletion as the operator writes it, that the
   * operator's field manager applied (managedFields; any, when the object
   * was read without them) is a dependency reference whatever the
   * dependencyReferences annotation says: absent on objects applied before
   * it was recorded, or stale (written back from an older copy) while
   * nothing re-applies the object. Read as the user's, such a reference
   * would outlive the release, and the collector would take the object
   * through its deleted sibling. One another tool wrote is the user's: the
   * object keeps it, as kube-controller-manager's collector would.
   */
  siblingUids?: ReadonlySet<string> | undefined;
  /**
   * The ownerReferences the object's manifest names itself (its uid may be a
   * "!{...}" reference the apply resolved): the user's, whoever applied them
   * and whatever they point at (red team 7: one naming a sibling, with
   * blockOwnerDeletion, was taken for a dependency reference and the object
   * deleted although its owner was kept).
   */
  namedByManifest?: readonly NamedOwner[] | undefined;
}

/** An ownerReference as a manifest names it: matched by uid, or by group, kind and name when its uid is not literal. */
export interface NamedOwner {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  name?: string | undefined;
  uid?: string | undefined;
}

function namedBy(ref: OwnerReference, named: readonly NamedOwner[] | undefined): boolean {
  return (named ?? []).some(
    (n) => n.uid === ref.uid || (n.kind === ref.kind && n.name === ref.name && groupOf(n.apiVersion ?? '') === groupOf(ref.apiVersion)),
  );
}

/**
 * The ownerReferences of an object that the operator wrote: every reference
 * to a Bundle (a controller reference, or a claim; users do not point
 * objects at Bundles) but the non-controller claims of live Bundles that
 * list it, and every dependency reference recorded in the
 * dependencyReferences annotation. Everything else is the user's.
 *
 * Why every Bundle reference: an object given up keeps only references to
 * owners that will hold it. A stale claim of a Bundle that no longer lists
 * the object (or is gone) would let the collector delete it once that
 * Bundle is gone, the very thing giving it up is meant to prevent.
 */
export function operatorWrittenReferences(
  meta: {
    ownerReferences?: readonly OwnerReference[] | undefined;
    annotations?: Readonly<Record<string, string>> | undefined;
    managedFields?: unknown;
  },
  ctx: ReferenceOwnerContext = {},
): OwnerReference[] {
  const dependencies = recordedDependencyUids(meta.annotations);
  const applied = referencesAppliedBy(meta.managedFields, FIELD_MANAGER);
  return (meta.ownerReferences ?? []).filter((ref) => {
    if (isBundleReference(ref)) return ref.controller === true || !(ctx.liveClaimUids?.has(ref.uid) ?? false);
    if (ref.controller === true || namedBy(ref, ctx.namedByManifest)) return false;
    if (dependencies.has(ref.uid)) return true;
    return ref.blockOwnerDeletion === true && (ctx.siblingUids?.has(ref.uid) ?? false) && (applied === undefined || applied.has(ref.uid));
  });
}

/**
 * Uids of the ownerReferences entries `manager` owns in the object's
 * managedFields (entries of a list keyed by uid: `k:{"uid":"..."}`);
 * undefined when the object was read without managedFields.
 */
export function referencesAppliedBy(managedFields: unknown, manager: string): Set<string> | undefined {
  if (!Array.isArray(managedFields)) return undefined;
  const uids = new Set<string>();
  for (const entry of managedFields as unknown[]) {
    if (!isRecord(entry) || entry['manager'] !== manager) continue;
    const fields = entry['fieldsV1'];
    const metadata = isRecord(fields) ? fields['f:metadata'] : undefined;
    const refs = isRecord(metadata) ? metadata['f:ownerReferences'] : undefined;
    if (!isRecord(refs)) continue;
    for (const key of Object.keys(refs)) {
      if (!key.startsWith('k:')) continue;
      try {
        const parsed: unknown = JSON.parse(key.slice(2));
        if (isRecord(parsed) && typeof parsed['uid'] === 'string') uids.add(parsed['uid']);
      } catch {
        // Not a key this reader knows: it proves nothing.
      }
    }
  }
  return uids;
}

/**
 * Takes a Bundle's non-controller (claim) reference out of an object,
 * guarded by the reference list as read; undefined when it carries none.
 */
export function withdrawClaimPatch(o: LiveObject, bundleUid: string): JsonPatchOperation[] | undefined {
  const refs = o.metadata.ownerReferences ?? [];
  const kept = refs.filter((r) => r.uid !== bundleUid || r.controller === true);
  if (kept.length === refs.length) return undefined;
  return [
    { op: 'test', path: '/metadata/ownerReferences', value: refs },
    { op: 'replace', path: '/metadata/ownerReferences', value: kept },
  ];
}

/**
 * How a Bundle gives up its claim on an object it no longer lists (or as it
 * is deleted), given the live Bundles that list the object:
 *  - something beyond claims holds the object (a controller that is not a
 *    Bundle, or a controlling Bundle that still lists it), or nobody else
 *    lists it: only this Bundle's claim goes;
 *  - otherwise only claims and stale Bundle references hold it while another
 *    live Bundle lists it: every reference the operator wrote goes, the
 *    listers' claims stay. Taking out the claim alone could leave the object
 *    with a single Bundle reference whose Bundle is about to go, and the
 *    collector would delete what a live Bundle lists.
 * Guarded by the reference list as read; undefined when the object carries
 * no claim of this Bundle.
 */
export function claimWithdrawal(o: LiveObject, bundleUid: string, listers: readonly BundleClaim[]): JsonPatchOperation[] | undefined {
  if (!hasClaimReference(o, bundleUid)) return undefined;
  const others = new Set(listers.filter((c) => c.uid !== bundleUid).map((c) => c.uid));
  const controller = controllerOf(o);
  const heldBeyondClaims = controller !== undefined && (!isBundleReference(controller) || others.has(controller.uid));
  if (heldBeyondClaims || others.size === 0) return withdrawClaimPatch(o, bundleUid);
  const refs = o.metadata.ownerReferences ?? [];
  return [
    { op: 'test', path: '/metadata/ownerReferences', value: refs },
    { op: 'replace', path: '/metadata/ownerReferences', value: userReferences(o.metadata, { liveClaimUids: others }) },
  ];
}

/** Whether the object carries a claim (a non-controller reference) of the Bundle with this uid. */
export function hasClaimReference(o: LiveObject, bundleUid: string): boolean {
  return (o.metadata.ownerReferences ?? []).some((r) => r.uid === bundleUid && r.controller !== true);
}

/** The ownerReferences left once the operator's are taken out (in their original order). */
export function userReferences(meta: Parameters<typeof operatorWrittenReferences>[0], ctx: ReferenceOwnerContext = {}): OwnerReference[] {
  const ours = new Set(operatorWrittenReferences(meta, ctx));
  return (meta.ownerReferences ?? []).filter((ref) => !ours.has(ref));
}

/** How a Bundle stands towards the live object at one of its resources' coordinates. */
export type Ownership =
  /** No live object. */
  | { kind: 'absent' }
  /** Controlled by this Bundle. */
  | { kind: 'own' }
  /** No controller, and this Bundle is the oldest live claim. */
  | { kind: 'adopt' }
  /** Controlled by a Bundle that no longer lists it (or is being deleted), and this Bundle is the oldest live claim. */
  | { kind: 'hand-over'; from: OwnerReference }
  | { kind: 'conflict'; message: string; controller?: OwnerReference };

export interface OwnershipInput {
  live: LiveObject | undefined;
  self: BundleClaim;
  /** Live Bundles listing the object (this one included or not). */
  claims: readonly BundleClaim[];
}

/**
 * Who may hold the object:
 *  - a controller that is not a Bundle, or a Bundle that still lists the
 *    object: Conflict, as it always was;
 *  - otherwise (no controller, or a controlling Bundle that dropped the
 *    object or is being deleted) the oldest live claim takes it, and every
 *    other claimant reports Conflict naming it.
 */
export function decideOwnership(input: OwnershipInput): Ownership {
  const { live, self } = input;
  if (live === undefined) return { kind: 'absent' };
  const controller = controllerOf(live);
  if (controller !== undefined && controller.uid === self.uid) return { kind: 'own' };
  const claims = input.claims.some((c) => c.uid === self.uid) ? [...input.claims] : [...input.claims, self];
  if (controller !== undefined) {
    const what = describeObject(live);
    if (!isBundleReference(controller))
      return {
        kind: 'conflict',
        controller,
        message: `${what} is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid})`,
      };
    if (claims.some((c) => c.uid === controller.uid))
      return {
        kind: 'conflict',
        controller,
        message: `${what} is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid})`,
      };
  }
  const oldest = claims.sort(compareClaims)[0];
  if (oldest !== undefined && oldest.uid !== self.uid) {
    return {
      kind: 'conflict',
      ...(controller !== undefined ? { controller } : {}),
      message: `${describeObject(live)} is also listed by Bundle ${oldest.name} (uid ${oldest.uid}), whose claim is older`,
    };
  }
  return controller === undefined ? { kind: 'adopt' } : { kind: 'hand-over', from: controller };
}
