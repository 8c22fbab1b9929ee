/**
 * The Bundle's pending deletions, read off a plan: what status.pendingDeletions
 * reports and what `bundlesmith pending` lists, from the one function.
 */
import type { PendingDeletion } from '../../api/bundle.js';
import type { BundlePlan } from './plan.js';

/** Objects counting down (stamped now or before), plus expired ones until their delete has gone through. */
export function pendingDeletionsOf(plan: BundlePlan): PendingDeletion[] {
  return plan.prune.flatMap((a) => {
    if (a.action === 'mark' || a.action === 'wait' || (a.action === 'delete' && a.afterDelay)) {
      if (a.deletionTimestamp === undefined || a.deleteAfter === undefined) return [];
      return [{ apiVersion: a.target.apiVersion, kind: a.target.kind, name: a.target.name, deletionTimestamp: a.deletionTimestamp, deleteAfter: a.deleteAfter }];
    }
    return [];
  });
}
