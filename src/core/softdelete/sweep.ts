/**
 * The released-object sweep's decisions: which objects a deleted Bundle
 * released are the sweep's to handle, what to do with each (the soft-delete
 * rules for an object no Bundle lists), and where they are looked for. Used
 * by the sweeper (controllers/softdelete/released-sweeper.ts) and by
 * `bundlesmith pending`. Pure.
 */
import { Annotations, Labels } from '../../api/names.js';
import { decideSoftDelete, type SoftDeleteDecision } from './decide.js';

/** The metadata the released-object sweeper reads from a live object. */
export interface ReleasedObjectMeta {
  labels?: Readonly<Record<string, string>> | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
  ownerReferences?: ReadonlyArray<{ controller?: boolean | undefined }> | undefined;
}

/**
 * Whether an object was released by a deleted Bundle and is the
 * released-object sweeper's to handle: it carries the former-bundle label and no controller
 * owner. An object adopted since (a controller owner again) belongs to its
 * new owner, whatever its labels say.
 */
export function isReleasedByBundle(meta: ReleasedObjectMeta): boolean {
  if (meta.labels?.[Labels.formerBundle] === undefined) return false;
  return !(meta.ownerReferences ?? []).some((reference) => reference.controller === true);
}

export type ReleasedSweepDecision =
  { action: 'skip'; reason: string } | Exclude<SoftDeleteDecision, { action: 'keep' | 'cancel' | 'release' }>;

/**
 * The released-object sweeper's decision for one object: `skip` when the object is not
 * a released one, otherwise the soft-delete rules for an object no Bundle
 * lists (`inSpec: false`), so released objects keep their countdown.
 */
export function decideReleasedSweep(meta: ReleasedObjectMeta, now: number, stampAt: number = now): ReleasedSweepDecision {
  if (meta.labels?.[Labels.formerBundle] === undefined) {
    return { action: 'skip', reason: `no ${Labels.formerBundle} label` };
  }
  if (!isReleasedByBundle(meta)) return { action: 'skip', reason: 'has a controller owner' };
  // The Bundle is gone: there is no replacement to wait for, so a deleteWhen BundleReady gate is open.
  const decision = decideSoftDelete({ inSpec: false, annotations: meta.annotations, now, stampAt, bundleReady: true });
  if (decision.action === 'release') return { action: 'skip', reason: `${Annotations.deletionPolicy} Orphan: kept` };
  // The finalizer releases only objects that carry a delay (the others it
  // deletes itself): a label on an object with neither delay nor stamp was
  // not written by a release, and is no permission to delete.
  if (decision.action === 'delete')
    return { action: 'skip', reason: `${Labels.formerBundle} label without a deletionDelay: not released by a Bundle, kept` };
  // Out of spec the decision is never keep or cancel; the check narrows the type.
  if (decision.action === 'keep' || decision.action === 'cancel') {
    return { action: 'skip', reason: `unexpected soft-delete decision ${decision.action}` };
  }
  return decision;
}

/** A live Bundle's listing of a released object: the Bundle, and whether the server serves the version it lists it at. */
export interface ReleasedObjectListing {
  bundle: string;
  served: boolean;
}

export type ListedReleaseDecision =
  { action: 'skip'; reason: string } | { action: 'recheck'; reason: string } | { action: 'cancel'; bundle: string };

/** How long a listing Bundle that could take hold of a released object is given to, before the sweep cancels its countdown. */
export const TAKE_HOLD_GRACE_MS = 30_000;

/**
 * A released object that live Bundles list again. Listing an object cancels
 * its countdown (a new one starts when it is dropped); the listing Bundle's
 * pass does that as it takes hold. A Bundle that cannot take hold of it
 * leaves the countdown on, to run out while the object is listed, and the
 * object would be deleted at once when dropped: so the sweep cancels the
 * countdown in its place, at once where the Bundle lists it at a version the
 * server no longer serves (fuzz softdelete 20284), and where it lists it at
 * a served version once the object has stayed so for TAKE_HOLD_GRACE_MS
 * (`listedForMs`, since this sweep first saw it listed with its countdown:
 * the take-hold refused, the Bundle stuck before it).
 */
export function decideListedRelease(
  meta: ReleasedObjectMeta,
  listings: readonly ReleasedObjectListing[],
  listedForMs = 0,
): ListedReleaseDecision {
  if (!isReleasedByBundle(meta)) return { action: 'skip', reason: 'not released, or has a controller owner' };
  const annotations = meta.annotations ?? {};
  // A stale approval goes with the stamp: it must never count for a later countdown.
  if (annotations[Annotations.deletionTimestamp] === undefined && annotations[Annotations.deletionApproved] === undefined)
    return { action: 'skip', reason: 'no countdown' };
  const blocked = listings.find((listing) => !listing.served);
  if (blocked !== undefined) return { action: 'cancel', bundle: blocked.bundle };
  const first = listings[0];
  if (first !== undefined && listedForMs >= TAKE_HOLD_GRACE_MS) return { action: 'cancel', bundle: first.bundle };
  // Its take-hold takes the object out of the sweep's watch; looked at again all the same (no Bundle event may come).
  return { action: 'recheck', reason: 'the listing Bundle takes hold of it' };
}

/**
 * Where released objects are looked for (the sweeper's watches, `bundlesmith
 * pending`): namespaced resources the operator may list, watch, patch and
 * delete; not events, not subresources.
 */
export function sweepable(rt: { namespaced: boolean; verbs: readonly string[]; plural: string }): boolean {
  const need = ['list', 'watch', 'patch', 'delete'];
  return rt.namespaced && need.every((v) => rt.verbs.includes(v)) && rt.plural !== 'events' && !rt.plural.includes('/');
}
