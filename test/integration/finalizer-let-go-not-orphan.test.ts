/**
 * Fuzz seed 19412: a background deletion read as an orphan one. Bundle b2
 * controls ConfigMap x; Bundle b1 lists x too (it lost the Conflict). b2 is
 * deleted in the foreground: its finalizer lets x go to b1, which lists it.
 * Before b1 takes x (in the seed a kill; here b1 acts as a ServiceAccount
 * that may not write x), b1 is deleted in the background. Its finalizer found x at its coordinates,
 * applied by the operator and controlled by nothing: the trace the garbage
 * collector leaves when it orphans a Bundle's objects before the finalizer's
 * first pass (effectivePropagation). It took the deletion for an orphan one
 * and kept everything: b1's own y, which kube-controller-manager deletes
 * with b1, stayed. A let-go now marks the object with the Bundle it left
 * (the former-bundle annotation), which that trace excludes.
 *
 * b2 is deleted in the background here: in the foreground,
 * kube-controller-manager's collector deletes x with b2 unless the finalizer
 * lets it go first (b1's claim, which would save it, is refused), and the
 * two race (docs/deletion.md, Foreground). This test ran b2's foreground
 * deletion while the reference cluster's collector did not watch Bundles
 * yet (its first 30 s), which hid the race.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { waitFor, waitForGone } from './harness.js';
import { applyBundle, bundleManifest, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { serviceAccountWithRules } from './orphan-traces.js';

const f = referenceFixture('letgo');
const AUTHOR = 'lg-author';

/** b1 acts as a ServiceAccount that may write lg-y only: its hand-over of lg-x is refused, so it never takes it. */
async function authorWritingOnlyY(): Promise<void> {
  await serviceAccountWithRules(f.env, f.ns, AUTHOR, [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: ['lg-y'], verbs: ['create', 'update', 'patch', 'delete'] },
  ]);
}

it('a Bundle deleted in the background before it took an object let go to it: a background deletion, not an orphan one', async () => {
  const { env, ns, t } = f;
  await authorWritingOnlyY();
  await applyBundle(env, ns, 'lg-b2', [{ name: 'x', object: configMap('lg-x') }]);
  const b2 = await waitForReady(env, ns, 'lg-b2');
  const b1 = await env.client.apply(
    BUNDLE_RESOURCE_TYPE,
    {
      ...bundleManifest(ns, 'lg-b1', [
        { name: 'x', object: configMap('lg-x') },
        { name: 'y', object: configMap('lg-y') },
      ]),
    },
    { fieldManager: 'test-user', force: true },
  );
  await env.client.patch(BUNDLE_RESOURCE_TYPE, ns, 'lg-b1', { spec: { serviceAccountName: AUTHOR } }, 'merge', {
    fieldManager: 'test-user',
  });
  await waitFor('lg-b1 to apply lg-y', async () => (await env.client.tryGet(t.configMap, ns, 'lg-y')) !== undefined);

  // b2's deletion lets x go to b1, which may not take it.
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'lg-b2', { uid: b2.metadata.uid ?? '', propagationPolicy: 'Background' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'lg-b2', { timeoutMs: 60_000 });
  const x = await env.client.get(t.configMap, ns, 'lg-x');
  expect((x.metadata.ownerReferences ?? []).some((r) => r.controller === true)).toBe(false);
  expect(x.metadata.annotations?.[Annotations.appliedHash]).toBeDefined();
  expect(x.metadata.annotations?.[Annotations.formerBundle]).toBe('lg-b2');

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'lg-b1', { uid: b1.metadata.uid ?? '' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'lg-b1', { timeoutMs: 60_000 });
  // A background deletion: b1's own object goes (kube-controller-manager deletes it too); x, let go, is nobody's and stays.
  await waitForGone(env, t.configMap, ns, 'lg-y', { timeoutMs: 60_000 });
  expect((await env.client.get(t.configMap, ns, 'lg-x')).metadata.uid).toBe(x.metadata.uid);
}, 240_000);
