/**
 * `--gc=bundles` on a real apiserver: the collector acts only on chains
 * that reach a Bundle, and keeps acting on them once a link in the middle is
 * gone (a Bundle Deployment's ReplicaSet, then its Pods: issue 9). No
 * workload controllers run here, so the chains are built by hand with owner
 * references, and no operator runs: the Bundle is only an owner.
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import type { OwnerReference } from '../../src/api/resource.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest } from './bundles.js';
import { connect, createNamespace, resourceType, waitFor, waitForGone, type TestEnv } from './harness.js';

let env: TestEnv;
let gc: GarbageCollector;
let ns: string;
let cm: ResourceType;
let secret: ResourceType;

beforeAll(async () => {
  env = await connect();
  cm = await resourceType(env, 'v1', 'ConfigMap');
  secret = await resourceType(env, 'v1', 'Secret');
  ns = await createNamespace(env, 'gc-bundles');
  gc = new GarbageCollector(env.client, { mode: 'bundles', workers: 2, namespaces: [ns], discoveryIntervalMs: 5_000 });
  await gc.start();
  await gc.waitForSync();
});

afterAll(async () => {
  await gc?.stop();
  env?.close();
});

const ref = (owner: KubeObject, controller = true): OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  blockOwnerDeletion: true,
  ...(controller ? { controller: true } : {}),
});

async function create(rt: ResourceType, name: string, owner?: KubeObject): Promise<KubeObject> {
  return env.client.create(rt, {
    apiVersion: rt.apiVersion,
    kind: rt.kind,
    metadata: { name, namespace: ns, ...(owner ? { ownerReferences: [ref(owner)] } : {}) },
  });
}

async function remove(rt: ResourceType, obj: KubeObject): Promise<void> {
  await env.client.delete(rt, ns, obj.metadata.name, { uid: obj.metadata.uid, propagationPolicy: 'Background' });
}

/** Same UID, not being deleted. */
async function expectKept(rt: ResourceType, obj: KubeObject): Promise<void> {
  const o = await env.client.tryGet(rt, ns, obj.metadata.name, { metadataOnly: true });
  expect(o?.metadata.uid).toBe(obj.metadata.uid);
  expect(o?.metadata.deletionTimestamp).toBeUndefined();
}

describe('garbage collector, --gc=bundles', () => {
  it('collects the grandchildren of a Bundle chain once its middle is gone; chains without a Bundle stay out of scope', async () => {
    const bundle = await env.client.create(BUNDLE_RESOURCE_TYPE, bundleManifest(ns, 'b', []));
    // Bundle -> object -> child -> grandchild, twice: the first loses its top link, the second its middle one.
    const object = await create(cm, 'object', bundle);
    const child = await create(secret, 'child', object);
    const grandchild = await create(cm, 'grandchild', child);
    const object2 = await create(cm, 'object-2', bundle);
    const child2 = await create(secret, 'child-2', object2);
    const grandchild2 = await create(cm, 'grandchild-2', child2);
    // The same shape under a plain ConfigMap: not the collector's to touch.
    const plain = await create(cm, 'plain');
    const plainChild = await create(secret, 'plain-child', plain);
    const plainGrandchild = await create(cm, 'plain-grandchild', plainChild);
    await waitFor(
      'the collector to see the chains',
      () =>
        gc.graphSize() > 0 &&
        gc.engine.graph.get(plainGrandchild.metadata.uid) !== undefined &&
        gc.engine.graph.get(grandchild2.metadata.uid) !== undefined,
    );

    await remove(cm, plain);
    await remove(cm, object);
    await remove(secret, child2);
    await waitForGone(env, secret, ns, child.metadata.name, { timeoutMs: 30_000 });
    await waitForGone(env, cm, ns, grandchild.metadata.name, { timeoutMs: 30_000 });
    await waitForGone(env, cm, ns, grandchild2.metadata.name, { timeoutMs: 30_000 });
    await expectKept(cm, object2);
    await expectKept(BUNDLE_RESOURCE_TYPE, bundle);
    await waitForGone(env, cm, ns, plain.metadata.name, { timeoutMs: 30_000 });
    await expectKept(secret, plainChild);
    await expectKept(cm, plainGrandchild);
  });
});
