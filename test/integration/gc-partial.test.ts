/**
 * A collector some of whose informers never list (RBAC lets it list only
 * ConfigMaps): after its hold bound it runs on a partial graph. It still
 * collects a dependent whose owner is verified absent, but completes no
 * foreground or orphan deletion ("nothing depends on it any more" is not
 * known of a partial graph) until every informer has listed; once RBAC lets
 * them, it does (issue 9).
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import type { OwnerReference } from '../../src/api/resource.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { connect, createNamespace, kubeconfigPath, resourceType, uniqueName, waitFor, waitForGone, type TestEnv } from './harness.js';

let env: TestEnv;
let limited: KubeClient;
let gc: GarbageCollector | undefined;
let ns: string;
let cm: ResourceType;
let clusterRole: ResourceType;
let binding: ResourceType;
const user = uniqueName('gc-partial');

beforeAll(async () => {
  env = await connect();
  cm = await resourceType(env, 'v1', 'ConfigMap');
  clusterRole = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRole');
  binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
  ns = await createNamespace(env, 'gc-partial');
  await env.client.create(clusterRole, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: user },
    rules: [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'patch', 'update', 'delete'] },
      { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  });
  await bind(user, user);
  limited = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()), { impersonateUser: user, impersonateGroups: [] });
});

afterAll(async () => {
  await gc?.stop();
  limited?.close();
  env?.close();
});

async function bind(name: string, role: string): Promise<void> {
  await env.client.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
}

const ref = (owner: KubeObject, blocking = true): OwnerReference => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  blockOwnerDeletion: blocking,
});

async function create(name: string, owners: OwnerReference[] = []): Promise<KubeObject> {
  return env.client.create(cm, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, ...(owners.length > 0 ? { ownerReferences: owners } : {}) },
  });
}

async function current(obj: KubeObject): Promise<KubeObject> {
  const o = await env.client.tryGet(cm, ns, obj.metadata.name, { metadataOnly: true });
  if (!o) throw new Error(`ConfigMap ${obj.metadata.name} should exist`);
  expect(o.metadata.uid).toBe(obj.metadata.uid);
  return o;
}

describe('garbage collector with informers that never list', () => {
  it('collects what is verified live, defers foreground and orphan completions until every informer has listed', async () => {
    const fgOwner = await create('fg-owner');
    const fgDep = await create('fg-dep', [ref(fgOwner)]);
    const orphanOwner = await create('orphan-owner');
    const orphanDep = await create('orphan-dep', [ref(orphanOwner)]);

    gc = new GarbageCollector(limited, { mode: 'cluster', workers: 2, namespaces: [ns], syncHoldMs: 2_000, discoveryIntervalMs: 60_000 });
    await gc.start();
    const collector = gc;
    await waitFor('the collector to run on a partial graph', () => collector.engine.syncBarrier().phase === 'partial', {
      timeoutMs: 30_000,
    });

    await env.client.delete(cm, ns, 'fg-owner', { uid: fgOwner.metadata.uid, propagationPolicy: 'Foreground' });
    await env.client.delete(cm, ns, 'orphan-owner', { uid: orphanOwner.metadata.uid, propagationPolicy: 'Orphan' });
    // The blocking dependent is deleted (its owner is verified waiting, live),
    // in the foreground: what it owns may be in a resource not listed.
    await waitFor('the blocking dependent to be deleted', async () => (await current(fgDep)).metadata.deletionTimestamp !== undefined, {
      timeoutMs: 30_000,
    });
    expect((await current(fgDep)).metadata.finalizers).toEqual(['foregroundDeletion']);
    // A dependent of an owner that never existed is collected (verified live).
    const ghostDep = await create('ghost-dep', [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: '00000000-0000-4000-8000-000000000001' },
    ]);
    await waitForGone(env, cm, ns, ghostDep.metadata.name, { timeoutMs: 30_000 });
    // No completion on the partial graph.
    expect((await current(fgOwner)).metadata.finalizers).toEqual(['foregroundDeletion']);
    expect((await current(fgDep)).metadata.finalizers).toEqual(['foregroundDeletion']);
    expect((await current(orphanOwner)).metadata.finalizers).toEqual(['orphan']);
    const dep = await current(orphanDep);
    expect(dep.metadata.deletionTimestamp).toBeUndefined();
    expect(dep.metadata.ownerReferences?.map((r) => r.uid)).toEqual([orphanOwner.metadata.uid]);
    expect(collector.engine.deferredItems().attemptToOrphan).toEqual([orphanOwner.metadata.uid]);

    // RBAC now lets it list everything: the informers list (after their
    // backoff), the graph is complete, the deferred completions happen.
    await bind(`${user}-view-all`, 'cluster-admin');
    await waitFor('the collector to run on a complete graph', () => collector.engine.syncBarrier().phase === 'complete', {
      timeoutMs: 90_000,
    });
    await waitForGone(env, cm, ns, fgDep.metadata.name, { timeoutMs: 30_000 });
    await waitForGone(env, cm, ns, fgOwner.metadata.name, { timeoutMs: 30_000 });
    await waitForGone(env, cm, ns, orphanOwner.metadata.name, { timeoutMs: 30_000 });
    const kept = await current(orphanDep);
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
    expect(kept.metadata.ownerReferences ?? []).toEqual([]);
  });
});
