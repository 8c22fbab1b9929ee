/**
 * Who may hold an object. Questions every path that gives an object up or
 * takes it over asks (release on Bundle deletion, `bundlesmith cancel`,
 * hand-over between Bundles, the released-object sweep):
 *  - which live Bundles list the object (listings), and which of them is the
 *    oldest listing;
 *  - whether a Bundle may take an object it lists (own, adopt, hand-over)
 *    or must report a Conflict, and how it withdraws a claim.
 * Which ownerReferences are the operator's and which the user's is
 * owner-references.ts.
 * Pure: Bundles and objects come in as plain data.
 */
import type { OwnerReference } from '../../api/resource.js';
import { controllerOf, describeObject, isRecord, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';
import type { ClaimRecords } from './claim-record.js';
import { claimRecordOps, claimsStillOn, hasClaimReference, isBundleReference, userReferences } from './owner-references.js';

/** A live Bundle that lists an object. */
export interface BundleListing {
  name: string;
  uid: string;
  /** RFC 3339; a listing without one counts as the newest. */
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
export function compareListings(a: BundleListing, b: BundleListing): number {
  const at = a.creationTimestamp ?? '~';
  const bt = b.creationTimestamp ?? '~';
  // RFC 3339 in UTC as the API server writes it ("...Z", whole seconds) sorts as text.
  if (at !== bt) return at < bt ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** Every live Bundle's listing of each object it lists, oldest listing first. */
export function listingsByObject(bundles: readonly BundleLike[]): Map<string, BundleListing[]> {
  const out = new Map<string, BundleListing[]>();
  for (const b of bundles) {
    if (!isLiveBundle(b)) continue;
    const listing: BundleListing = {
      name: b.metadata.name,
      uid: b.metadata.uid ?? '',
      ...(b.metadata.creationTimestamp !== undefined ? { creationTimestamp: b.metadata.creationTimestamp } : {}),
    };
    for (const key of new Set(listedObjectKeys(b))) {
      const list = out.get(key) ?? [];
      list.push(listing);
      out.set(key, list);
    }
  }
  for (const list of out.values()) list.sort(compareListings);
  return out;
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
    ...claimRecordOps(o, claimsStillOn(o, kept)),
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
export function claimWithdrawal(
  o: LiveObject,
  bundleUid: string,
  listers: readonly BundleListing[],
  claimRecords?: ClaimRecords,
): JsonPatchOperation[] | undefined {
  if (!hasClaimReference(o, bundleUid, claimRecords)) return undefined;
  const others = new Set(listers.filter((c) => c.uid !== bundleUid).map((c) => c.uid));
  const controller = controllerOf(o);
  const heldBeyondClaims = controller !== undefined && (!isBundleReference(controller) || others.has(controller.uid));
  if (heldBeyondClaims || others.size === 0) return withdrawClaimPatch(o, bundleUid);
  const refs = o.metadata.ownerReferences ?? [];
  const kept = userReferences(o.metadata, { liveClaimUids: others, claimRecords });
  return [
    { op: 'test', path: '/metadata/ownerReferences', value: refs },
    { op: 'replace', path: '/metadata/ownerReferences', value: kept },
    ...claimRecordOps(o, claimsStillOn(o, kept)),
  ];
}

/** How a Bundle stands towards the live object at one of its resources' coordinates. */
export type Ownership =
  /** No live object. */
  | { kind: 'absent' }
  /** Controlled by this Bundle. */
  | { kind: 'own' }
  /** No controller, and this Bundle is the oldest live listing. */
  | { kind: 'adopt' }
  /** Controlled by a Bundle that no longer lists it (or is being deleted), and this Bundle is the oldest live listing. */
  | { kind: 'hand-over'; from: OwnerReference }
  | { kind: 'conflict'; message: string; controller?: OwnerReference };

export interface OwnershipInput {
  live: LiveObject | undefined;
  self: BundleListing;
  /** Live Bundles listing the object (this one included or not). */
  listings: readonly BundleListing[];
}

/**
 * Who may hold the object:
 *  - a controller that is not a Bundle, or a Bundle that still lists the
 *    object: Conflict, as it always was;
 *  - otherwise (no controller, or a controlling Bundle that dropped the
 *    object or is being deleted) the oldest live listing takes it, and every
 *    other claimant reports Conflict naming it.
 */
export function decideOwnership(input: OwnershipInput): Ownership {
  const { live, self } = input;
  if (live === undefined) return { kind: 'absent' };
  const controller = controllerOf(live);
  if (controller !== undefined && controller.uid === self.uid) return { kind: 'own' };
  const listings = input.listings.some((c) => c.uid === self.uid) ? [...input.listings] : [...input.listings, self];
  if (controller !== undefined) {
    const what = describeObject(live);
    if (!isBundleReference(controller))
      return {
        kind: 'conflict',
        controller,
        message: `${what} is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid})`,
      };
    if (listings.some((c) => c.uid === controller.uid))
      return {
        kind: 'conflict',
        controller,
        message: `${what} is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid})`,
      };
  }
  const oldest = listings.sort(compareListings)[0];
  if (oldest !== undefined && oldest.uid !== self.uid) {
    return {
      kind: 'conflict',
      ...(controller !== undefined ? { controller } : {}),
      message: `${describeObject(live)} is also listed by Bundle ${oldest.name} (uid ${oldest.uid}), whose listing is older`,
    };
  }
  return controller === undefined ? { kind: 'adopt' } : { kind: 'hand-over', from: controller };
}
