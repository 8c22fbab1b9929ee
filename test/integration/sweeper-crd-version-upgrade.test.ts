/**
 * A released object whose kind's CRD moves to a new version mid-countdown
 * (v1 served and stored, the old v1alpha1 no longer served) is still
 * deleted when its delay has passed: the sweep's watch follows the version
 * the server serves now for the group and kind (its rediscovery replaces a
 * watch at a version no longer preferred), rather than keeping a watch at
 * the old version that the server answers with 404 (red team 37 read the
 * leak; this shows it closed).
 */
import { Annotations } from '../../src/api/names.js';
import type { ResourceType } from '../../src/kube/types.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { uniqueName, waitFor } from './harness.js';
import { applyBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { deleteBundle, releaseSnapshot } from './release-writeback.js';

const f = operatorFixture('swcrdup');

it('a released object is deleted once its delay has passed, though its CRD moved to a new version mid-countdown', async () => {
  const { env, ns } = f;
  const group = `${uniqueName('swup')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = {
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name: 'g', annotations: { [Annotations.deletionDelay]: '15s' } },
    spec: { size: 1 },
  };
  await applyBundle(env, ns, 'first', [{ name: 'g', object: gadget }]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  await setGadgetVersions(env, group, [
    { name: 'v1alpha1', served: false, storage: false },
    { name: 'v1', served: true, storage: true },
  ]);
  const v1 = (await gadgetsServed(env, group, 'v1', true)) as ResourceType;
  await gadgetsServed(env, group, 'v1alpha1', false);
  const released = await releaseSnapshot(env, v1, ns, 'g');
  expect(released.stamp).toBeDefined();
  // The delay, plus the sweep's rediscovery (every 30 s) and margin.
  await waitFor('g deleted by the sweep', async () => (await env.client.tryGet(v1, ns, 'g'))?.metadata.uid !== released.uid, {
    timeoutMs: 120_000,
  });
}, 240_000);
