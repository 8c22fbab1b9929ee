/**
 * Red team 13 probe: red team 6's sibling-owner case after a hand-over.
 * The fix of redteam6-sibling-owner reads a blocking reference to a sibling
 * as the operator's dependency reference only when the operator's field
 * manager owns that ownerReferences entry (managedFields). The operator's
 * own JSON patches (a claim reference, a hand-over) rewrite the whole
 * ownerReferences list under that same field manager: does that hand it
 * the user's entry?
 *
 * Steps: Bundle ho-a lists ConfigMaps ho-owner (deletionPolicy Orphan) and
 * ho-child; another tool adds to ho-child an ownerReference to ho-owner
 * with blockOwnerDeletion. Bundle ho-b then lists both too (it loses the
 * Conflict and records its claims), and ho-a drops both: ho-b takes them
 * over (hand-over). ho-b is deleted (background).
 * Expected: ho-owner released and kept; ho-child keeps its live owner
 * ho-owner, so kube-controller-manager would keep it: kept.
 * Result: HELD. A JSON patch that rewrites the list leaves an unchanged
 * entry's ownership where it was (managedFields still give it to
 * another-tool), so the finalizer reads it as the user's and only takes the
 * Bundle's reference out.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt13hs');

it('background deletion after a hand-over: an object another tool made a dependent of a kept sibling is not deleted', async () => {
  const { env, ns, t } = f;
  const owner = configMap('ho-owner', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' });
  await applyBundle(env, ns, 'ho-a', [
    { name: 'owner', object: owner },
    { name: 'child', object: configMap('ho-child') },
    { name: 'keep', object: configMap('ho-a-keep') },
  ]);
  await waitForReady(env, ns, 'ho-a');
  const ownerObj = await env.client.get(t.configMap, ns, 'ho-owner');
  const c0 = await env.client.get(t.configMap, ns, 'ho-child');
  await env.client.patch(
    t.configMap,
    ns,
    'ho-child',
    [
      { op: 'test', path: '/metadata/resourceVersion', value: c0.metadata.resourceVersion },
      {
        op: 'add',
        path: '/metadata/ownerReferences/-',
        value: { apiVersion: 'v1', kind: 'ConfigMap', name: 'ho-owner', uid: ownerObj.metadata.uid, blockOwnerDeletion: true },
      },
    ],
    'json',
    { fieldManager: 'another-tool' },
  );

  await applyBundle(env, ns, 'ho-b', [
    { name: 'owner', object: owner },
    { name: 'child', object: configMap('ho-child') },
  ]);
  const b = await waitFor('ho-b to record its claims', async () => {
    const bb = await getBundle(env, ns, 'ho-b');
    const o = await env.client.get(t.configMap, ns, 'ho-child');
    return bb && (o.metadata.ownerReferences ?? []).some((r) => r.uid === bb.metadata.uid) ? bb : undefined;
  });
  await applyBundle(env, ns, 'ho-a', [{ name: 'keep', object: configMap('ho-a-keep') }]);
  await waitFor('ho-b to control ho-child', async () => {
    const o = await env.client.get(t.configMap, ns, 'ho-child');
    return (o.metadata.ownerReferences ?? []).some((r) => r.uid === b.metadata.uid && r.controller === true);
  });
  await waitForReady(env, ns, 'ho-b');
  const child = await env.client.get(t.configMap, ns, 'ho-child');
  console.log(JSON.stringify(child.metadata.ownerReferences), JSON.stringify(child.metadata.managedFields, null, 1));
  expect((child.metadata.ownerReferences ?? []).some((r) => r.uid === ownerObj.metadata.uid)).toBe(true);

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'ho-b', { uid: b.metadata.uid });
  await waitFor('ho-b to be gone', async () => (await getBundle(env, ns, 'ho-b')) === undefined, { timeoutMs: 60_000 });
  expectKept(await env.client.tryGet(t.configMap, ns, 'ho-owner'), ownerObj.metadata.uid);
  const after = await env.client.tryGet(t.configMap, ns, 'ho-child');
  console.log('after', after === undefined ? 'GONE' : JSON.stringify(after.metadata.ownerReferences));
  expectKept(after, child.metadata.uid);
}, 120_000);
