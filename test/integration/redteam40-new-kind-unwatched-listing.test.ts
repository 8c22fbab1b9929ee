/**
 * Red team 40: a listing's cancel that nobody records because the sweep does
 * not watch the kind yet. A CRD installed moments ago (its kind not yet in
 * the sweep's watches: they follow discovery at the sweep's rediscovery,
 * every 30 s) has an object released; a Bundle whose identity
 * (`spec.serviceAccountName`) may not read that kind lists it for a few
 * seconds, then is deleted. The Bundle's pass records nothing (its reads
 * run as the Bundle's account: the kind is reported unlistable, 403, so the
 * object is never read and recordListingCancels has nothing to record), and
 * the sweep, whose watch of the kind starts only at its next rediscovery,
 * never sees the listing. The cancelled stamp
 * S1 counts and the object is deleted on it.
 *
 * Steps (the operator runs throughout, started right before the test, so its
 * first rediscovery comes ~30 s later):
 *  1. CRD gadgets.<group> (v1alpha1) installed; Bundle `first` lists Gadget g
 *     (deletionDelay 45s) and is deleted: released, stamp S1, v3 proof,
 *     record `signed`.
 *  2. Bundle `third` (serviceAccountName `nobody`: no rights on gadgets)
 *     lists g for 6 s, then is deleted.
 *
 * Expected (docs/safety.md: "a countdown a Bundle's listing cancelled is
 * recorded as cancelled by whichever sees the listing first (the Bundle's
 * pass ..., or the sweep)"; "An object a live Bundle lists is never swept
 * ... listing it cancels its countdown"): S1 no longer counts, a new
 * countdown starts at the drop; g is kept for the 45 s delay after the drop.
 * (The known limit covers a listing that starts and ends "while no pass of
 * the Bundle and no sweep runs (the operator down throughout)"; here the
 * operator is up and the pass ran.)
 *
 * What happens (twice in a row): the record stays `signed` S1's proof while
 * listed; the sweep's watch of gadgets starts after the drop and g is deleted
 * on S1 (S1 + 45 s, ~39 s after the drop, both runs). The same steps with a
 * ConfigMap (a kind the sweep already watches: redteam36's control) record
 * the cancel and keep the object.
 *
 * Fixed: a listed object the Bundle's identity may not read is read as the
 * operator to record the listing's cancel (ReleaseRecords.recordListingCancelAt,
 * from the pass's recordListingCancels).
 */
import { Annotations } from '../../src/api/names.js';
import type { ResourceType } from '../../src/kube/types.js';
import { installGadgets } from './gadgets.js';
import { expectKept, uniqueName } from './harness.js';
import { applyBundle, BUNDLE_RESOURCE_TYPE, bundleManifest, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { deleteBundle, releaseRecordOf, releaseSnapshot, sleep } from './release-writeback.js';

const f = operatorFixture('rt40newkind');
const DELAY_S = 45;

it('a listing of a released object of a kind the sweep does not watch yet, by a Bundle that may not read it, leaves the stamp counting', async () => {
  const { env, ns } = f;
  const group = `${uniqueName('rt40nk')}.bundlesmith.test`;
  const alpha = (await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }])) as ResourceType;
  const gadget = {
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name: 'g', annotations: { [Annotations.deletionDelay]: `${DELAY_S}s` } },
    spec: { size: 1 },
  };
  await applyBundle(env, ns, 'first', [{ name: 'g', object: gadget }]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  const released = await releaseSnapshot(env, alpha, ns, 'g');
  console.log('released', JSON.stringify(released), JSON.stringify(await releaseRecordOf(env, released.uid)));
  const third = bundleManifest(ns, 'third', [{ name: 'g', object: gadget }]) as { spec: Record<string, unknown> };
  await env.client.apply(
    BUNDLE_RESOURCE_TYPE,
    { ...third, spec: { ...third.spec, serviceAccountName: 'nobody' } },
    { fieldManager: 'test-user', force: true },
  );
  await sleep(6_000);
  console.log('record while listed', JSON.stringify(await releaseRecordOf(env, released.uid)));
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'third', { uid: (await getBundle(env, ns, 'third'))?.metadata.uid ?? '' });
  const droppedAt = Date.now();
  let last: string | undefined;
  while (Date.now() - droppedAt < (DELAY_S - 5) * 1000) {
    const o = await env.client.tryGet(alpha, ns, 'g');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined || o.metadata.uid !== released.uid)
      throw new Error(
        `g deleted ${Date.now() - droppedAt} ms after the drop on stamp ${last ?? '?'} (cancelled S1 ${released.stamp ?? '?'}); record ${JSON.stringify(
          await releaseRecordOf(env, released.uid),
        )}`,
      );
    last = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(500);
  }
  console.log('kept; stamp', last, 'record', JSON.stringify(await releaseRecordOf(env, released.uid)));
  expectKept(await env.client.tryGet(alpha, ns, 'g'), released.uid);
}, 240_000);
