/**
 * Red team round three (redteam3): the user's own live owner.
 *
 * What a user does: a Bundle lists ConfigMap uo-x. Another tool (or the
 * user) makes uo-x also belong to something else it manages, by adding a
 * plain, non-controller ownerReference to a live object (here ConfigMap
 * uo-parent; an Argo Application, a Crossplane composite, a parent CR, ...).
 * That is how Kubernetes says "this object has another owner": the garbage
 * collector (kube-controller-manager's, and this operator's own) deletes a
 * dependent only when *all* its owners are gone. Then the Bundle is deleted
 * the usual way (`kubectl delete bundle uo`, background propagation).
 *
 * What happens: the Bundle finalizer deletes uo-x outright, though it still
 * has a live owner. Smith (which this operator claims compatibility with)
 * left a Bundle's objects to the garbage collector, which would have taken
 * only the Bundle's reference out and kept uo-x; so does this operator's own
 * collector when the finalizer is not in the way (see orphan/foreground
 * paths, which keep "the user's own" references). The finalizer even
 * computes the user's references (ownership.ts userReferences) and keeps
 * them on *released* objects, but for an object without a delay it never
 * asks whether one of them is live.
 *
 * Who decides: src/core/bundle/finalize.ts backgroundSteps (planPrune with
 * an empty inSpec, `case 'delete': if (!action.afterDelay) return [{ action:
 * 'delete' ... }]`, ~line 196), carried out by
 * src/controllers/bundle/finalize.ts carryOut (api.delete, ~line 138).
 * (Prune of an object removed from the spec, and the sweeper's delete of a
 * released object that kept a live user owner, follow the same rule and
 * were not tested here: whether they should defer to a live user owner is
 * the fix's decision; the finalizer has no such excuse, the user asked
 * only for the Bundle to go.)
 *
 * Fixed: the finalizer takes only the Bundle's references off an object
 * that has another owner's, and leaves it to the collector, which deletes
 * it once no owner is left. Run with this operator's collector and with
 * kube-controller-manager's.
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { expectKept, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady, type KnownTypes } from './bundles.js';
import { operatorFixture } from './operator.js';
import { referenceFixture } from './reference-cluster.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function keepsWhatAnotherOwnerHolds(env: TestEnv, ns: string, t: KnownTypes): Promise<void> {
  const parent = await env.client.create(t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'uo-parent', namespace: ns },
    data: { a: 'b' },
  });
  await applyBundle(env, ns, 'uo', [{ name: 'x', object: configMap('uo-x') }]);
  await waitForReady(env, ns, 'uo');
  const x = await env.client.get(t.configMap, ns, 'uo-x');
  // Another owner, as any tool writes one (non-controller; the Bundle stays the controller).
  await env.client.patch(
    t.configMap,
    ns,
    'uo-x',
    [
      {
        op: 'add',
        path: '/metadata/ownerReferences/-',
        value: { apiVersion: 'v1', kind: 'ConfigMap', name: 'uo-parent', uid: parent.metadata.uid },
      },
    ],
    'json',
  );
  await sleep(1_000);

  const bundle = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'uo');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'uo', { uid: bundle.metadata.uid, propagationPolicy: 'Background' });
  await waitFor('Bundle uo to be gone', async () => (await getBundle(env, ns, 'uo')) === undefined, { timeoutMs: 30_000 });
  await sleep(3_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'uo-parent'), parent.metadata.uid);
  expectKept(await env.client.tryGet(t.configMap, ns, 'uo-x'), x.metadata.uid);
  // Only the Bundle's reference went: the other owner's stays, and once that owner is gone the collector takes uo-x.
  expect((await env.client.get(t.configMap, ns, 'uo-x')).metadata.ownerReferences?.map((r) => r.uid)).toEqual([parent.metadata.uid]);
  await env.client.delete(t.configMap, ns, 'uo-parent', { uid: parent.metadata.uid });
  await waitFor(
    'uo-x collected once its last owner is gone',
    async () => (await env.client.tryGet(t.configMap, ns, 'uo-x')) === undefined,
    { timeoutMs: 60_000 },
  );
}

describe("this operator's collector", () => {
  const f = operatorFixture('rt3-owner', () => ({
    garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
  }));
  it('deleting a Bundle (background) keeps an object that another live owner holds, as the garbage collector would', async () => {
    await keepsWhatAnotherOwnerHolds(f.env, f.ns, f.t);
  });
});

describe("kube-controller-manager's collector", () => {
  const f = referenceFixture('rt3-owner-kcm');
  it('deleting a Bundle (background) keeps an object that another live owner holds', async () => {
    await keepsWhatAnotherOwnerHolds(f.env, f.ns, f.t);
  });
});
