/**
 * Red team 32 (the same weak spot as redteam32-unproven-listing-uncancelled,
 * on a served ConfigMap, no CRD upgrade): ReleaseRecords.recordListingCancel
 * records nothing for an object that carries a stamp and a release proof
 * that does not check, whatever the record says, and a Bundle that loses a
 * Conflict to a non-Bundle controller takes no hold of the object (so no
 * `end`: core/bundle/take-holds.ts returns undefined for that conflict).
 * Someone who may only patch the object gives it a controller reference to
 * another object and takes the proof off; a Bundle lists it (Conflict); the
 * first countdown runs out while it is listed; the Bundle drops it; the user
 * takes the reference off and writes the proof back: the record still says
 * `signed P1`, and the sweep deletes the object at once on the stamp the
 * listing should have cancelled.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace `default`):
 *  1. Bundle `first` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with stamp S1 and proof P1 (v3), recorded `signed P1`.
 *  2. The user patches cm: a controller ownerReference to ConfigMap
 *     `anchor` (which exists) and the release proof taken off.
 *  3. Bundle `second` lists cm (it reports a Conflict) and `other`; kept
 *     listed until past S1 + 20s.
 *  4. `second` drops cm; the user takes the ownerReference off and writes
 *     P1 back.
 *
 * Expected (docs/safety.md): "listing it again cancels the countdown at
 * once, even behind ... a failed apply"; "a countdown a Bundle's listing
 * cancelled is recorded as cancelled by whichever sees the listing first";
 * "Edits by hand can put a deletion off, never bring it forward". So cm is
 * counted down anew from the drop (kept at least 20 s after it).
 *
 * What happens: the pass's recordListingCancels and the sweep's sawListed
 * both reach recordListingCancel, which returns at the proof check (a stamp,
 * no proof that checks); no take-hold is planned (a non-Bundle controller);
 * the sweep's cancel is skipped (a controller owner: not released). The
 * record stays `signed P1`; after step 4 the sweep deletes cm about a second
 * after the write-back, on S1.
 *
 * Fixed: recordListingCancel cancels a recorded signing whatever the object
 * shows, its proof off included; the proof is checked only where there is no
 * record ("What happens" above is the code before that).
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { annotationPointer, patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, releaseRecordOf, releaseSnapshot, sleep } from './release-writeback.js';

const f = operatorFixture('rt32conflict');
const DELAY_S = 20;

it('a release whose proof is taken off while a Bundle lists it (a Conflict) is not recorded cancelled, and counts again when written back', async () => {
  const { env, ns, t } = f;
  const cm = (name: string) => configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_S}s` });

  // 1. Released by `first`: S1, P1, recorded signed P1.
  await applyBundle(env, ns, 'first', [{ name: 'c', object: cm('cm') }]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  const released = await releaseSnapshot(env, t.configMap, ns, 'cm');
  expect(released.proof).toMatch(/^v3:/);
  expect(released.stamp).toBeDefined();
  expect(await releaseRecordOf(env, released.uid)).toMatchObject({ state: 'signed', proof: released.proof });

  // 2. A controller reference to another object, and the proof off.
  const anchor = await env.client.create(t.configMap, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'anchor', namespace: ns } });
  const user = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });
  await user.patch(
    t.configMap,
    ns,
    'cm',
    [
      {
        op: 'add',
        path: '/metadata/ownerReferences',
        value: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'anchor', uid: anchor.metadata.uid, controller: true }],
      },
      { op: 'remove', path: annotationPointer(Annotations.releaseProof) },
    ],
    'json',
  );

  // 3. Listed again, until well past S1 + delay.
  await applyBundle(env, ns, 'second', [
    { name: 'c', object: cm('cm') },
    { name: 'o', object: cm('other') },
  ]);
  await sleep(Math.max(5_000, Date.parse(released.stamp ?? '') + DELAY_S * 1000 + 5_000 - Date.now()));
  console.log('record while listed:', JSON.stringify(await releaseRecordOf(env, released.uid)));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), released.uid);

  // 4. Dropped; the user takes the reference off and writes the proof back.
  await applyBundle(env, ns, 'second', [{ name: 'o', object: cm('other') }]);
  await sleep(3_000);
  await user.patch(
    t.configMap,
    ns,
    'cm',
    [
      { op: 'remove', path: '/metadata/ownerReferences' },
      { op: 'add', path: annotationPointer(Annotations.releaseProof), value: released.proof },
    ],
    'json',
  );
  console.log(`written back at ${new Date().toISOString()} (S1 ${released.stamp}, delay ${DELAY_S}s)`);

  // A countdown from the drop at the earliest: kept for most of a delay after the write-back.
  const writtenBack = Date.now();
  while (Date.now() - writtenBack < (DELAY_S - 5) * 1000) {
    const o = await env.client.tryGet(t.configMap, ns, 'cm');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined) {
      console.log(`cm deleted ${Date.now() - writtenBack} ms after the write-back, on S1 ${released.stamp}`);
      break;
    }
    await sleep(500);
  }
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), released.uid);
}, 240_000);
