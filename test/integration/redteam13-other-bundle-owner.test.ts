/**
 * Red team 13: an object whose user made another, live Bundle one of its
 * owners is deleted by its own Bundle's finalizer.
 *
 * What a user does: Bundle rt13o-umbrella (B0) is live and lists nothing of
 * the objects below. Bundle rt13o-app (B1) lists ConfigMaps
 *  - rt13o-declared, whose manifest declares an ownerReference to B0
 *    (metadata.ownerReferences, non-controller: "Owners the user declares;
 *    kept when the operator releases the object", api/bundle.ts), and
 *  - rt13o-patched, to which a person or another tool adds the same
 *    ownerReference by hand (`kubectl patch`, a controller's
 *    SetOwnerReference: "live as long as the umbrella lives"),
 *  - rt13o-plain (no other owner: the control, deleted).
 * B1 is deleted (background, the default).
 *
 * Why the two should be kept: each still has a live owner, B0.
 * kube-controller-manager's collector keeps an object with a live owner left
 * (only the deleted owner's reference goes), and docs/safety.md says the
 * finalizer does as it does: "an object that also carries a non-Bundle
 * ownerReference loses only the Bundle's references, and the collector
 * deletes it once no owner is left". Red team 6 (`redteam6-sibling-owner`)
 * fixed this for a user's reference to a sibling; an owner that happens to
 * be a Bundle is the same case.
 *
 * What happens: both are deleted by the finalizer (event Pruned "its Bundle
 * is being deleted"). core/bundle/ownership.ts operatorWrittenReferences
 * reads every reference to a Bundle as the operator's (a controller or a
 * claim reference) unless that Bundle lists the object, before it looks at
 * what the manifest names (namedByManifest) or who wrote it; so
 * userReferences is empty and finalize.ts backgroundSteps deletes.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt13o');

it("a Bundle deleted in the background keeps an object another live Bundle owns by the user's reference", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt13o-umbrella', [{ name: 'u', object: configMap('rt13o-u') }]);
  const umbrella = await waitForReady(env, ns, 'rt13o-umbrella');
  const ownerRef = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    name: 'rt13o-umbrella',
    uid: umbrella.metadata.uid,
    blockOwnerDeletion: false,
  };
  const declared = { ...configMap('rt13o-declared'), metadata: { name: 'rt13o-declared', ownerReferences: [ownerRef] } };
  await applyBundle(env, ns, 'rt13o-app', [
    { name: 'declared', object: declared },
    { name: 'patched', object: configMap('rt13o-patched') },
    { name: 'plain', object: configMap('rt13o-plain') },
  ]);
  const app = await waitForReady(env, ns, 'rt13o-app');
  const patched = await env.client.get(t.configMap, ns, 'rt13o-patched');
  await env.client.patch(
    t.configMap,
    ns,
    'rt13o-patched',
    [
      { op: 'test', path: '/metadata/ownerReferences', value: patched.metadata.ownerReferences },
      { op: 'add', path: '/metadata/ownerReferences/-', value: ownerRef },
    ],
    'json',
    { fieldManager: 'another-tool' },
  );
  const uids = new Map<string, string>();
  for (const n of ['rt13o-declared', 'rt13o-patched', 'rt13o-plain']) {
    const o = await env.client.get(t.configMap, ns, n);
    expect((o.metadata.ownerReferences ?? []).some((r) => r.uid === umbrella.metadata.uid)).toBe(n !== 'rt13o-plain');
    uids.set(n, o.metadata.uid);
  }

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt13o-app', { uid: app.metadata.uid });
  await waitFor('rt13o-app to be gone', async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt13o-app')) === undefined, {
    timeoutMs: 60_000,
  });
  // The control: the plain object had no other owner and went.
  await waitFor('rt13o-plain deleted', async () => (await env.client.tryGet(t.configMap, ns, 'rt13o-plain')) === undefined);
  for (const n of ['rt13o-declared', 'rt13o-patched']) {
    const o = await env.client.tryGet(t.configMap, ns, n);
    console.log(n, o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  }
  for (const n of ['rt13o-declared', 'rt13o-patched']) expectKept(await env.client.tryGet(t.configMap, ns, n), uids.get(n)!);
}, 120_000);
