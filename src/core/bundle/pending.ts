/**
 * The Bundle's pending deletions, read off a plan: what status.pendingDeletions
 * reports and what `bundlesmith pending` lists, from the one function.
 */
import type { PendingDeletion } from '../../api/bundle-status.js';
import type { BundlePlan } from './plan.js';

/**
 * Objects counting down (stamped now or before: waiting for the delay), due
 * ones a gate holds (waiting for an approval or the Bundle's readiness),
 * plus expired ones until their delete has gone through.
 */
export function pendingDeletionsOf(plan: BundlePlan): PendingDeletion[] {
  return plan.prune.flatMap((a): PendingDeletion[] => {
    const at = { apiVersion: a.target.apiVersion, kind: a.target.kind, name: a.target.name };
    switch (a.action) {
      case 'mark':
      case 'wait':
        return [{ ...at, deletionTimestamp: a.deletionTimestamp, deleteAfter: a.deleteAfter, waitingFor: 'Delay' }];
      case 'await':
        return [{ ...at, deletionTimestamp: a.deletionTimestamp, deleteAfter: a.deleteAfter, waitingFor: a.waitingFor }];
      case 'delete':
        return a.afterDelay && a.deletionTimestamp !== undefined && a.deleteAfter !== undefined
          ? [{ ...at, deletionTimestamp: a.deletionTimestamp, deleteAfter: a.deleteAfter }]
          : [];
      default:
        return [];
    }
  });
}
