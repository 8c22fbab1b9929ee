/**
 * Issue 23, classes 1 and 2 with kube-controller-manager's collector (ours
 * does not run): a control plane of this file's own (reference-cluster.ts).
 */
import { createNamespace, type TestEnv } from './harness.js';
import { startReferenceCluster, type ReferenceCluster } from './reference-cluster.js';
import { types, type KnownTypes } from './bundles.js';
import { crdUpgradeKeepsWhatTheFinalizerMustSee, labelTakenOffKeepsTheKind, type InventoryContext } from './inventory-scenarios.js';

let ref: ReferenceCluster | undefined;
let env: TestEnv;
let t: KnownTypes;
let ns: string;

beforeAll(async () => {
  ref = await startReferenceCluster({ bundleCrd: true });
  env = ref.env;
  t = await types(env);
  ns = await createNamespace(env, 'invkcm');
  await ref.startOperator(ns);
}, 180_000);

afterAll(async () => {
  await ref?.stop();
});

const ctx = (): InventoryContext => ({ env, ns, t, kubeconfig: env.kubeconfig });

it('1. a CRD upgrade hides nothing from the finalizer: kube-controller-manager keeps the Orphan and the delayed object', async () => {
  await crdUpgradeKeepsWhatTheFinalizerMustSee(ctx());
});

it('2. the managed label taken off objects counting down: kube-controller-manager keeps them when the Bundle is deleted', async () => {
  await labelTakenOffKeepsTheKind(ctx());
});
