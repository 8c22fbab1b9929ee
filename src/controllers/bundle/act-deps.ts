/**
 * What the act phase of a Bundle pass works with (its ports, limits and the
 * outcome it fills in), shared by the act phase (act.ts), its prune
 * (prune-writes.ts), the write-ahead of the Bundle's record (record.ts) and
 * the finalizer.
 */

import type { ReleaseRecords } from '../softdelete/release-records.js';
import type { ClaimEntry } from '../../api/bundle-status.js';
import { Reasons } from '../../api/names.js';
import type { HealthCheckTable } from '../../core/bundle/health-checks.js';
import type { CrdReadinessTable } from '../../core/bundle/kinds.js';
import { type ObjectTarget } from '../../core/bundle/prune.js';
import { objectKey } from '../../core/bundle/objects.js';
import { bundleEpochKey, objectEpochKey, type ListingEpochs } from '../listing-epochs.js';
import type { ActionFailure } from '../../core/bundle/status.js';
import { errorMessage, type SendGuard } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../kube/clock.js';
import type { EventRecorder } from '../events.js';
import type { BundleApi } from './api.js';

export interface ActDeps {
  api: BundleApi;
  /** By resource name: objects the Bundle's identity may not read; they are not written, and nothing is pruned. */
  readFailures?: ReadonlyMap<string, ActionFailure>;
  events: EventRecorder;
  /** The read before an expired delete refreshes it; that delete is decided on its lower bound. */
  serverTime: Pick<ServerTime, 'lowerBound'>;
  log: Logger;
  /** Claims and applies in flight at once within one Bundle. */
  applyConcurrency: number;
  /** Prune actions (deletes, stamps, releases) of one wave in flight at once within one Bundle; PRUNE_CONCURRENCY by default. */
  pruneConcurrency?: number;
  /**
   * The CRDs' readiness rules: given, the readiness of what the pass applied
   * is read from the apply's answer (withAppliedReadiness), so the pass that
   * applied an object can report it Ready.
   */
  crdReadiness?: CrdReadinessTable;
  healthChecks?: HealthCheckTable;
  /** Counts every delete by kind and reason (the per-object trail beside the log). */
  metrics?: { deleted(kind: string, reason: string): void };
  /** Send-time checks of the prune's writes; without one, a prune is checked only when it starts. */
  fence?: PruneFence;
  /** A take-hold of a released object ends its release, recorded before the take-hold is sent (softdelete/release-records.ts). */
  releaseRecords?: Pick<ReleaseRecords, 'end' | 'endIfRecorded'>;
}

/**
 * The send-time check of a prune's writes (ListingEpochs): each delete,
 * stamp and release goes only while its Bundle, and every Bundle listing its
 * object, is unchanged since the prune was decided.
 */
export interface PruneFence {
  /** The epoch the prune is decided at, taken right before the fresh list of the namespace's Bundles. */
  decidedAt(): number;
  /** Refuses a write on `target` once its Bundle or a Bundle listing the object changed after `decidedAt`. */
  guard(decidedAt: number, target: ObjectTarget): SendGuard;
}

/**
 * Reads, claims and applies in flight at once within one Bundle, by default
 * (the controller's applyConcurrency). A Bundle's objects at one level are
 * independent: four at a time made a Bundle of 200 ConfigMaps wait about 50
 * round trips for its reads and as many for its applies.
 */
export const APPLY_CONCURRENCY = 32;

/**
 * Prune actions of one wave in flight at once, by default. Each is a fresh
 * read and a delete (or one patch); a Bundle holds at most 256 objects, so
 * a pass's due objects go in a few round trips rather than one per object.
 */
export const PRUNE_CONCURRENCY = 32;

/** What a pass did to the cluster, for the status and the requeue decision. */
export interface PassOutcome {
  applyFailures: Map<string, ActionFailure>;
  /** By resource name: the object as the API server answered this pass's apply. */
  applied: Map<string, KubeObject>;
  pruneFailures: { target: ObjectTarget; message: string; reason?: string }[];
  wrote: boolean;
  /** Set when a send-time check stopped the prune part-way: why. Nothing more of the pass is written; it is decided again. */
  abandoned?: string;
  /** The Bundle as this pass's last write-ahead of its record left it: the pass's status is written over it (not over the older read). */
  recorded?: KubeObject;
  /** Uids of the objects whose claim this pass withdrew: they leave status.claims. */
  withdrawn?: Set<string>;
  /** The claims this pass sent, by outcome: landed (confirmed in status.claims) or unknown (pending; claim-record.ts). */
  claimsSent?: { landed: ClaimEntry[]; unknown: ClaimEntry[] };
}

/** A 403: the message is the API server's, which names the identity, the verb and the resource. */
export function forbiddenFailure(err: unknown): ActionFailure {
  return { message: errorMessage(err), terminal: false, reason: Reasons.Forbidden };
}

export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(lanes);
}

/**
 * The send-time check of a Bundle's writes (key: namespace/name): a write on
 * an object is refused once the Bundle, or any Bundle listing the object,
 * moved after the decision (ListingEpochs).
 */
export function pruneFenceOf(epochs: ListingEpochs, key: string): PruneFence {
  const bundleKey = bundleEpochKey(key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1));
  return {
    decidedAt: () => epochs.current(),
    guard: (decidedAt, t) => {
      const target = objectEpochKey(
        objectKey({
          apiVersion: t.apiVersion,
          kind: t.kind,
          metadata: { name: t.name, ...(t.namespace !== undefined ? { namespace: t.namespace } : {}) },
        }),
      );
      return epochs.guard(decidedAt, [bundleKey, target], `Bundle ${key}, or a Bundle listing ${t.kind} ${t.name},`);
    },
  };
}
