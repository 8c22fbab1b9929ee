/**
 * Issue 15.5, workloads that run: on a control plane of this file's own
 * where the workload controllers, kube-scheduler and simulated nodes (kwok)
 * run, a Bundle's Deployment gets a ReplicaSet and pods that become Running
 * and Ready, the Bundle becomes Ready by the operator's readiness rule for
 * Deployments (nothing here writes a status by hand), and a change of the
 * pod template rolls the Deployment out to a new ReplicaSet, and so does a
 * change to a ConfigMap or Secret it reads (envRefHash).
 */
import { Annotations } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { bundleManifest, BUNDLE_RESOURCE_TYPE, resourceCondition, waitForBundle, waitForReady, type ResourceFixture } from './bundles.js';
import { conditionOf, resourceType } from './harness.js';
import { rolloutOf, waitForRollout, workloadFixture } from './workloads.js';

const f = workloadFixture('workloads');

function deployment(
  name: string,
  replicas: number,
  options: { annotations?: Record<string, string>; nodeSelector?: Record<string, string> } = {},
): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(options.annotations ? { annotations: options.annotations } : {}) },
        spec: {
          ...(options.nodeSelector ? { nodeSelector: options.nodeSelector } : {}),
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
        },
      },
    },
  };
}

async function applyBundle(name: string, resources: ResourceFixture[]): Promise<KubeObject> {
  return await f.env.client.apply(BUNDLE_RESOURCE_TYPE, bundleManifest(f.ns, name, resources), { fieldManager: 'test-user', force: true });
}

/** Status of the live Deployment, as its controller last wrote it. */
async function deploymentStatus(name: string): Promise<Record<string, unknown>> {
  const live = await f.env.client.get(await resourceType(f.env, 'apps/v1', 'Deployment'), f.ns, name);
  return (live.status ?? {}) as Record<string, unknown>;
}

function controllerOf(o: KubeObject): string | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
}

it("a Bundle's Deployment runs: Bundle → Deployment → ReplicaSet → pods on simulated nodes, and the Bundle is Ready by the Deployment rule", async () => {
  const bundle = await applyBundle('web', [{ name: 'web', object: deployment('wl-web', 3) }]);
  const ready = await waitForReady(f.env, f.ns, 'web');
  expect(resourceCondition(ready, 'web', 'Ready')?.status).toBe('True');
  // Ready was judged from the controller's status: every replica updated and available.
  expect(await deploymentStatus('wl-web')).toMatchObject({ replicas: 3, updatedReplicas: 3, availableReplicas: 3 });

  const rollout = await waitForRollout(f.env, f.ns, 'wl-web');
  expect(controllerOf(rollout.deployment)).toBe(bundle.metadata.uid);
  expect(controllerOf(rollout.replicaSet)).toBe(rollout.deployment.metadata.uid);
  expect(rollout.oldReplicaSets).toEqual([]);
  expect(rollout.pods).toHaveLength(3);
  for (const pod of rollout.pods) {
    expect(controllerOf(pod)).toBe(rollout.replicaSet.metadata.uid);
    expect((pod.spec as { nodeName?: string }).nodeName).toMatch(/^kwok-node-\d+$/);
    expect(pod.status).toMatchObject({ phase: 'Running' });
  }
});

it('a change of the pod template rolls the Deployment out: a new ReplicaSet becomes available, the old one is scaled to 0, the Bundle is Ready again', async () => {
  await applyBundle('roll', [{ name: 'web', object: deployment('wl-roll', 2, { annotations: { 'example.com/config': 'v1' } }) }]);
  await waitForReady(f.env, f.ns, 'roll');
  const first = await waitForRollout(f.env, f.ns, 'wl-roll');

  await applyBundle('roll', [{ name: 'web', object: deployment('wl-roll', 2, { annotations: { 'example.com/config': 'v2' } }) }]);
  await waitForBundle(f.env, f.ns, 'roll', 'Ready=True after the change', (b) => conditionOf(b, 'Ready')?.status === 'True');
  // Ready again only once the new revision is rolled out: no old replica left.
  expect(await deploymentStatus('wl-roll')).toMatchObject({ replicas: 2, updatedReplicas: 2, availableReplicas: 2 });

  const second = await waitForRollout(f.env, f.ns, 'wl-roll', (r) => r.replicaSet.metadata.uid !== first.replicaSet.metadata.uid);
  expect(second.deployment.metadata.uid).toBe(first.deployment.metadata.uid);
  expect(
    (second.replicaSet.spec as { template?: { metadata?: { annotations?: Record<string, string> } } }).template?.metadata?.annotations,
  ).toMatchObject({ 'example.com/config': 'v2' });
  expect(second.oldReplicaSets.map((rs) => rs.metadata.uid)).toEqual([first.replicaSet.metadata.uid]);
  expect(second.oldReplicaSets[0]?.spec).toMatchObject({ replicas: 0 });
  expect(second.pods).toHaveLength(2);
  const firstPods = new Set(first.pods.map((p) => p.metadata.uid));
  expect(second.pods.filter((p) => firstPods.has(p.metadata.uid))).toEqual([]);
});

it('a Deployment whose pods cannot be scheduled keeps the Bundle not Ready, saying why; once they can, it becomes Ready', async () => {
  await applyBundle('unplaced', [{ name: 'web', object: deployment('wl-unplaced', 1, { nodeSelector: { 'example.com/pool': 'none' } }) }]);
  const waiting = await waitForBundle(f.env, f.ns, 'unplaced', 'the Deployment in progress with its pod unavailable', (b) =>
    (resourceCondition(b, 'web', 'InProgress')?.message ?? '').includes('0 of 1 updated replicas available'),
  );
  expect(conditionOf(waiting, 'Ready')?.status).toBe('False');
  expect(typeof (await rolloutOf(f.env, f.ns, 'wl-unplaced'))).toBe('string');

  await applyBundle('unplaced', [{ name: 'web', object: deployment('wl-unplaced', 1) }]);
  await waitForReady(f.env, f.ns, 'unplaced');
  const rollout = await waitForRollout(f.env, f.ns, 'wl-unplaced');
  expect(rollout.pods).toHaveLength(1);
});

it('envRefHash end to end: a change to a ConfigMap outside the Bundle, then to a Secret, each rolls the Deployment that reads them out to a new ReplicaSet (the old scaled to 0); a Deployment that reads neither does not roll', async () => {
  const t = f.t;
  await f.env.client.create(t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'wl-settings', namespace: f.ns },
    data: { mode: 'a' },
  });
  await f.env.client.create(t.secret, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'wl-token', namespace: f.ns },
    stringData: { token: 'one' },
  });
  const reading = deployment('wl-reader', 2);
  const template = (reading.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template;
  template.spec.containers[0] = {
    ...template.spec.containers[0],
    envFrom: [{ configMapRef: { name: 'wl-settings' } }, { secretRef: { name: 'wl-token' } }],
  };
  await applyBundle('config', [
    { name: 'reader', object: reading },
    { name: 'other', object: deployment('wl-other', 1) },
  ]);
  await waitForReady(f.env, f.ns, 'config');
  const first = await waitForRollout(f.env, f.ns, 'wl-reader');
  const other = await waitForRollout(f.env, f.ns, 'wl-other');
  const hashOf = (r: { replicaSet: KubeObject }) =>
    (r.replicaSet.spec as { template?: { metadata?: { annotations?: Record<string, string> } } }).template?.metadata?.annotations?.[
      Annotations.envRefHash
    ];
  expect(hashOf(first)).toMatch(/^[0-9a-f]{64}$/);

  await f.env.client.patch(t.configMap, f.ns, 'wl-settings', { data: { mode: 'b' } }, 'merge');
  const second = await waitForRollout(f.env, f.ns, 'wl-reader', (r) => r.replicaSet.metadata.uid !== first.replicaSet.metadata.uid);
  expect(hashOf(second)).not.toBe(hashOf(first));
  expect(second.oldReplicaSets.map((rs) => rs.metadata.uid)).toEqual([first.replicaSet.metadata.uid]);
  expect(second.oldReplicaSets[0]?.spec).toMatchObject({ replicas: 0 });
  expect(second.pods).toHaveLength(2);

  await f.env.client.patch(t.secret, f.ns, 'wl-token', { stringData: { token: 'two' } }, 'merge');
  const third = await waitForRollout(
    f.env,
    f.ns,
    'wl-reader',
    (r) => r.replicaSet.metadata.uid !== second.replicaSet.metadata.uid && r.replicaSet.metadata.uid !== first.replicaSet.metadata.uid,
  );
  expect(new Set([hashOf(first), hashOf(second), hashOf(third)]).size).toBe(3);
  await waitForBundle(f.env, f.ns, 'config', 'Ready after the rollouts', (b) => conditionOf(b, 'Ready')?.status === 'True');

  // The Deployment that reads neither kept its one ReplicaSet.
  const otherNow = await waitForRollout(f.env, f.ns, 'wl-other');
  expect(otherNow.replicaSet.metadata.uid).toBe(other.replicaSet.metadata.uid);
  expect(otherNow.oldReplicaSets).toEqual([]);
});
