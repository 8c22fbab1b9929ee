/**
 * Issue 23, classes 1 and 2 with kube-controller-manager's collector (ours
 * does not run): a control plane of this file's own (reference-cluster.ts).
 */
import { referenceFixture } from './reference-cluster.js';
import { crdUpgradeKeepsWhatTheFinalizerMustSee, labelTakenOffKeepsTheKind, type InventoryContext } from './inventory-scenarios.js';

const f = referenceFixture('invkcm');

const ctx = (): InventoryContext => ({ env: f.env, ns: f.ns, t: f.t, kubeconfig: f.env.kubeconfig });

it('1. a CRD upgrade hides nothing from the finalizer: kube-controller-manager keeps the Orphan and the delayed object', async () => {
  await crdUpgradeKeepsWhatTheFinalizerMustSee(ctx());
});

it('2. the managed label taken off objects counting down: kube-controller-manager keeps them when the Bundle is deleted', async () => {
  await labelTakenOffKeepsTheKind(ctx());
});
