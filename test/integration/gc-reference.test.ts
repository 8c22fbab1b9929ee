/**
 * Reference mode: the same garbage-collection scenarios against
 * kube-controller-manager's own collector, on a second control plane of
 * this file's own (ours is not running there). Both must reach the same end
 * states; where they cannot, the scenario says so.
 */
import { startControlPlane, startControllerManager, stopControlPlane, stopControllerManager, type ControlPlaneState } from '../../hack/controlplane.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import type { ResourceType } from '../../src/kube/types.js';
import { createNamespace, resourceType, type TestEnv } from './harness.js';
import { installWidgetCrd, scenarios, type ScenarioContext } from './gc-scenarios.js';

let state: ControlPlaneState | undefined;
let env: TestEnv;
let cm: ResourceType;
let widget: ResourceType;

beforeAll(async () => {
  state = await startControlPlane({ withGarbageCollector: true });
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig));
  const discovery = new Discovery(client, 0);
  await discovery.refresh();
  env = { client, discovery, kubeconfig: state.kubeconfig, close: () => client.close() };
  // kube-controller-manager runs here under its own identity (no service
  // account credentials), which RBAC does not let delete or patch arbitrary
  // objects; grant it the garbage collector's bootstrap role.
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
  await client.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'bundlesmith-test:kcm-garbage-collector' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:controller:generic-garbage-collector' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' }],
  });
  cm = await resourceType(env, 'v1', 'ConfigMap');
  widget = await installWidgetCrd(env);
}, 120_000);

afterAll(() => {
  env?.close();
  if (state) stopControlPlane(state, { keepDir: process.env.BUNDLESMITH_KEEP_CLUSTER === '1' });
});

describe('garbage collector (reference: kube-controller-manager) on a real apiserver', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))('%s', async (_name, scenario) => {
    // kube-controller-manager re-discovers resources every 30 s and exposes
    // no way to ask whether it watches one yet: wait one period and a margin.
    const collectorWatches = () => new Promise<void>((resolve) => setTimeout(resolve, 35_000));
    const cp = state;
    if (!cp) throw new Error('no control plane');
    const collectorDown = () => Promise.resolve(stopControllerManager(cp));
    const collectorUp = () => startControllerManager(cp);
    const ctx: ScenarioContext = { env, ns: await createNamespace(env, 'gc'), ns2: await createNamespace(env, 'gc2'), cm, widget, timeoutMs: 100_000, collectorWatches, collectorDown, collectorUp };
    await scenario.run(ctx);
  }, 240_000);
});
