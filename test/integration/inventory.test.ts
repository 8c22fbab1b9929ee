/**
 * Issue 23, classes 1 and 2 with our collector running (inventory-scenarios.ts);
 * inventory-kcm.test.ts runs the same with kube-controller-manager's.
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { operatorFixture } from './operator.js';
import {
  crdUpgradeKeepsWhatTheFinalizerMustSee,
  crdUpgradeThenForegroundDeletionFinishes,
  finalizerListsWithoutTheLabel,
  labelTakenOffKeepsTheKind,
  relistedAtUnservedVersionCancelsTheCountdown,
  type InventoryContext,
} from './inventory-scenarios.js';

let collector: GarbageCollector | undefined;
const f = operatorFixture('inv', () => ({
  garbageCollector: (client, clock) => {
    collector = new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 });
    return collector;
  },
}));
const ctx = (): InventoryContext => ({
  env: f.env,
  ns: f.ns,
  t: f.t,
  collectorWatches: (groupVersion) => (collector?.watchedResources() ?? []).some((rt) => rt.apiVersion === groupVersion),
});

it('1. a CRD upgrade (storage to v1, v1alpha1 no longer served) hides nothing from the finalizer: the Orphan and the delayed object are kept', async () => {
  await crdUpgradeKeepsWhatTheFinalizerMustSee(ctx());
});

it('1c. a CRD upgrade the collector follows, then a foreground deletion of the Bundle: it finishes (fuzz softdelete 19718)', async () => {
  await crdUpgradeThenForegroundDeletionFinishes(ctx());
});

it('1d. released objects listed again at a version no longer served: their countdowns are cancelled (fuzz softdelete 20284)', async () => {
  await relistedAtUnservedVersionCancelsTheCountdown(ctx());
});

it('2. the managed label taken off objects counting down keeps their kind in the inventory; deleting the Bundle keeps them', async () => {
  await labelTakenOffKeepsTheKind(ctx());
});

it('2b. the finalizer lists by owner reference, not by label', async () => {
  await finalizerListsWithoutTheLabel(ctx());
});
