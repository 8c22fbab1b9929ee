/**
 * Red team 32: a listing records the cancel of a recorded release only while
 * the object's proof checks. ReleaseRecords.recordListingCancel
 * (controllers/softdelete/release-records.ts) returns without writing
 * anything when the object carries a stamp and its release proof does not
 * check, whatever the record says; the sweep's own cancel
 * (relisted-release.ts cancelCountdown) needs a proven proof too, and a
 * Bundle listing the object at a version the server no longer serves takes
 * no hold of it (so no `end` either). Someone who may only patch the object
 * takes the proof off while a Bundle lists it, and writes it back once the
 * Bundle dropped it: the record still says `signed P1`, the stamp S1 ran out
 * while the object was listed, and the sweep deletes it at once.
 *
 * Steps (the patch-only user may get/patch Gadgets of the namespace, nothing
 * in the operator's namespace `default`):
 *  1. Bundle `first` lists Gadget g (deletionDelay 20s) at v1alpha1 and is
 *     deleted: released with stamp S1 and proof P1 (v3), recorded `signed P1`.
 *  2. The CRD moves to v1 and stops serving v1alpha1 (the usual upgrade).
 *  3. The patch-only user takes the release proof annotation off g (stamp,
 *     label, delay left as they are).
 *  4. Bundle `second` lists g at v1alpha1 (and g-other), past S1 + 20s.
 *  5. `second` drops g; the user writes P1 back onto g.
 *
 * Expected (docs/safety.md): "listing it again cancels the countdown at
 * once"; "a countdown a Bundle's listing cancelled is recorded as cancelled
 * by whichever sees the listing first (the Bundle's pass, reading an object
 * listed at a version no longer served at the version the server serves, or
 * the sweep), so the stamp a refused cancel leaves does not count"; the
 * record-based cancel is "whatever the object shows now" (release-record.ts
 * cancelledByListing); "Edits by hand can put a deletion off, never bring it
 * forward." So after the drop g is counted down anew (deleted 20 s after the
 * drop at the earliest), never deleted on S1. No known limit covers it: the
 * operator ran throughout and no one touched namespace `default`.
 *
 * What happens: step 4's pass (listed-releases.ts) reads g at v1 and calls
 * recordListingCancel, which sees a stamp and a proof that does not check
 * (none) and records nothing; the sweep's cancelCountdown → sawListed does
 * the same, and its cancel (decideListedRelease: `cancel`, unserved
 * listing) stops at proofs.proven. The record stays `signed P1`. At step 5
 * the proof checks again, readWithRecord keeps S1 (the recorded signing),
 * S1 + 20s is long past, and deleteIfStillDue deletes g within a second or
 * two of the write-back.
 *
 * Fixed: recordListingCancel cancels a recorded signing whatever the object
 * shows, its proof off included; the proof is checked only where there is no
 * record ("What happens" above is the code before that).
 */
import { Annotations } from '../../src/api/names.js';
import type { ResourceType } from '../../src/kube/types.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { expectKept, uniqueName } from './harness.js';
import { applyBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { annotationPointer, patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, releaseRecordOf, releaseSnapshot, sleep } from './release-writeback.js';

const f = operatorFixture('rt32unproven');
const DELAY_S = 20;

it('a release whose proof is taken off while a Bundle lists it (unserved version) is not recorded cancelled, and counts again when written back', async () => {
  const { env, ns } = f;
  const group = `${uniqueName('rt32')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = (name: string): Record<string, unknown> => ({
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name, annotations: { [Annotations.deletionDelay]: `${DELAY_S}s` } },
    spec: { size: 1 },
  });

  // 1. Released by `first`: S1, P1, recorded signed P1.
  await applyBundle(env, ns, 'first', [{ name: 'g', object: gadget('g') }]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');

  // 2. The upgrade: v1 served and stored, v1alpha1 no longer served.
  await setGadgetVersions(env, group, [
    { name: 'v1alpha1', served: false, storage: false },
    { name: 'v1', served: true, storage: true },
  ]);
  const v1 = (await gadgetsServed(env, group, 'v1', true)) as ResourceType;
  await gadgetsServed(env, group, 'v1alpha1', false);
  const released = await releaseSnapshot(env, v1, ns, 'g');
  expect(released.proof).toMatch(/^v3:/);
  expect(released.stamp).toBeDefined();
  expect(await releaseRecordOf(env, released.uid)).toMatchObject({ state: 'signed', proof: released.proof });

  // 3. The patch-only user takes the proof off.
  const user = await patchOnlyUser(env, ns, { apiGroups: [group], resources: ['gadgets'] });
  await user.patch(v1, ns, 'g', [{ op: 'remove', path: annotationPointer(Annotations.releaseProof) }], 'json');

  // 4. Listed again at v1alpha1, until well past S1 + delay.
  await applyBundle(env, ns, 'second', [
    { name: 'g', object: gadget('g') },
    { name: 'o', object: gadget('g-other') },
  ]);
  await sleep(Math.max(5_000, Date.parse(released.stamp ?? '') + DELAY_S * 1000 + 5_000 - Date.now()));
  console.log('record while listed:', JSON.stringify(await releaseRecordOf(env, released.uid)));
  expectKept(await env.client.tryGet(v1, ns, 'g'), released.uid);

  // 5. Dropped; the user writes the proof back.
  await applyBundle(env, ns, 'second', [{ name: 'o', object: gadget('g-other') }]);
  await sleep(3_000);
  await user.patch(v1, ns, 'g', { metadata: { annotations: { [Annotations.releaseProof]: released.proof } } }, 'merge');
  console.log(`proof written back at ${new Date().toISOString()} (S1 ${released.stamp}, delay ${DELAY_S}s)`);

  // A countdown from the drop at the earliest: kept for most of a delay after the write-back.
  const writtenBack = Date.now();
  while (Date.now() - writtenBack < (DELAY_S - 5) * 1000) {
    const o = await env.client.tryGet(v1, ns, 'g');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined) {
      console.log(`g deleted ${Date.now() - writtenBack} ms after the write-back, on S1 ${released.stamp}`);
      break;
    }
    await sleep(500);
  }
  expectKept(await env.client.tryGet(v1, ns, 'g'), released.uid);
}, 240_000);
