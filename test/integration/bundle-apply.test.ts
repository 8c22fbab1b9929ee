/**
 * The Bundle reconciler on the real apiserver: apply, order, references,
 * ownership, adoption, conflicts, drift, no-op passes, readiness, events.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, run, waitFor } from './harness.js';
import {
  applyBundle,
  BUNDLE_RESOURCE_TYPE,
  configMap,
  eventsFor,
  getBundle,
  markDeploymentAvailable,
  resourceCondition,
  waitForBundle,
  waitForReady,
} from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('apply');

function example(rel: string): Record<string, unknown> {
  return parse(readFileSync(join(repoRoot(), 'examples', rel), 'utf8')) as Record<string, unknown>;
}

describe('examples reconcile to Ready', () => {
  it('ConfigMap + Secret + Deployment: ordered, referenced, owned', async () => {
    const applied = await run('kubectl', ['apply', '-n', f.ns, '-f', join(repoRoot(), 'examples', 'configmap-secret-deployment.yaml')]);
    expect(applied.code).toBe(0);

    // The Deployment waits for its dependencies, then is created; it is not Ready until its rollout is.
    const deployment = await waitFor('the Deployment to be created', () => f.env.client.tryGet(f.t.deployment, f.ns, 'web'));
    const bundle = await waitForBundle(
      f.env,
      f.ns,
      'web',
      'deployment in progress',
      (b) => resourceCondition(b, 'deployment', 'InProgress')?.status === 'True',
    );
    expect(conditionOf(bundle, 'Ready')?.status).toBe('False');

    const config = await f.env.client.get(f.t.configMap, f.ns, 'web-config');
    const secret = await f.env.client.get(f.t.secret, f.ns, 'web-credentials');
    // !{config-name} was replaced by the live ConfigMap's name.
    const containers = (deployment.spec as { template: { spec: { containers: { envFrom: { configMapRef?: { name: string } }[] }[] } } })
      .template.spec.containers;
    expect(containers[0]?.envFrom[0]?.configMapRef?.name).toBe('web-config');
    // A controller reference to the Bundle and a blocking reference to each dependency.
    expect(deployment.metadata.ownerReferences).toEqual(
      expect.arrayContaining([
        {
          apiVersion: 'smith.atlassian.com/v1',
          kind: 'Bundle',
          name: 'web',
          uid: bundle.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'web-config', uid: config.metadata.uid, blockOwnerDeletion: true },
        { apiVersion: 'v1', kind: 'Secret', name: 'web-credentials', uid: secret.metadata.uid, blockOwnerDeletion: true },
      ]),
    );
    expect(config.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        name: 'web',
        uid: bundle.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);

    await markDeploymentAvailable(f.env, f.ns, 'web');
    const ready = await waitForReady(f.env, f.ns, 'web');
    expect(ready.status).toMatchObject({ resourcesReady: '3/3', observedGeneration: ready.metadata.generation });
    expect(conditionOf(ready, 'Error')?.status).toBe('False');
    expect(conditionOf(ready, 'InProgress')?.status).toBe('False');
    await waitFor('a Ready event', async () => (await eventsFor(f.env, f.ns, 'web')).some((e) => e.reason === 'Ready'));
    const byCondition = (await f.op.metrics.bundlesByCondition.get()).values;
    // The first Bundle of this file's operator: exactly one is Ready.
    expect(byCondition.find((v) => v.labels.condition === 'Ready' && v.labels.status === 'True')?.value).toBe(1);
  });

  it('a custom resource with its CRD; readiness from the CRD annotations and a status reference', async () => {
    expect((await run('kubectl', ['apply', '-f', join(repoRoot(), 'examples', 'custom-resource', 'crd.yaml')])).code).toBe(0);
    await run('kubectl', ['wait', '--for=condition=Established', 'crd/databases.example.bundlesmith.dev']);
    expect((await run('kubectl', ['apply', '-n', f.ns, '-f', join(repoRoot(), 'examples', 'custom-resource', 'bundle.yaml')])).code).toBe(
      0,
    );
    const dbType = await waitFor('Database kind to be served', () => f.env.discovery.resolve('example.bundlesmith.dev/v1', 'Database'));
    await waitFor('the Database to be created', () => f.env.client.tryGet(dbType, f.ns, 'orders'));
    const blocked = await waitForBundle(
      f.env,
      f.ns,
      'orders-db',
      'connection blocked',
      (b) => resourceCondition(b, 'connection', 'Blocked')?.status === 'True',
    );
    expect(resourceCondition(blocked, 'connection', 'Blocked')).toMatchObject({
      reason: 'DependenciesNotReady',
      message: expect.stringContaining('"database"') as unknown,
    });
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'orders-connection')).toBeUndefined();

    await f.env.client.patch(dbType, f.ns, 'orders', { status: { state: 'Ready', host: 'db.internal:5432' } }, 'merge', {
      subresource: 'status',
    });
    await waitForReady(f.env, f.ns, 'orders-db');
    const connection = await f.env.client.get(f.t.configMap, f.ns, 'orders-connection');
    expect(connection.data).toEqual({ host: 'db.internal:5432' });
  });

  it('adopts an orphan and reports it', async () => {
    const existing = example('adoption/existing-configmap.yaml');
    const created = await f.env.client.create(f.t.configMap, {
      ...existing,
      metadata: { ...(existing.metadata as object), namespace: f.ns },
    });
    expect((await run('kubectl', ['apply', '-n', f.ns, '-f', join(repoRoot(), 'examples', 'adoption', 'bundle.yaml')])).code).toBe(0);
    await waitForReady(f.env, f.ns, 'legacy');
    const adopted = await f.env.client.get(f.t.configMap, f.ns, 'legacy-settings');
    expect(adopted.metadata.uid).toBe(created.metadata.uid);
    expect(adopted.data).toEqual({ mode: 'managed' });
    expect(adopted.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'legacy', controller: true });
    await waitFor('an Adopted event', async () =>
      (await eventsFor(f.env, f.ns, 'legacy')).some((e) => e.reason === 'Adopted' && e.note.includes('legacy-settings')),
    );
  });

  it('reconciles the tenancy example as its ServiceAccount', async () => {
    for (const file of ['account.yaml', 'bundle.yaml'])
      expect((await run('kubectl', ['apply', '-n', f.ns, '-f', join(repoRoot(), 'examples', 'tenancy', file)])).code).toBe(0);
    await waitForReady(f.env, f.ns, 'web-settings');
    const settings = await f.env.client.get(f.t.configMap, f.ns, 'web-settings');
    expect(settings.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'web-settings', controller: true });
  });
});

describe('ownership', () => {
  it('a new Bundle of 20 ConfigMaps, two already there: one list says which exist; those adopted, the rest created', async () => {
    // 20 misses of one kind: one metadata list of the namespace, then a GET of only the two that exist (gather.ts).
    const existing = await Promise.all(
      ['many-3', 'many-17'].map((name) =>
        f.env.client.create(f.t.configMap, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, namespace: f.ns },
          data: { was: 'here' },
        }),
      ),
    );
    await applyBundle(
      f.env,
      f.ns,
      'many',
      Array.from({ length: 20 }, (_, i) => ({ name: `cm${i}`, object: configMap(`many-${i}`, { i: String(i) }) })),
    );
    const ready = await waitForReady(f.env, f.ns, 'many');
    for (const before of existing) {
      const after = await f.env.client.get(f.t.configMap, f.ns, before.metadata.name);
      expect(after.metadata.uid).toBe(before.metadata.uid);
      expect(after.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', uid: ready.metadata.uid, controller: true });
    }
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => f.env.client.get(f.t.configMap, f.ns, `many-${i}`)));
    expect(all.every((o) => o.metadata.ownerReferences?.some((r) => r.uid === ready.metadata.uid && r.controller === true))).toBe(true);
  });

  it('refuses an object controlled by something else, leaves it untouched and says who controls it', async () => {
    const other = await f.env.client.create(f.t.configMap, configMapIn('taken', { owner: 'someone' }));
    const owned = await f.env.client.create(f.t.configMap, {
      ...configMapIn('claimed', { mine: 'no' }),
      metadata: {
        name: 'claimed',
        namespace: f.ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'taken', uid: other.metadata.uid, controller: true }],
      },
    });
    await applyBundle(f.env, f.ns, 'conflict', [{ name: 'cm', object: configMap('claimed', { mine: 'yes' }) }]);
    const bundle = await waitForBundle(f.env, f.ns, 'conflict', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(resourceCondition(bundle, 'cm', 'Error')).toMatchObject({
      status: 'True',
      reason: 'Conflict',
      message: expect.stringContaining('ConfigMap taken') as unknown,
    });
    const after = await f.env.client.get(f.t.configMap, f.ns, 'claimed');
    expect(after.metadata.resourceVersion).toBe(owned.metadata.resourceVersion);
    await waitFor('a Conflict event', async () =>
      (await eventsFor(f.env, f.ns, 'conflict')).some((e) => e.reason === 'Conflict' && e.type === 'Warning'),
    );
  });

  it('waits for an object that is being deleted, then creates it afresh', async () => {
    const stuck = await f.env.client.create(f.t.configMap, {
      ...configMapIn('leaving', { old: 'yes' }),
      metadata: { name: 'leaving', namespace: f.ns, finalizers: ['example.com/hold'] },
    });
    await f.env.client.delete(f.t.configMap, f.ns, 'leaving', { uid: stuck.metadata.uid });
    await applyBundle(f.env, f.ns, 'waiter', [{ name: 'cm', object: configMap('leaving', { new: 'yes' }) }]);
    const waiting = await waitForBundle(
      f.env,
      f.ns,
      'waiter',
      'waiting for the deletion',
      (b) => resourceCondition(b, 'cm', 'InProgress')?.status === 'True',
    );
    expect(resourceCondition(waiting, 'cm', 'InProgress')?.message).toContain('being deleted');
    await f.env.client.patch(f.t.configMap, f.ns, 'leaving', { metadata: { finalizers: null } }, 'merge');
    await waitForReady(f.env, f.ns, 'waiter');
    const fresh = await f.env.client.get(f.t.configMap, f.ns, 'leaving');
    expect(fresh.metadata.uid).not.toBe(stuck.metadata.uid);
    expect(fresh.data).toEqual({ new: 'yes' });
  });
});

describe('server-side apply', () => {
  it('corrects drift made by another field manager, from the watch', async () => {
    await applyBundle(f.env, f.ns, 'drift', [{ name: 'cm', object: configMap('drifty', { a: '1' }) }]);
    await waitForReady(f.env, f.ns, 'drift');
    await f.env.client.patch(f.t.configMap, f.ns, 'drifty', { data: { a: 'changed', extra: 'kept' } }, 'merge', {
      fieldManager: 'someone-else',
    });
    const corrected = await waitFor('the drift to be corrected', async () => {
      const cm = await f.env.client.get(f.t.configMap, f.ns, 'drifty');
      return (cm.data as Record<string, string>).a === '1' ? cm : undefined;
    });
    // Fields owned by another manager are not ours to remove.
    expect(corrected.data).toEqual({ a: '1', extra: 'kept' });
  });

  it('sends no write on a pass that changes nothing', async () => {
    await applyBundle(f.env, f.ns, 'quiet', [
      { name: 'cm', object: configMap('quiet-cm', { a: '1' }) },
      {
        name: 'svc',
        object: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'quiet-svc' },
          spec: { ports: [{ port: 80 }], selector: { app: 'x' } },
        },
      },
      {
        name: 'secret',
        references: [{ resource: 'cm' }],
        object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'quiet-secret' }, stringData: { k: 'v' } },
      },
    ]);
    const before = await waitForReady(f.env, f.ns, 'quiet');
    const snapshot = async (): Promise<string[]> => [
      (await f.env.client.get(f.t.configMap, f.ns, 'quiet-cm')).metadata.resourceVersion,
      (await f.env.client.get(f.t.service, f.ns, 'quiet-svc')).metadata.resourceVersion,
      (await f.env.client.get(f.t.secret, f.ns, 'quiet-secret')).metadata.resourceVersion,
      (await f.env.client.get(BUNDLE_RESOURCE_TYPE, f.ns, 'quiet')).metadata.resourceVersion,
    ];
    const reconciles = async () => (await f.op.metrics.reconciles.get()).values.reduce((sum, v) => sum + v.value, 0);
    const rvBefore = await snapshot();
    for (let i = 0; i < 3; i++) {
      const count = await reconciles();
      f.op.operator.bundles.enqueue(`${f.ns}/quiet`);
      await waitFor('another reconcile pass', async () => (await reconciles()) > count);
    }
    expect(await snapshot()).toEqual(rvBefore);
    expect((await getBundle(f.env, f.ns, 'quiet'))?.status).toEqual(before.status);
  });
});

function configMapIn(name: string, data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: f.ns, uid: '', resourceVersion: '' }, data };
}
