/**
 * Red team 40 (the end variant of redteam40-record-rbac-revoked-listing):
 * the operator's RBAC on configmaps in its own namespace (the chart's
 * `<fullname>-release-key` RoleBinding, which grants the release records)
 * taken away for a while and given back. While it is away, the release is
 * cancelled as `bundlesmith cancel` does; the object leaves the sweep's
 * label-selected watch, and ReleaseRecords.endIfLeft -> end -> write reads
 * the record first: the GET is forbidden, the error is only logged
 * ("recording the end of a release failed") and nothing remembers the end
 * (unlike red team 38's refused UPDATE, remembered as unwritten).
 *
 * Steps (the operator runs throughout, impersonating a user with the rights
 * it needs: everything in the test namespace, get on the release key Secret
 * and configmaps in `default` through a RoleBinding):
 *  1. Bundle `first` lists cm-rbac-end (deletionDelay 30s) and is deleted:
 *     released, stamp S1, v3 proof P, record `signed` P.
 *  2. The RoleBinding granting configmaps in `default` is deleted.
 *  3. The release is cancelled as `bundlesmith cancel` does (stamp, label,
 *     former-bundle annotation and proof taken off).
 *  4. 5 s later the RoleBinding is created again; 2 s later the release as
 *     it was (label, former-bundle, S1, P) is written back (a backup
 *     restored, a tool replaying what it saw).
 *
 * Expected (docs/safety.md: "a cancel or an end whose record may not be
 * written (an admission policy or RBAC in the operator's namespace refuses
 * it, a request fails) counts in the process that decided it ... the release
 * that ended, does not count"; the end is recorded "when the object leaves
 * its label-selected watch"): the release written back is not the recorded
 * one, cm-rbac-end is kept.
 *
 * What happens (twice in a row): the log shows endIfLeft's "recording the
 * end of a release failed: configmaps bundlesmith-release-key-<uid> is
 * forbidden: ... cannot get resource configmaps ... in the namespace
 * default"; the record still says `signed` P before the write-back, and
 * cm-rbac-end is deleted on S1 ~20 s after the write-back (S1 + 30 s).
 * Control (RT40_CONTROL=1, the binding never taken away): record `ended`
 * before the write-back, kept (passes). Same root cause as the listing
 * variant: ReleaseRecords.write's read of the record throws before its
 * try/catch, so the end is never remembered as unwritten.
 *
 * Fixed: the end is held unread (UnwrittenRecords.holdUnread) and decided on
 * the record once it can be read: the release written back is not the one
 * recorded, and the sweep keeps the object.
 */
import { Annotations } from '../../src/api/names.js';
import { waitFor } from './harness.js';
import { configMap } from './bundles.js';
import { recordsRbacFixture } from './records-rbac.js';
import { expectKeptFor, releasedBy, releaseRecordOf, sleep, takeReleaseOff, writeReleaseBack } from './release-writeback.js';

const f = recordsRbacFixture('rt40rbacend');

it('an end whose record may not be READ (RBAC taken away) is forgotten; the release written back counts', async () => {
  const { env, ns, t } = f;
  const DELAY = 30;
  const cm = configMap('cm-rbac-end', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY}s` });
  const released = await releasedBy(env, ns, 'first', [{ name: 'f', object: cm }], t.configMap, 'cm-rbac-end');
  const { uid } = released;
  await waitFor('record written', async () => (await releaseRecordOf(env, uid))?.proof === released.proof);
  console.log('record before', JSON.stringify(await releaseRecordOf(env, uid)), 'S1', released.stamp);
  await f.withoutRecords(async () => {
    await sleep(3_000);
    await takeReleaseOff(env, t.configMap, ns, 'cm-rbac-end', uid);
    await sleep(5_000);
  });
  await sleep(2_000);
  console.log('record before the write-back', JSON.stringify(await releaseRecordOf(env, uid)));
  await writeReleaseBack(env, t.configMap, ns, 'cm-rbac-end', released);
  const writtenBackAt = Date.now();
  try {
    await expectKeptFor(env, t.configMap, ns, 'cm-rbac-end', uid, (DELAY + 10) * 1000);
  } catch (err) {
    throw new Error(
      `${String(err)}: ${Date.now() - writtenBackAt} ms after the write-back; record ${JSON.stringify(await releaseRecordOf(env, uid))}`,
    );
  }
  console.log('kept; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 240_000);
