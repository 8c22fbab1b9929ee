/**
 * A released object that live Bundles list again is theirs, and listing it
 * cancels its countdown. The listing Bundle's pass does that as it takes
 * hold; a Bundle that lists it at a version the server no longer serves
 * cannot, so the released-object sweep cancels the countdown in its place
 * (decideListedRelease, fuzz softdelete 20284). The object stays released:
 * when no Bundle lists it, the sweep starts a new countdown.
 */
import { Annotations, EventReasons, FIELD_MANAGER } from '../../api/names.js';
import { cancelReleasedCountdownPatch, recordedReleasePatch, restampReleasePatch } from '../../core/bundle/release.js';
import { signedWithRecord } from '../../core/softdelete/provenance.js';
import { SeenKeys } from '../../runtime/seen-keys.js';
import { decideListedRelease, TAKE_HOLD_GRACE_MS, type ReleasedObjectListing } from '../../core/softdelete/sweep.js';
import { guardedPatch } from '../../kube/guarded-write.js';
import type { Discovery } from '../../kube/discovery.js';
import { isLiveBundle, listedObjects } from '../../core/bundle/ownership.js';
import { objectKey } from '../../core/bundle/objects.js';
import type { KubeClient } from '../../kube/client.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { WorkResult } from '../../runtime/workers.js';
import type { EventRecorder } from '../events.js';
import type { ReleaseProofs } from './release-proofs.js';
import type { ReleaseRecords } from './release-records.js';
import { recordedObjectOf } from '../../core/softdelete/release-record.js';

/** The sweep's handling of released objects live Bundles list (one per sweeper: it remembers what it saw listed). */
export class RelistedReleases {
  /** When this sweep first saw each object (by uid@resourceVersion) listed with its countdown on. */
  private readonly firstSeenListed = new Map<string, number>();
  /** uid@resourceVersion of the releases signed before records this sweep recorded (or tried to). */
  private readonly olderReleasesSeen = new SeenKeys();

  constructor(
    private readonly d: {
      events: EventRecorder;
      proofs: ReleaseProofs;
      records: ReleaseRecords;
      now: () => number;
    },
  ) {}

  /**
   * Cancels the countdown of a released object a live Bundle lists but cannot take hold of; anything else is left to
   * the listing Bundle. `writer`: who writes to the object (the lockdown identity of its namespace, else the operator).
   */
  async cancelCountdown(
    writer: KubeClient,
    rt: ResourceType,
    cached: KubeObject,
    listings: readonly ReleasedObjectListing[],
  ): Promise<WorkResult> {
    const { d } = this;
    await this.sawListed(rt, cached);
    // The same state of the object since first seen listed: a write to it (a take-hold, a cancel) starts over.
    const seenKey = `${cached.metadata.uid ?? ''}@${cached.metadata.resourceVersion ?? ''}`;
    const firstSeen = this.firstSeenListed.get(seenKey) ?? d.now();
    if (!this.firstSeenListed.has(seenKey)) {
      if (this.firstSeenListed.size > 10_000) this.firstSeenListed.clear();
      this.firstSeenListed.set(seenKey, firstSeen);
    }
    const decision = decideListedRelease(cached.metadata, listings, d.now() - firstSeen);
    if (decision.action === 'recheck') return { requeueAfterMs: TAKE_HOLD_GRACE_MS };
    // Only a release this operator signed is signed again (over no stamp): the patch lands only on the state as read.
    if (decision.action === 'skip' || !(await d.proofs.proven(rt, cached))) return 'forget';
    const patch = cancelReleasedCountdownPatch(cached, d.proofs.sign);
    const object = recordedObjectOf(rt, cached);
    if (patch === undefined || object === undefined) return 'forget';
    const { namespace = '', name } = cached.metadata;
    if (!(await d.records.recordSigning(object, patch, cached.metadata))) return d.proofs.notCurrent(rt, cached);
    const cancelled = await guardedPatch(writer, { rt, namespace, name }, { patch, type: 'json', opts: { fieldManager: FIELD_MANAGER } });
    if (cancelled.kind === 'stale') return 'requeue';
    if (cancelled.kind === 'gone') return 'forget';
    if (cancelled.kind === 'declined') return 'forget';
    if (cancelled.kind !== 'written') throw cancelled.error;
    await d.events.normal(
      { apiVersion: rt.apiVersion, kind: rt.kind, name, namespace, uid: cached.metadata.uid },
      EventReasons.DeletionCancelled,
      `deletion of ${rt.kind} ${name} cancelled: Bundle ${decision.bundle} lists it again, and cannot take hold of it yet ` +
        `(a version the server no longer serves, or its take-hold refused); a new countdown starts when no Bundle lists it`,
    );
    return 'forget';
  }

  /**
   * A released object no Bundle lists, without a countdown that counts (none,
   * cancelled, superseded): a new one, signed again over the new stamp (its
   * proof checked as read, and the patch lands only on that state). The
   * signing is recorded first: a patch refused after it leaves an object
   * whose release is not the recorded one, kept. False where the object
   * does not carry the recorded release (kept, reported). Any failure (a
   * stale one too) is thrown: the work item's, logged, retried with backoff.
   */
  async startCountdown(writer: KubeClient, rt: ResourceType, o: KubeObject, deletionTimestamp: string): Promise<boolean> {
    const patch = restampReleasePatch(o, deletionTimestamp, this.d.proofs.sign);
    const object = recordedObjectOf(rt, o);
    // Signed again only while it carries the recorded release: its facts are then that signing's own (red team 29).
    if (object === undefined || !(await this.d.records.recordSigning(object, patch, o.metadata))) {
      await this.d.proofs.notCurrent(rt, o);
      return false;
    }
    const { namespace = '', name } = o.metadata;
    const marked = await guardedPatch(writer, { rt, namespace, name }, { patch, type: 'json', opts: { fieldManager: FIELD_MANAGER } });
    if (marked.kind !== 'written' && marked.kind !== 'declined') throw marked.error;
    return true;
  }

  /**
   * A release an earlier version signed (a v2 or v1 proof, checked as read):
   * signed again as it stands (v3, the same facts: recordedReleasePatch),
   * recorded first (asItStandsRecord: where there is no record, or it names
   * this release signed; a cancelled or ended one decides and nothing is
   * sent). True where the sweep should look again (written: its watch event
   * brings it back; changed since read: the patch is tried again on the new
   * state, the record already naming the same v3 proof).
   */
  async recordOlderRelease(writer: KubeClient, rt: ResourceType, o: KubeObject): Promise<boolean> {
    const proof = o.metadata.annotations?.[Annotations.releaseProof];
    const seen = `${o.metadata.uid ?? ''}@${o.metadata.resourceVersion ?? ''}`;
    const object = recordedObjectOf(rt, o);
    if (proof === undefined || signedWithRecord(proof) || object === undefined || this.olderReleasesSeen.has(seen)) return false;
    const patch = recordedReleasePatch(o, this.d.proofs.sign);
    if (patch === undefined || !(await this.d.records.recordSigningAsItStands(object, patch, proof))) {
      this.olderReleasesSeen.add(seen);
      return false;
    }
    const { namespace = '', name } = o.metadata;
    const signed = await guardedPatch(writer, { rt, namespace, name }, { patch, type: 'json', opts: { fieldManager: FIELD_MANAGER } });
    if (signed.kind === 'written' || signed.kind === 'stale') return true;
    this.olderReleasesSeen.add(seen);
    if (signed.kind === 'declined' || signed.kind === 'gone') return false;
    throw signed.error;
  }

  /** A live Bundle lists the object: its countdown is cancelled, recorded as such (ReleaseRecords.recordListingCancel). */
  async sawListed(rt: ResourceType, o: KubeObject): Promise<void> {
    await this.d.records.recordListingCancel({ ...o, apiVersion: rt.apiVersion, kind: rt.kind });
  }
}

/** The live Bundles among `bundles` that list the object, and whether the server serves the version each lists it at. */
export function listingsOf(
  bundles: readonly KubeObject[],
  object: { apiVersion: string; kind: string; metadata: { name: string; namespace: string } },
  discovery: Pick<Discovery, 'lookup'>,
): ReleasedObjectListing[] {
  const key = objectKey(object);
  return bundles.filter(isLiveBundle).flatMap((b) =>
    listedObjects(b)
      .filter((o) => objectKey({ apiVersion: o.apiVersion, kind: o.kind, metadata: o }) === key)
      .map((o) => ({ bundle: b.metadata.name, served: discovery.lookup(o.apiVersion, o.kind) !== undefined })),
  );
}
