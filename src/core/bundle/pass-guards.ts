/**
 * The checks a Bundle pass makes on fresh reads before it writes, and the
 * kinds it records in status.managedKinds. Pure: the controller reads, these
 * decide.
 */
import type { BundlePlan } from './plan.js';
import { kindKey, type LiveObject } from './objects.js';

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
export function writesOwnerReference(plan: Pick<BundlePlan, 'claims' | 'resources'>): boolean {
  return plan.claims.length > 0 || plan.resources.some((r) => (r.action === 'apply' || r.action === 'adopt') && r.apply.needed);
}

/**
 * The kinds a pass is about to make this Bundle the owner of (claims and
 * applies that send something) that the stored status.managedKinds does not
 * record yet, sorted; empty when there are none. The finalizer lists
 * exactly the kinds of the spec and of status.managedKinds to find what the
 * Bundle controls: a kind written before it is recorded could leave an
 * object unseen by the finalizer, then collected with the Bundle, its
 * deletionDelay ignored (softdelete fuzz seed 728). So these are recorded
 * first (write-ahead), and only then written.
 */
export function unrecordedKinds(plan: Pick<BundlePlan, 'claims' | 'resources'>, recorded: readonly string[] | undefined): string[] {
  const have = new Set(recorded ?? []);
  const kinds = new Set<string>();
  for (const c of plan.claims) kinds.add(kindKey(c.target.apiVersion, c.target.kind));
  for (const r of plan.resources) if ((r.action === 'apply' || r.action === 'adopt') && r.apply.needed) kinds.add(kindKey(r.apply.desired.apiVersion, r.apply.desired.kind));
  return [...kinds].filter((k) => !have.has(k)).sort();
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

/**
 * status.managedKinds: the kinds (kindKey) of the spec's objects and of
 * everything the Bundle controls or is pruning, sorted. A kind recorded
 * before stays only while something of it is still relevant, so the
 * finalizer and the next passes keep watching kinds whose objects may still
 * be there after they left the spec.
 */
export function managedKinds(
  recorded: readonly string[] | undefined,
  specObjects: readonly { apiVersion: string; kind: string }[],
  controlled: readonly LiveObject[],
  plan: Pick<BundlePlan, 'prune' | 'withheld'>,
): string[] {
  const kinds = new Set<string>(recorded ?? []);
  for (const o of specObjects) kinds.add(kindKey(o.apiVersion, o.kind));
  const stillRelevant = new Set<string>([
    ...specObjects.map((o) => kindKey(o.apiVersion, o.kind)),
    ...controlled.map((o) => kindKey(o.apiVersion, o.kind)),
    ...plan.prune.map((a) => kindKey(a.target.apiVersion, a.target.kind)),
    ...plan.withheld.map((w) => kindKey(w.action.target.apiVersion, w.action.target.kind)),
  ]);
  return [...kinds].filter((k) => stillRelevant.has(k)).sort();
}

/**
 * `status` with the kinds of the Bundle's spec objects added to
 * status.managedKinds (none taken away), sorted: written with the
 * finalizer, ahead of any object (see unrecordedKinds).
 */
export function withSpecKinds<S extends { managedKinds?: string[] | undefined }>(status: S, bundle: { spec: { resources: readonly { spec: { object?: { apiVersion: string; kind: string } | undefined } }[] } }): S {
  const kinds = new Set(status.managedKinds ?? []);
  for (const r of bundle.spec.resources) if (r.spec.object) kinds.add(kindKey(r.spec.object.apiVersion, r.spec.object.kind));
  return { ...status, managedKinds: [...kinds].sort() };
}
