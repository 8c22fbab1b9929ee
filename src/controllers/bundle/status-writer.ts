/**
 * Writing a Bundle's status, and the bookkeeping that follows it: the
 * events its transitions call for (core/bundle/exit-status.ts decides which)
 * and the gauges summed over every Bundle.
 */
import type { BundleStatus } from '../../api/bundle-status.js';
import { ResourceConditionTypes } from '../../api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { transitionEvents, type StatusSubject } from '../../core/bundle/exit-status.js';
import { statusEqual } from '../../core/bundle/status.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { BundleAges, OperatorMetrics } from '../../observability/metrics.js';
import type { EventRecorder, EventTarget } from '../events.js';
import type { BundleApi } from './api.js';
import type { BundleKey } from './object-cache.js';

/** A stored Bundle as the status decisions read it. Its status is the operator's own, written through the schema's type. */
export function statusSubject(live: KubeObject): StatusSubject {
  return { metadata: live.metadata, status: live.status as BundleStatus | undefined };
}

/**
 * Replaces the status of `live` (at its resourceVersion) when it differs.
 * True when it was written: only then did the status change, and only then
 * do its transitions call for events (a pass on a stale read that loses the
 * write leaves them to the pass on the newer Bundle).
 */
export async function writeBundleStatus(
  api: Pick<BundleApi, 'replaceStatus'>,
  live: KubeObject,
  status: BundleStatus,
  log: Logger,
): Promise<boolean> {
  if (statusEqual(statusSubject(live).status, status)) return false;
  try {
    await api.replaceStatus(BUNDLE_RESOURCE_TYPE, { ...live, status });
    return true;
  } catch (err) {
    // A newer Bundle is on its way to us through the watch; that pass writes the status.
    // (Only a 409 means that here: a 422 on a status update is the server refusing the status itself.)
    if (isConflict(err)) log.debug('status conflict; a newer Bundle will be reconciled');
    else if (!isNotFound(err)) throw err;
    return false;
  }
}

export async function reportTransitions(
  events: EventRecorder,
  target: EventTarget,
  before: BundleStatus | undefined,
  after: BundleStatus,
  errorReason: string,
): Promise<void> {
  for (const e of transitionEvents(before, after, errorReason)) {
    if (e.type === 'Normal') await events.normal(target, e.reason, e.message);
    else await events.warning(target, e.reason, e.message);
  }
}

/**
 * bundlesmith_pending_deletions, bundlesmith_deletions_awaiting_approval and
 * bundlesmith_bundles{condition,status}: sums over every Bundle's last
 * status; and the ages read at scrape time (bundleAges): how long the Bundle
 * not Ready longest has been so, and how overdue the pending deletions are.
 */
export class BundleGauges {
  private readonly pendingByBundle = new Map<BundleKey, number>();
  private readonly awaitingByBundle = new Map<BundleKey, number>();
  private readonly conditionsByBundle = new Map<BundleKey, string[]>();
  /** When a Bundle that is not Ready last changed its Ready condition (ms); absent while Ready. */
  private readonly notReadySince = new Map<BundleKey, number>();
  /** The deleteAfter times (ms) of a Bundle's pending deletions that do not wait for an approval. */
  private readonly deleteAfters = new Map<BundleKey, number[]>();

  constructor(
    private readonly metrics: OperatorMetrics | undefined,
    private readonly now: () => number = Date.now,
  ) {
    metrics?.observeBundleAges(() => this.bundleAges());
  }

  /** A Bundle's share, from the status its pass wrote. */
  record(key: BundleKey, status: BundleStatus): void {
    this.metrics?.pendingDeletions.set(setShare(this.pendingByBundle, key, status.pendingDeletionCount ?? 0));
    this.metrics?.awaitingApproval.set(setShare(this.awaitingByBundle, key, status.awaitingApprovalCount ?? 0));
    this.setDrifted(
      key,
      (status.resourceStatuses ?? []).filter((r) =>
        r.conditions?.some((c) => c.type === ResourceConditionTypes.Drifted && c.status === 'True'),
      ).length,
    );
    this.setConditions(key, status);
    const ready = status.conditions?.find((c) => c.type === 'Ready');
    const since = ready?.lastTransitionTime !== undefined ? Date.parse(ready.lastTransitionTime) : NaN;
    if (ready?.status === 'True') this.notReadySince.delete(key);
    else this.notReadySince.set(key, Number.isFinite(since) ? since : (this.notReadySince.get(key) ?? this.now()));
    const due = (status.pendingDeletions ?? [])
      .filter((p) => p.waitingFor !== 'Approval')
      .map((p) => Date.parse(p.deleteAfter))
      .filter((t) => Number.isFinite(t));
    if (due.length > 0) this.deleteAfters.set(key, due);
    else this.deleteAfters.delete(key);
  }

  /** A Bundle that is gone counts for nothing. */
  forget(key: BundleKey): void {
    this.metrics?.pendingDeletions.set(setShare(this.pendingByBundle, key, 0));
    this.metrics?.awaitingApproval.set(setShare(this.awaitingByBundle, key, 0));
    this.setConditions(key, undefined);
    this.setDrifted(key, 0);
    this.notReadySince.delete(key);
    this.deleteAfters.delete(key);
  }

  bundleAges(): BundleAges {
    const now = this.now();
    let oldest = now;
    for (const t of this.notReadySince.values()) oldest = Math.min(oldest, t);
    let overdue = 0;
    let earliestDue = now;
    for (const times of this.deleteAfters.values()) {
      for (const t of times) {
        if (t >= now) continue;
        overdue++;
        earliestDue = Math.min(earliestDue, t);
      }
    }
    return { notReadyOldestSeconds: (now - oldest) / 1000, overdueDeletions: overdue, overdueOldestSeconds: (now - earliestDue) / 1000 };
  }

  /** bundlesmith_resources_drifted{namespace,bundle}: a series only while the Bundle has drifted resources. */
  private setDrifted(key: BundleKey, count: number): void {
    const gauge = this.metrics?.resourcesDrifted;
    if (!gauge) return;
    const slash = key.indexOf('/');
    const labels = { namespace: key.slice(0, slash), bundle: key.slice(slash + 1) };
    if (count === 0) gauge.remove(labels);
    else gauge.set(labels, count);
  }

  private setConditions(key: BundleKey, status: BundleStatus | undefined): void {
    if (status?.conditions)
      this.conditionsByBundle.set(
        key,
        status.conditions.map((c) => `${c.type}\u0000${c.status}`),
      );
    else this.conditionsByBundle.delete(key);
    const gauge = this.metrics?.bundlesByCondition;
    if (!gauge) return;
    const counts = new Map<string, number>();
    for (const list of this.conditionsByBundle.values()) for (const c of list) counts.set(c, (counts.get(c) ?? 0) + 1);
    gauge.reset();
    for (const [c, n] of counts) {
      const [condition = '', conditionStatus = ''] = c.split('\u0000');
      gauge.set({ condition, status: conditionStatus }, n);
    }
  }
}

/** Sets one Bundle's count and returns the total over all Bundles. */
function setShare(shares: Map<BundleKey, number>, key: BundleKey, count: number): number {
  if (count === 0) shares.delete(key);
  else shares.set(key, count);
  let total = 0;
  for (const n of shares.values()) total += n;
  return total;
}
