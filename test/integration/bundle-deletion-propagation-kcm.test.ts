/**
 * Issue 9, the Bundle finalizer under orphan and foreground propagation with
 * kube-controller-manager as the collector: a control plane of this file's
 * own where kube-controller-manager's garbage collector runs (ours does not).
 * Scenarios in deletion-propagation.ts.
 */
import { startControlPlane, startControllerManager, stopControllerManager, stopControlPlane, type ControlPlaneState } from '../../hack/controlplane.js';
import { applyCrd } from '../../hack/crd-install.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import { silentLogger } from '../../src/observability/logger.js';
import { Operator } from '../../src/operator.js';
import { systemClock } from '../../src/runtime/clock.js';
import { createNamespace, resourceType, waitFor, type TestEnv } from './harness.js';
import { types, type KnownTypes } from './bundles.js';
import { aLosingBundleWithdrawsItsClaim, foregroundKeepsWhatAConflictingBundleClaims, foregroundKeepsWhatAnotherBundleLists, orphanLeavesOnlyUserReferences, type PropagationContext } from './deletion-propagation.js';

let state: ControlPlaneState | undefined;
let env: TestEnv;
let t: KnownTypes;
let ns: string;
let operator: Operator | undefined;

beforeAll(async () => {
  state = await startControlPlane({ withGarbageCollector: true });
  await applyCrd(state.kubeconfig);
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig));
  const discovery = new Discovery(client, 0);
  await discovery.refresh();
  env = { client, discovery, kubeconfig: state.kubeconfig, close: () => client.close() };
  // kube-controller-manager runs under its own identity here: grant it the garbage collector's role.
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
  await client.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'bundlesmith-test:kcm-garbage-collector' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:controller:generic-garbage-collector' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' }],
  });
  t = await types(env);
  ns = await createNamespace(env, 'bdelkcm');
  // No collector of ours: kube-controller-manager's is the only one.
  operator = new Operator({ client, clock: systemClock, logger: silentLogger(), namespace: ns, workers: 2 });
  await operator.start();
  await waitFor('the operator to be ready', () => operator?.ready() === true);
}, 180_000);

afterAll(async () => {
  await operator?.stop();
  env?.close();
  if (state) stopControlPlane(state, { keepDir: process.env.BUNDLESMITH_KEEP_CLUSTER === '1' });
});

const context = (): PropagationContext => {
  const cp = state;
  if (!cp) throw new Error('no control plane');
  return {
    env,
    ns,
    t,
    pauseCollector: () => {
      stopControllerManager(cp);
      return Promise.resolve();
    },
    resumeCollector: async () => {
      if (cp.pids['kube-controller-manager'] === undefined) await startControllerManager(cp);
    },
    collectorTimeoutMs: 90_000,
  };
};

it('a losing Bundle withdraws its claim when it stops listing the object, and when it is deleted; the winner\'s foreground deletion then collects it', async () => {
  await aLosingBundleWithdrawsItsClaim(context());
});

it('orphan: every object stays with only its user\'s references, and kube-controller-manager keeps it when a former sibling is deleted', async () => {
  await orphanLeavesOnlyUserReferences(context());
}, 180_000);

it('foreground: an object another live Bundle lists is let go before the finalizer steps aside, and kube-controller-manager keeps it', async () => {
  await foregroundKeepsWhatAnotherBundleLists(context());
}, 240_000);

it('foreground, kube-controller-manager running throughout: an object a losing Bundle claims (non-controller reference) is kept, then taken by it', async () => {
  await foregroundKeepsWhatAConflictingBundleClaims(context());
}, 240_000);
