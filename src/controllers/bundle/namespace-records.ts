/**
 * What the namespace's live Bundles record, as the Bundle informer holds
 * them: the claims on each object and the latest countdown stamp each
 * object's record holds, kept per namespace until any Bundle there changes
 * (forget), and what a pass that cannot decide may cancel in its record.
 */
import type { Bundle } from '../../api/bundle.js';
import type { PendingDeletion } from '../../api/bundle-status.js';
import { listingsByObject, type BundleListing } from '../../core/bundle/ownership.js';
import { isControlledBy } from '../../core/bundle/objects.js';
import { latestStampsElsewhere, listedKeysOf } from '../../core/bundle/countdown-record.js';
import type { SupervisedInformer } from '../../runtime/informer.js';
import type { ObjectCache } from './object-cache.js';

export class NamespaceRecords {
  /** Claims of each namespace's live Bundles (claimsOf), dropped on any Bundle event there. */
  private readonly listingsByNamespace = new Map<string, ReadonlyMap<string, readonly BundleListing[]>>();
  /** The latest countdown stamp each namespace's Bundles record per object (latestStampsElsewhere), rebuilt as claimsByNamespace is. */
  private readonly stampsByNamespace = new Map<string, ReadonlyMap<string, string>>();

  constructor(
    private readonly bundles: SupervisedInformer,
    private readonly objects: ObjectCache,
  ) {}

  /** A Bundle of the namespace changed: its claims and stamps are read again on the next pass that needs them. */
  forget(namespace: string): void {
    this.listingsByNamespace.delete(namespace);
    this.stampsByNamespace.delete(namespace);
  }

  /**
   * The claims of every live Bundle of the namespace as the Bundle informer
   * holds them (this pass's Bundle included: it plans the stored spec), kept
   * until a Bundle of the namespace changes. A pass would otherwise walk
   * every Bundle's resources: with a thousand Bundles in a namespace, that
   * walk was most of a no-op pass.
   */
  listingsOf(namespace: string): ReadonlyMap<string, readonly BundleListing[]> {
    let listings = this.listingsByNamespace.get(namespace);
    if (listings === undefined) {
      listings = listingsByObject(this.bundles.list().filter((b) => (b.metadata.namespace ?? '') === namespace));
      this.listingsByNamespace.set(namespace, listings);
    }
    return listings;
  }

  /**
   * The latest countdown stamp the namespace's Bundles record for each
   * object (this one's own record included: its entries are never later
   * than what it decides on), kept as claimsOf keeps the claims.
   */
  stampsOf(namespace: string): ReadonlyMap<string, string> {
    let stamps = this.stampsByNamespace.get(namespace);
    if (stamps === undefined) {
      stamps = latestStampsElsewhere(
        this.bundles
          .list()
          .filter((b) => (b.metadata.namespace ?? '') === namespace)
          .map((b) => b.status as { pendingDeletions?: PendingDeletion[] } | undefined),
        namespace,
      );
      this.stampsByNamespace.set(namespace, stamps);
    }
    return stamps;
  }

  /**
   * A countdown over for a pass that cannot decide: its object, as a synced
   * cache of its kind shows it, is gone or not controlled by this Bundle
   * (cancelled by hand, let go, handed over). A kind with no synced cache
   * says nothing: the entry stays.
   */
  notHeldInCache(bundle: Bundle): (p: PendingDeletion) => boolean {
    return (p) => {
      const informer = this.objects.informerFor(p.apiVersion, p.kind);
      if (informer === undefined || !informer.hasSynced()) return false;
      const o = informer.get(bundle.metadata.namespace, p.name);
      return o === undefined || !isControlledBy(o, bundle.metadata.uid);
    };
  }

  /** What the live Bundles of this Bundle's namespace list now (its own spec included), by object key: see withListedCountdownsCancelled. */
  listedNow(bundle: Bundle): Set<string> {
    return new Set([
      ...listedKeysOf(bundle.spec.resources, bundle.metadata.namespace),
      ...this.listingsOf(bundle.metadata.namespace).keys(),
    ]);
  }
}
