/**
 * The Bundle reconciler on the real apiserver: apply, order, references,
 * ownership, adoption, conflicts, drift, no-op passes, readiness, events.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { applyBundle, BUNDLE_RESOURCE_TYPE, configMap, eventsFor, getBundle, markDeploymentAvailable, resourceCondition, types, waitForBundle, waitForReady } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';

let env: TestEnv;
let ns: string;
let op: InProcessOperator;
let t: Awaited<ReturnType<typeof types>>;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'apply');
  t = await types(env);
  op = await startOperator({ namespace: ns });
});
afterAll(async () => {
  await op.stop();
  env.close();
});

function example(rel: string): Record<string, unknown> {
  return parse(readFileSync(join(repoRoot(), 'examples', rel), 'utf8')) as Record<string, unknown>;
}

describe('examples reconcile to Ready', () => {
  it('ConfigMap + Secret + Deployment: ordered, referenced, owned', async () => {
    const applied = await run('kubectl', ['apply', '-n', ns, '-f', join(repoRoot(), 'examples', 'configmap-secret-deployment.yaml')]);
    expect(applied.code).toBe(0);

    // The Deployment waits for its dependencies, then is created; it is not Ready until its rollout is.
    const deployment = await waitFor('the Deployment to be created', () => env.client.tryGet(t.deployment, ns, 'web'));
    const bundle = await waitForBundle(env, ns, 'web', 'deployment in progress', (b) => resourceCondition(b, 'deployment', 'InProgress')?.status === 'True');
    expect(conditionOf(bundle, 'Ready')?.status).toBe('False');

    const config = await env.client.get(t.configMap, ns, 'web-config');
    const secret = await env.client.get(t.secret, ns, 'web-credentials');
    // !{config-name} was replaced by the live ConfigMap's name.
    const containers = (deployment.spec as { template: { spec: { containers: { envFrom: { configMapRef?: { name: string } }[] }[] } } }).template.spec.containers;
    expect(containers[0]?.envFrom[0]?.configMapRef?.name).toBe('web-config');
    // A controller reference to the Bundle and a blocking reference to each dependency.
    expect(deployment.metadata.ownerReferences).toEqual(expect.arrayContaining([
      { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'web', uid: bundle.metadata.uid, controller: true, blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'web-config', uid: config.metadata.uid, blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'Secret', name: 'web-credentials', uid: secret.metadata.uid, blockOwnerDeletion: true },
    ]));
    expect(config.metadata.ownerReferences).toEqual([{ apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'web', uid: bundle.metadata.uid, controller: true, blockOwnerDeletion: true }]);

    await markDeploymentAvailable(env, ns, 'web');
    const ready = await waitForReady(env, ns, 'web');
    expect(ready.status).toMatchObject({ resourcesReady: '3/3', observedGeneration: ready.metadata.generation });
    expect(conditionOf(ready, 'Error')?.status).toBe('False');
    expect(conditionOf(ready, 'InProgress')?.status).toBe('False');
    await waitFor('a Ready event', async () => (await eventsFor(env, ns, 'web')).some((e) => e.reason === 'Ready'));
    const byCondition = (await op.metrics.bundlesByCondition.get()).values;
    expect(byCondition.find((v) => v.labels.condition === 'Ready' && v.labels.status === 'True')?.value).toBeGreaterThanOrEqual(1);
  });

  it('a custom resource with its CRD; readiness from the CRD annotations and a status reference', async () => {
    expect((await run('kubectl', ['apply', '-f', join(repoRoot(), 'examples', 'custom-resource', 'crd.yaml')])).code).toBe(0);
    await run('kubectl', ['wait', '--for=condition=Established', 'crd/databases.example.bundlesmith.dev']);
    expect((await run('kubectl', ['apply', '-n', ns, '-f', join(repoRoot(), 'examples', 'custom-resource', 'bundle.yaml')])).code).toBe(0);
    const dbType = await waitFor('Database kind to be served', () => env.discovery.resolve('example.bundlesmith.dev/v1', 'Database'));
    await waitFor('the Database to be created', () => env.client.tryGet(dbType, ns, 'orders'));
    const blocked = await waitForBundle(env, ns, 'orders-db', 'connection blocked', (b) => resourceCondition(b, 'connection', 'Blocked')?.status === 'True');
    expect(resourceCondition(blocked, 'connection', 'Blocked')).toMatchObject({ reason: 'DependenciesNotReady', message: expect.stringContaining('"database"') as unknown });
    expect(await env.client.tryGet(t.configMap, ns, 'orders-connection')).toBeUndefined();

    await env.client.patch(dbType, ns, 'orders', { status: { state: 'Ready', host: 'db.internal:5432' } }, 'merge', { subresource: 'status' });
    await waitForReady(env, ns, 'orders-db');
    const connection = await env.client.get(t.configMap, ns, 'orders-connection');
    expect(connection.data).toEqual({ host: 'db.internal:5432' });
  });

  it('adopts an orphan and reports it', async () => {
    const existing = example('adoption/existing-configmap.yaml');
    const created = await env.client.create(t.configMap, { ...existing, metadata: { ...(existing.metadata as object), namespace: ns } });
    expect((await run('kubectl', ['apply', '-n', ns, '-f', join(repoRoot(), 'examples', 'adoption', 'bundle.yaml')])).code).toBe(0);
    await waitForReady(env, ns, 'legacy');
    const adopted = await env.client.get(t.configMap, ns, 'legacy-settings');
    expect(adopted.metadata.uid).toBe(created.metadata.uid);
    expect(adopted.data).toEqual({ mode: 'managed' });
    expect(adopted.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'legacy', controller: true });
    await waitFor('an Adopted event', async () => (await eventsFor(env, ns, 'legacy')).some((e) => e.reason === 'Adopted' && e.note.includes('legacy-settings')));
  });
});

describe('ownership', () => {
  it('refuses an object controlled by something else, leaves it untouched and says who controls it', async () => {
    const other = await env.client.create(t.configMap, configMapIn('taken', { owner: 'someone' }));
    const owned = await env.client.create(t.configMap, {
      ...configMapIn('claimed', { mine: 'no' }),
      metadata: { name: 'claimed', namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'taken', uid: other.metadata.uid, controller: true }] },
    });
    await applyBundle(env, ns, 'conflict', [{ name: 'cm', object: configMap('claimed', { mine: 'yes' }) }]);
    const bundle = await waitForBundle(env, ns, 'conflict', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(resourceCondition(bundle, 'cm', 'Error')).toMatchObject({ status: 'True', reason: 'Conflict', message: expect.stringContaining('ConfigMap taken') as unknown });
    const after = await env.client.get(t.configMap, ns, 'claimed');
    expect(after.metadata.resourceVersion).toBe(owned.metadata.resourceVersion);
    await waitFor('a Conflict event', async () => (await eventsFor(env, ns, 'conflict')).some((e) => e.reason === 'Conflict' && e.type === 'Warning'));
  });

  it('waits for an object that is being deleted, then creates it afresh', async () => {
    const stuck = await env.client.create(t.configMap, { ...configMapIn('leaving', { old: 'yes' }), metadata: { name: 'leaving', namespace: ns, finalizers: ['example.com/hold'] } });
    await env.client.delete(t.configMap, ns, 'leaving', { uid: stuck.metadata.uid });
    await applyBundle(env, ns, 'waiter', [{ name: 'cm', object: configMap('leaving', { new: 'yes' }) }]);
    const waiting = await waitForBundle(env, ns, 'waiter', 'waiting for the deletion', (b) => resourceCondition(b, 'cm', 'InProgress')?.status === 'True');
    expect(resourceCondition(waiting, 'cm', 'InProgress')?.message).toContain('being deleted');
    await env.client.patch(t.configMap, ns, 'leaving', { metadata: { finalizers: null } }, 'merge');
    await waitForReady(env, ns, 'waiter');
    const fresh = await env.client.get(t.configMap, ns, 'leaving');
    expect(fresh.metadata.uid).not.toBe(stuck.metadata.uid);
    expect(fresh.data).toEqual({ new: 'yes' });
  });
});

describe('server-side apply', () => {
  it('corrects drift made by another field manager, from the watch', async () => {
    await applyBundle(env, ns, 'drift', [{ name: 'cm', object: configMap('drifty', { a: '1' }) }]);
    await waitForReady(env, ns, 'drift');
    await env.client.patch(t.configMap, ns, 'drifty', { data: { a: 'changed', extra: 'kept' } }, 'merge', { fieldManager: 'someone-else' });
    const corrected = await waitFor('the drift to be corrected', async () => {
      const cm = await env.client.get(t.configMap, ns, 'drifty');
      return (cm.data as Record<string, string>).a === '1' ? cm : undefined;
    });
    // Fields owned by another manager are not ours to remove.
    expect(corrected.data).toEqual({ a: '1', extra: 'kept' });
  });

  it('sends no write on a pass that changes nothing', async () => {
    await applyBundle(env, ns, 'quiet', [
      { name: 'cm', object: configMap('quiet-cm', { a: '1' }) },
      { name: 'svc', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'quiet-svc' }, spec: { ports: [{ port: 80 }], selector: { app: 'x' } } } },
      { name: 'secret', references: [{ resource: 'cm' }], object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'quiet-secret' }, stringData: { k: 'v' } } },
    ]);
    const before = await waitForReady(env, ns, 'quiet');
    const snapshot = async (): Promise<string[]> => [
      (await env.client.get(t.configMap, ns, 'quiet-cm')).metadata.resourceVersion,
      (await env.client.get(t.service, ns, 'quiet-svc')).metadata.resourceVersion,
      (await env.client.get(t.secret, ns, 'quiet-secret')).metadata.resourceVersion,
      (await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'quiet')).metadata.resourceVersion,
    ];
    const reconciles = async () => (await op.metrics.reconciles.get()).values.reduce((sum, v) => sum + v.value, 0);
    const rvBefore = await snapshot();
    for (let i = 0; i < 3; i++) {
      const count = await reconciles();
      op.operator.bundles.enqueue(`${ns}/quiet`);
      await waitFor('another reconcile pass', async () => (await reconciles()) > count);
    }
    expect(await snapshot()).toEqual(rvBefore);
    expect((await getBundle(env, ns, 'quiet'))?.status).toEqual(before.status);
  });
});

function configMapIn(name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, uid: '', resourceVersion: '' }, data };
}


