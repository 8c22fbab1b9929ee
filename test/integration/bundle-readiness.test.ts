/**
 * Readiness rules on the real apiserver. No workload controllers run here,
 * so the tests write status through the status subresource, as those
 * controllers would.
 */
import { conditionOf, resourceType, waitFor } from './harness.js';
import { applyBundle, resourceCondition, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('ready');

async function setStatus(apiVersion: string, kind: string, name: string, status: Record<string, unknown>): Promise<void> {
  const rt = await resourceType(f.env, apiVersion, kind);
  await waitFor(`${kind} ${name} to exist`, () => f.env.client.tryGet(rt, f.ns, name));
  await f.env.client.patch(rt, f.ns, name, { status }, 'merge', { subresource: 'status' });
}

const job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'migrate' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'registry.example/m:1' }] } } },
};
const pvc = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
};
const lb = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'edge' },
  spec: { type: 'LoadBalancer', ports: [{ port: 443 }], selector: { app: 'edge' } },
};

describe('readiness', () => {
  it('Job Complete, PVC Bound and a LoadBalancer with an ingress make the Bundle Ready', async () => {
    await applyBundle(f.env, f.ns, 'infra', [
      { name: 'job', object: job },
      { name: 'pvc', object: pvc },
      { name: 'lb', object: lb },
    ]);
    const waiting = await waitForBundle(f.env, f.ns, 'infra', 'all in progress', (b) =>
      ['job', 'pvc', 'lb'].every((r) => resourceCondition(b, r, 'InProgress')?.status === 'True'),
    );
    expect(conditionOf(waiting, 'Ready')?.status).toBe('False');
    await setStatus('batch/v1', 'Job', 'migrate', {
      startTime: '2026-01-01T00:00:00Z',
      completionTime: '2026-01-01T00:01:00Z',
      succeeded: 1,
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True' },
        { type: 'Complete', status: 'True' },
      ],
    });
    await setStatus('v1', 'PersistentVolumeClaim', 'data', { phase: 'Bound' });
    await setStatus('v1', 'Service', 'edge', { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } });
    const ready = await waitForReady(f.env, f.ns, 'infra');
    expect(ready.status).toMatchObject({ resourcesReady: '3/3' });
  });

  it('a failed Job is a terminal error and blocks what depends on it', async () => {
    await applyBundle(f.env, f.ns, 'failing', [
      { name: 'job', object: { ...job, metadata: { name: 'doomed' } } },
      {
        name: 'after',
        references: [{ resource: 'job' }],
        object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-job' }, data: { a: 'b' } },
      },
    ]);
    await setStatus('batch/v1', 'Job', 'doomed', {
      startTime: '2026-01-01T00:00:00Z',
      failed: 1,
      conditions: [
        { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded' },
        { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
      ],
    });
    const failed = await waitForBundle(f.env, f.ns, 'failing', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(failed, 'Error')).toMatchObject({ reason: 'TerminalError' });
    expect(resourceCondition(failed, 'job', 'Error')?.status).toBe('True');
    expect(resourceCondition(failed, 'after', 'Blocked')).toMatchObject({ status: 'True', reason: 'DependenciesNotReady' });
  });

  it('a Deployment whose rollout exceeded its progress deadline is an error', async () => {
    await applyBundle(f.env, f.ns, 'stuck', [
      {
        name: 'web',
        object: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'stuck' },
          spec: {
            selector: { matchLabels: { app: 's' } },
            template: { metadata: { labels: { app: 's' } }, spec: { containers: [{ name: 's', image: 'registry.example/s:1' }] } },
          },
        },
      },
    ]);
    const rt = await resourceType(f.env, 'apps/v1', 'Deployment');
    const live = await waitFor('the Deployment', () => f.env.client.tryGet(rt, f.ns, 'stuck'));
    await setStatus('apps/v1', 'Deployment', 'stuck', {
      observedGeneration: live.metadata.generation,
      replicas: 1,
      updatedReplicas: 1,
      unavailableReplicas: 1,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "stuck-1" has timed out progressing.',
        },
      ],
    });
    const failed = await waitForBundle(f.env, f.ns, 'stuck', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(resourceCondition(failed, 'web', 'Error')?.message).toContain('progress deadline');
  });

  it('a custom resource with a Ready condition for its current generation', async () => {
    const crdType = await resourceType(f.env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    await f.env.client.apply(
      crdType,
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'caches.ready.bundlesmith.dev' },
        spec: {
          group: 'ready.bundlesmith.dev',
          scope: 'Namespaced',
          names: { kind: 'Cache', plural: 'caches', singular: 'cache' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              subresources: { status: {} },
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      },
      { fieldManager: 'test-user' },
    );
    await waitFor('Cache to be served', () => f.env.discovery.resolve('ready.bundlesmith.dev/v1', 'Cache'));
    await applyBundle(f.env, f.ns, 'cache', [
      { name: 'cache', object: { apiVersion: 'ready.bundlesmith.dev/v1', kind: 'Cache', metadata: { name: 'c' }, spec: { size: 1 } } },
    ]);
    const rt = await resourceType(f.env, 'ready.bundlesmith.dev/v1', 'Cache');
    const live = await waitFor('the Cache', () => f.env.client.tryGet(rt, f.ns, 'c'));
    // A Ready condition for an older generation says nothing about this one.
    await setStatus('ready.bundlesmith.dev/v1', 'Cache', 'c', {
      observedGeneration: (live.metadata.generation ?? 1) - 1,
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: (live.metadata.generation ?? 1) - 1 }],
    });
    await waitForBundle(f.env, f.ns, 'cache', 'in progress', (b) => resourceCondition(b, 'cache', 'InProgress')?.status === 'True');
    await setStatus('ready.bundlesmith.dev/v1', 'Cache', 'c', {
      observedGeneration: live.metadata.generation,
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: live.metadata.generation }],
    });
    await waitForReady(f.env, f.ns, 'cache');
  });
});
