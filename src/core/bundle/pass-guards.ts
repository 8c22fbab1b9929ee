/**
 * The checks a Bundle pass makes on fresh reads before it writes. Pure: the
 * controller reads, these decide. (The kinds a pass records before writing
 * are the kind inventory's: kind-inventory.ts.)
 */
import type { BundlePlan } from './plan.js';

/** The Bundle as a fresh read shows it: enough to tell an incarnation and a spec apart. */
export interface BundleReadMeta {
  uid: string;
  generation?: number | undefined;
  deletionTimestamp?: string | undefined;
}

/**
 * Whether the pass writes this Bundle's UID into an object (a claim, or an
 * apply that sends something). Such a write names the Bundle as controller:
 * it must be confirmed on a fresh read to be the live incarnation first, or
 * an object could be written with a gone Bundle's UID and be collected at
 * once. No-op passes read nothing.
 */
export function writesOwnerReference(plan: Pick<BundlePlan, 'takeHolds' | 'resources'>): boolean {
  return plan.takeHolds.length > 0 || plan.resources.some((r) => (r.action === 'apply' || r.action === 'adopt') && r.apply.needed);
}

/** The fresh read is the incarnation the pass decided on (same UID) and it is not being deleted. */
export function isLiveIncarnation(fresh: { metadata: BundleReadMeta } | undefined, uid: string): boolean {
  return fresh !== undefined && fresh.metadata.uid === uid && fresh.metadata.deletionTimestamp === undefined;
}

/**
 * Before pruning: the fresh Bundle is the one read (same UID, same
 * generation, not being deleted). A prune decided on an older spec could
 * delete what the new one lists again.
 */
export function unchangedSinceRead(fresh: { metadata: BundleReadMeta } | undefined, read: BundleReadMeta): boolean {
  return isLiveIncarnation(fresh, read.uid) && fresh?.metadata.generation === read.generation;
}
