/**
 * A released object that live Bundles list again is theirs, and listing it
 * cancels its countdown. The listing Bundle's pass does that as it takes
 * hold; a Bundle that lists it at a version the server no longer serves
 * cannot, so the released-object sweep cancels the countdown in its place
 * (decideListedRelease, fuzz softdelete 20284). The object stays released:
 * when no Bundle lists it, the sweep starts a new countdown.
 */
import { EventReasons, FIELD_MANAGER } from '../../api/names.js';
import { cancelReleasedCountdownPatch } from '../../core/bundle/release.js';
import { decideListedRelease, type ReleasedObjectListing } from '../../core/softdelete/sweep.js';
import { guardedPatch } from '../../kube/guarded-write.js';
import type { KubeClient } from '../../kube/client.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { WorkResult } from '../../runtime/workers.js';
import type { EventRecorder } from '../events.js';
import type { ReleaseProofs } from './release-proofs.js';

/** How soon a released object a Bundle lists, still counting down, is looked at again (its take-hold ends that). */
const RECHECK_MS = 30_000;

export interface RelistedDeps {
  events: EventRecorder;
  proofs: ReleaseProofs;
  /** Who writes to the object (the lockdown identity of its namespace, else the operator). */
  writer: KubeClient;
}

/** Cancels the countdown of a released object a live Bundle lists but cannot take hold of; anything else is left to the listing Bundle. */
export async function cancelRelistedCountdown(
  d: RelistedDeps,
  rt: ResourceType,
  cached: KubeObject,
  listings: readonly ReleasedObjectListing[],
): Promise<WorkResult> {
  const decision = decideListedRelease(cached.metadata, listings);
  if (decision.action === 'recheck') return { requeueAfterMs: RECHECK_MS };
  // Only a release this operator signed is signed again (over no stamp): the patch lands only on the state as read.
  if (decision.action === 'skip' || !(await d.proofs.proven(rt, cached))) return 'forget';
  const patch = cancelReleasedCountdownPatch(cached, d.proofs.sign);
  if (patch === undefined) return 'forget';
  const { namespace = '', name } = cached.metadata;
  const cancelled = await guardedPatch(d.writer, { rt, namespace, name }, { patch, type: 'json', opts: { fieldManager: FIELD_MANAGER } });
  if (cancelled.kind === 'stale') return 'requeue';
  if (cancelled.kind === 'gone') return 'forget';
  if (cancelled.kind !== 'written' && cancelled.kind !== 'declined') throw cancelled.error;
  await d.events.normal(
    { apiVersion: rt.apiVersion, kind: rt.kind, name, namespace, uid: cached.metadata.uid },
    EventReasons.DeletionCancelled,
    `deletion of ${rt.kind} ${name} cancelled: Bundle ${decision.bundle} lists it again, at a version the server no longer serves ` +
      `(it cannot take hold of it yet); a new countdown starts when no Bundle lists it`,
  );
  return 'forget';
}
