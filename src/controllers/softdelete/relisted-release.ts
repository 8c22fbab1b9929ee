/**
 * A released object that live Bundles list again is theirs, and listing it
 * cancels its countdown. The listing Bundle's pass does that as it takes
 * hold; a Bundle that lists it at a version the server no longer serves
 * cannot, so the released-object sweep cancels the countdown in its place
 * (decideListedRelease, fuzz softdelete 20284). The object stays released:
 * when no Bundle lists it, the sweep starts a new countdown.
 */
import { Annotations, EventReasons, FIELD_MANAGER } from '../../api/names.js';
import { cancelReleasedCountdownPatch } from '../../core/bundle/release.js';
import { decideListedRelease, TAKE_HOLD_GRACE_MS, type ReleasedObjectListing } from '../../core/softdelete/sweep.js';
import { guardedPatch } from '../../kube/guarded-write.js';
import type { KubeClient } from '../../kube/client.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { WorkResult } from '../../runtime/workers.js';
import type { EventRecorder } from '../events.js';
import type { ReleaseProofs } from './release-proofs.js';

/** The sweep's handling of released objects live Bundles list (one per sweeper: it remembers what it saw listed). */
export class RelistedReleases {
  /** When this sweep first saw each object (by uid@resourceVersion) listed with its countdown on. */
  private readonly firstSeenListed = new Map<string, number>();
  /**
   * uid@stamp of the countdowns this sweep saw on an object a live Bundle
   * listed: that listing cancelled them, whatever becomes of the write that
   * says so on the object (the take-hold, the sweep's cancel: an admission
   * policy or RBAC may refuse both; red team 27).
   */
  private readonly cancelledByListing = new Set<string>();

  constructor(private readonly d: { events: EventRecorder; proofs: ReleaseProofs; now: () => number }) {}

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
    this.sawListed(cached.metadata);
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
    if (patch === undefined) return 'forget';
    const { namespace = '', name } = cached.metadata;
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

  /** A live Bundle lists the object: the countdown on it now is cancelled (readAs). */
  sawListed(meta: { uid?: string | undefined; annotations?: Readonly<Record<string, string>> | undefined }): void {
    if (meta.annotations?.[Annotations.deletionTimestamp] === undefined) return;
    if (this.cancelledByListing.size > 10_000) this.cancelledByListing.clear();
    this.cancelledByListing.add(stampKey(meta));
  }

  /**
   * The object as the sweep reads it: a countdown it saw on the object while
   * a live Bundle listed it reads as none (with any approval given for it),
   * so that dropping the object starts a new countdown rather than ending
   * the first, also where no write could cancel it (red team 27). Held in
   * memory only: a restart forgets what the object itself does not say (a
   * known limit, docs/safety.md).
   */
  readAs<M extends { uid?: string | undefined; annotations?: Readonly<Record<string, string>> | undefined }>(meta: M): M {
    if (!this.cancelledByListing.has(stampKey(meta))) return meta;
    const {
      [Annotations.deletionTimestamp]: _cancelled,
      [Annotations.deletionApproved]: _approval,
      ...annotations
    } = meta.annotations ?? {};
    return { ...meta, annotations };
  }
}

function stampKey(meta: { uid?: string | undefined; annotations?: Readonly<Record<string, string>> | undefined }): string {
  return `${meta.uid ?? ''}@${meta.annotations?.[Annotations.deletionTimestamp] ?? ''}`;
}
