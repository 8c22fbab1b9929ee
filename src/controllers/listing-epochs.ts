/**
 * Listing epochs: a counter every Bundle event that can change what is
 * listed moves, remembered per Bundle and per object a Bundle lists (or
 * listed). A delete or release decided at epoch N may be sent only while
 * neither its Bundle nor its object has moved past N: a pass that prunes a
 * hundred objects under a request budget takes seconds, and a Bundle edited
 * in that time (a broken template put right a second later) must not lose
 * what it lists again. The check runs at the moment each request is sent
 * (a SendGuard), so it costs no request.
 *
 * What it cannot see is a change whose watch event has not arrived yet; the
 * fresh list of the namespace's Bundles at the start of the prune bounds
 * that window to the watch's delay.
 */
import type { SendGuard } from '../kube/errors.js';
import { listedObjectKeys, listedObjects } from '../core/bundle/ownership.js';
import { groupOf } from '../core/bundle/objects.js';
import type { KubeObject } from '../kube/types.js';

/** Entries kept before the oldest are trimmed; a pass older than a trimmed entry is treated as moved. */
const MAX_ENTRIES = 50_000;

export class ListingEpochs {
  private epoch = 0;
  private readonly movedAt = new Map<string, number>();
  /** Epochs of trimmed entries are at most this: a decision older than it cannot be checked and counts as moved. */
  private trimmedThrough = 0;

  /** The epoch a decision is taken at. */
  current(): number {
    return this.epoch;
  }

  /** A Bundle event that may change what is listed: the Bundle's key and the objects it lists, or listed. */
  bump(keys: Iterable<string>): void {
    this.epoch++;
    for (const k of keys) {
      this.movedAt.delete(k); // re-inserted last: the map stays in epoch order, oldest first
      this.movedAt.set(k, this.epoch);
    }
    this.trim();
  }

  /** Whether any of `keys` moved after `decidedAt`. */
  movedSince(decidedAt: number, keys: readonly string[]): boolean {
    if (decidedAt < this.trimmedThrough) return true;
    return keys.some((k) => (this.movedAt.get(k) ?? 0) > decidedAt);
  }

  /**
   * A guard refusing a write once `keys` moved after `decidedAt`, saying
   * `what` moved.
   */
  guard(decidedAt: number, keys: readonly string[], what: string): SendGuard {
    return () => (this.movedSince(decidedAt, keys) ? `${what} changed since the write was decided` : undefined);
  }

  private trim(): void {
    while (this.movedAt.size > MAX_ENTRIES) {
      const oldest = this.movedAt.entries().next().value;
      if (oldest === undefined) return;
      this.movedAt.delete(oldest[0]);
      this.trimmedThrough = Math.max(this.trimmedThrough, oldest[1]);
    }
  }
}

/** The epoch key of a Bundle. */
export function bundleEpochKey(namespace: string, name: string): string {
  return `bundle|${namespace}/${name}`;
}

/** The epoch key of an object a Bundle lists: by group, kind, namespace and name (an object is one at every version). */
export function objectEpochKey(objectKey: string): string {
  return `object|${objectKey}`;
}

/** A Bundle event that may change what is listed or who lists it: a new or gone incarnation, a new spec, a deletion. */
export function changesListing(b: KubeObject, old: KubeObject | undefined): boolean {
  if (old === undefined) return true;
  return (
    old.metadata.uid !== b.metadata.uid ||
    old.metadata.generation !== b.metadata.generation ||
    (old.metadata.deletionTimestamp === undefined) !== (b.metadata.deletionTimestamp === undefined)
  );
}

/**
 * The epoch keys a CRD event of `group` moves: those of the Bundles that
 * list an object of the group. What the server serves of the group may have
 * changed (a version no longer served): a write decided before is not sent.
 */
export function crdEpochKeys(bundles: readonly KubeObject[], group: string): string[] {
  return bundles
    .filter((b) => listedObjects(b).some((o) => groupOf(o.apiVersion) === group))
    .map((b) => bundleEpochKey(b.metadata.namespace ?? '', b.metadata.name));
}

/** The epoch keys a Bundle event moves: the Bundle's, and every object it lists or listed. */
export function epochKeysOf(b: KubeObject, old?: KubeObject): string[] {
  const objects = new Set([...listedObjectKeys(b), ...(old ? listedObjectKeys(old) : [])]);
  return [bundleEpochKey(b.metadata.namespace ?? '', b.metadata.name), ...[...objects].map(objectEpochKey)];
}
