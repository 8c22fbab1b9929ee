/**
 * Red team 37: a listing whose object shows, while listed, an earlier release
 * (its annotations written back) that an earlier listing already cancelled
 * does not cancel the recorded signing: ReleaseRecords.recordListingCancel
 * deduped on uid@proof@stamp *as the object shows them*
 * (release-records.ts, its recordedCancels, since removed),
 * not on the record it would cancel. The current release's countdown then
 * runs on through a live Bundle's listing, and ends early once the current
 * marks are written back.
 *
 * Steps (operator runs throughout; only the object's own earlier annotations
 * are written back, no record is touched):
 *  1. Bundle `first` lists cm-seen (deletionDelay 20s) and is deleted:
 *     released, stamp S1, proof P1, record `signed P1`. Snapshot A1 of its
 *     annotations.
 *  2. Bundle `third` (serviceAccountName `nobody`: never takes hold) lists
 *     cm-seen: record `cancelled P1` (recordedCancels now holds uid@P1@S1).
 *  3. `third` is deleted: the sweep starts a new countdown, S3/P3, record
 *     `signed P3`. Snapshot A3. A1 (S1/P1) is written back at once (an earlier
 *     release: kept, never counted, as designed).
 *  4. Bundle `fourth` (the same, `nobody`) lists cm-seen for 10 s, while it shows S1/P1.
 *  5. `fourth` is deleted (>= 22 s after S3), and A3 (S3/P3) is written back.
 *
 * Expected (docs/safety.md, red team 30: a listing cancels "the recorded
 * signing ... whatever the object shows now"; "Edits by hand can put a
 * deletion off, never bring it forward"): step 4's listing records
 * `cancelled P3`, so S3 reads as none after the drop and a new countdown of
 * 20 s starts: kept for at least 15 s after step 5.
 *
 * Control (RT37_CONTROL=1: step 3 writes A1 back without its stamp S1, so the
 * object shows uid@P1@'' during step 4, never seen listed): the record is
 * `cancelled P3` after step 4 and cm-seen is kept after step 5 (a new
 * countdown S4 starts), as designed.
 *
 * Before the fix (recordListingCancel now decides on the record read fresh
 * every time, and remembers nothing): step 4's listing was skipped (uid@P1@S1
 * was "recorded" in step 2), the record stayed `signed P3` throughout the
 * listing, and cm-seen was deleted ~0.5 s after step 5 on S3, a stamp
 * written before a live Bundle listed the object (3/3 runs; the control
 * passed 1/1). The sweep's own cancel (relisted-release.ts, recordSigning
 * with the object's P1) is refused as not current, so nothing else
 * cancelled P3 either.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { BUNDLE_RESOURCE_TYPE, applyBundle, bundleManifest, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { deleteBundle, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt37slw');

it('a listing while an earlier, already-cancelled release is written back still cancels the recorded signing', async () => {
  const { env, ns, t } = f;
  const cm = (name: string): Record<string, unknown> => configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: '20s' });
  const annotationsOf = async (): Promise<Record<string, string>> => ({
    ...((await env.client.get(t.configMap, ns, 'cm-seen')).metadata.annotations ?? {}),
  });
  const writeBack = async (to: Record<string, string>): Promise<void> => {
    const now = await annotationsOf();
    const annotations: Record<string, string | null> = { ...to };
    for (const k of Object.keys(now)) if (!(k in to)) annotations[k] = null;
    await env.client.patch(t.configMap, ns, 'cm-seen', { metadata: { annotations } }, 'merge', { fieldManager: 'test-user' });
  };
  // Bundles with serviceAccountName `nobody` never take hold, and their finalizer holds (KindNotListable): each is
  // dropped by its deletion (a Bundle being deleted lists nothing), under a new name each time.
  const listBy = async (bundle: string): Promise<void> => {
    const third = bundleManifest(ns, bundle, [{ name: 'f', object: cm('cm-seen') }]) as { spec: Record<string, unknown> };
    await env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      { ...third, spec: { ...third.spec, serviceAccountName: 'nobody' } },
      { fieldManager: 'test-user', force: true },
    );
  };

  // 1. Released by `first`: S1/P1, record signed P1.
  await applyBundle(env, ns, 'first', [{ name: 'f', object: cm('cm-seen') }]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  const released = await waitFor('cm-seen released with a stamp', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'cm-seen');
    return o?.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined ? o : undefined;
  });
  const uid = released.metadata.uid ?? '';
  const a1 = await annotationsOf();
  const p1 = a1[Annotations.releaseProof];
  await waitFor('record signed P1', async () => (await releaseRecordOf(env, uid))?.proof === p1);

  // 2. `third` lists it: record cancelled P1.
  await listBy('third');
  await waitFor('record cancelled P1', async () => (await releaseRecordOf(env, uid))?.state === 'cancelled', { timeoutMs: 30_000 });
  console.log('record after first listing', JSON.stringify(await releaseRecordOf(env, uid)));

  // 3. Dropped: a new countdown S3/P3; A1 written back at once.
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'third', { uid: (await getBundle(env, ns, 'third'))?.metadata.uid ?? '' });
  const restamped = await waitFor(
    'a new countdown S3',
    async () => {
      const o = await env.client.tryGet(t.configMap, ns, 'cm-seen');
      const s = o?.metadata.annotations?.[Annotations.deletionTimestamp];
      return s !== undefined && s !== a1[Annotations.deletionTimestamp] ? o : undefined;
    },
    // The sweep reads the record when S1 falls due (20 s after it): cancelled, so a new countdown starts then.
    { timeoutMs: 45_000 },
  );
  const s3At = Date.now();
  const a3 = { ...(restamped.metadata.annotations ?? {}) };
  // RT37_CONTROL=1: A1 written back without its stamp S1 (uid@P1@'' was never seen listed): the listing of step 4 then
  // records `cancelled P3` (red team 30), and the object is kept after step 5, as designed.
  const control = process.env.RT37_CONTROL === '1';
  const { [Annotations.deletionTimestamp]: _s1, ...a1Unstamped } = a1;
  await writeBack(control ? a1Unstamped : a1);
  const p3 = a3[Annotations.releaseProof];
  console.log('S1', a1[Annotations.deletionTimestamp], 'S3', a3[Annotations.deletionTimestamp]);
  await waitFor('record signed P3', async () => (await releaseRecordOf(env, uid))?.proof === p3);
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-seen'), uid);

  // 4. `third` lists it again for 10 s while it shows S1/P1.
  await listBy('fourth');
  await sleep(10_000);
  const recordListed = await releaseRecordOf(env, uid);
  console.log('record after second listing', JSON.stringify(recordListed));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-seen'), uid);

  // 5. Dropped, >= 22 s after S3; A3 written back.
  const wait = 22_000 - (Date.now() - s3At);
  if (wait > 0) await sleep(wait);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'fourth', { uid: (await getBundle(env, ns, 'fourth'))?.metadata.uid ?? '' });
  await sleep(1_000);
  await writeBack(a3);
  const restoredAt = Date.now();
  let lastStamp: string | undefined;
  while (Date.now() - restoredAt < 15_000) {
    const o = await env.client.tryGet(t.configMap, ns, 'cm-seen');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined)
      throw new Error(
        `cm-seen deleted ${Date.now() - restoredAt} ms after the drop on stamp ${lastStamp ?? '?'} (S3 ${a3[Annotations.deletionTimestamp]}, ` +
          `written before Bundle fourth listed it; record during the listing ${JSON.stringify(recordListed)})`,
      );
    lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(500);
  }
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-seen'), uid);
  if (control) expect(recordListed?.state).toBe('cancelled');
}, 240_000);
