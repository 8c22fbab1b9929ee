/**
 * Red team 40: the operator's RBAC on configmaps in its own namespace (the
 * chart's `<fullname>-release-key` RoleBinding, which grants the release
 * records) taken away for a while and given back. While it is away, a live
 * Bundle lists a released object: the listing's cancel cannot be recorded,
 * and, unlike a refused WRITE (red team 36: an admission policy, remembered
 * as an unwritten cancel), a refused READ of the record (403 on GET, which
 * ReleaseRecords.write makes before deciding) is not remembered at all. Once
 * the rights come back and the Bundle no longer lists the object, the stamp
 * the listing cancelled (S1) counts again and the object is deleted on it.
 *
 * Steps (the operator runs throughout, impersonating a user with the rights
 * it needs: everything in the test namespace, get on the release key Secret
 * and configmaps in `default` through a RoleBinding):
 *  1. Bundle `first` lists cm-rbac (deletionDelay 40s) and is deleted:
 *     released, stamp S1, v3 proof, record `signed`.
 *  2. The RoleBinding granting configmaps in `default` is deleted (RBAC on
 *     the records taken away).
 *  3. Bundle `third` (serviceAccountName `nobody`: never takes hold) lists
 *     cm-rbac for 10 s. The pass and the sweep both try to record the
 *     listing's cancel: the GET of the record is forbidden, nothing is
 *     remembered (ReleaseRecords.write throws before its try/catch).
 *  4. `third` is deleted; 2 s later the RoleBinding is created again.
 *
 * Expected (docs/safety.md: "a cancel or an end whose record may not be
 * written (an admission policy or RBAC in the operator's namespace refuses
 * it, a request fails) counts in the process that decided it ... the
 * cancelled stamp ... does not count"): S1 no longer counts; a new countdown
 * starts when no Bundle lists it, so cm-rbac is kept for at least the 40 s
 * delay after the drop.
 *
 * What happens (twice in a row): cm-rbac is deleted on S1, ~27 s after the
 * drop (exactly S1 + 40 s), while the record still said `signed` with S1's
 * proof. The log shows the sweep's cancelCountdown -> sawListed ->
 * recordListingCancel failing with "configmaps bundlesmith-release-key-<uid>
 * is forbidden: ... cannot get resource configmaps ... in the namespace
 * default": ReleaseRecords.write reads the record (tryGet) before its
 * try/catch, so a refused read throws without setting `unwritten`; nothing
 * counts the cancel in the process, and nothing writes it once the rights
 * come back. Control (RT40_CONTROL=1, the binding never taken away): record
 * `cancelled` during the listing, a new stamp S2 at the drop, kept for the
 * whole window (passes).
 *
 * Fixed: a cancel or an end decided while the record may not be read is
 * held (UnwrittenRecords.holdUnread) and decided on the record once it can
 * be read (core unreadDecided): S1 reads as cancelled from then on, and the
 * cancel is written at the sweep's next read of the record.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, getBundle } from './bundles.js';
import { recordsRbacFixture } from './records-rbac.js';
import { releasedBy, releaseRecordOf, sleep } from './release-writeback.js';

const DELAY_S = 40;
const f = recordsRbacFixture('rt40rbac');

it('a listing cancel whose record may not be READ (RBAC taken away) leaves the cancelled stamp counting', async () => {
  const { env, ns, t } = f;
  const cm = (name: string): Record<string, unknown> => configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_S}s` });
  const { uid, stamp } = await releasedBy(env, ns, 'first', [{ name: 'f', object: cm('cm-rbac') }], t.configMap, 'cm-rbac');
  const s1 = stamp ?? '';
  await waitFor('record written', async () => (await releaseRecordOf(env, uid)) !== undefined);
  console.log('record before', JSON.stringify(await releaseRecordOf(env, uid)), 'S1', s1);

  const droppedAt = await f.withoutRecords(async () => {
    await sleep(3_000);
    const third = bundleManifest(ns, 'third', [{ name: 'f', object: cm('cm-rbac') }]) as { spec: Record<string, unknown> };
    await env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      { ...third, spec: { ...third.spec, serviceAccountName: 'nobody' } },
      { fieldManager: 'test-user', force: true },
    );
    await sleep(10_000);
    console.log('record after listing', JSON.stringify(await releaseRecordOf(env, uid)));
    const now = await env.client.get(t.configMap, ns, 'cm-rbac');
    console.log('annotations after listing', JSON.stringify(now.metadata.annotations));
    expectKept(now, uid);
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'third', { uid: (await getBundle(env, ns, 'third'))?.metadata.uid ?? '' });
    const dropped = Date.now();
    await sleep(2_000);
    return dropped;
  });
  let lastStamp: string | undefined;
  // Kept for DELAY_S - 5 s after the drop: a countdown started at (or after) the drop needs DELAY_S.
  while (Date.now() - droppedAt < (DELAY_S - 5) * 1000) {
    const o = await env.client.tryGet(t.configMap, ns, 'cm-rbac');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined)
      throw new Error(
        `cm-rbac deleted ${Date.now() - droppedAt} ms after the drop on stamp ${lastStamp ?? '?'} (cancelled S1 ${s1}); record ${JSON.stringify(
          await releaseRecordOf(env, uid),
        )}`,
      );
    lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(500);
  }
  console.log('final stamp', lastStamp, 'record', JSON.stringify(await releaseRecordOf(env, uid)));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-rbac'), uid);
}, 240_000);
