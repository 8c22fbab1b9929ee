/**
 * Red team 38: the end of a release whose record may not be written (a
 * ValidatingAdmissionPolicy refuses UPDATE of the object's release record
 * ConfigMap for a while: another team's policy engine, the operator's RBAC on
 * configmaps narrowed; the same refusal red team 36 used) is forgotten, and
 * the release written back afterwards counts.
 *
 * Steps (the operator runs throughout):
 *  1. Bundle `first` lists cm-ended (deletionDelay 30s) and is deleted:
 *     released, stamp S1, v3 proof P, record `signed` P.
 *  2. Updates of the record default/bundlesmith-release-key-<uid> are
 *     refused.
 *  3. The release is cancelled as `bundlesmith cancel` does (stamp, label,
 *     former-bundle annotation and proof taken off). The object leaves the
 *     sweep's label-selected watch: ReleaseRecords.endIfLeft tries to record
 *     the release `ended`; the write is refused.
 *  4. 5 s later the refusal is lifted.
 *  5. 2 s later the release as it was (label, former-bundle, S1, P) is
 *     written back (a backup restored, a tool replaying what it saw).
 *
 * Expected (docs/safety.md, Released-object sweeper): "a release ends when
 * the object is there without the former-bundle label: the sweep records it
 * when the object leaves its label-selected watch (`bundlesmith cancel`, a
 * person taking the label off)"; "an object whose release is not the
 * recorded one (an earlier release written back ... or one that ended) is
 * kept". The known limit covers a label taken off "while the operator is
 * down" or "while no sweep watched"; here the sweep watched and decided the
 * end, as red team 36's cancel, which is now remembered when its write is
 * refused (unwrittenCancels). cm-ended must be kept.
 *
 * Before the fix (a refused end now counts in the process that decided it,
 * ReleaseRecords.unwritten, and is written at the sweep's next read):
 * endIfLeft (release-records.ts: endIfLeft -> end -> write/upsert) threw ReleaseRecordRefused, and its
 * catch only logs ("recording the end of a release failed"): nothing
 * remembers the end (only listing cancels are kept in unwrittenCancels), and
 * nothing writes it again before the records' look every ten minutes
 * (pruneGone). The record stays `signed` P; once written back, the release
 * is "the recorded one" again, and the sweep deletes cm-ended on S1 when its
 * 30 s delay runs out.
 */
import { Annotations } from '../../src/api/names.js';
import { waitFor } from './harness.js';
import { configMap } from './bundles.js';
import { operatorFixture } from './operator.js';
import {
  expectKeptFor,
  RELEASE_RECORDS_NAMESPACE,
  releasedBy,
  releaseRecordName,
  releaseRecordOf,
  sleep,
  takeReleaseOff,
  writeReleaseBack,
} from './release-writeback.js';
import { refuseConfigMapOperation } from './refuse-operation.js';

const f = operatorFixture('rt38endref');
const DELAY_S = 30;

it('a release cancelled while its record may not be written counts again when written back', async () => {
  const { env, ns, t } = f;
  const released = await releasedBy(
    env,
    ns,
    'first',
    [{ name: 'f', object: configMap('cm-ended', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_S}s` }) }],
    t.configMap,
    'cm-ended',
  );
  const { uid } = released;
  await waitFor('record written', async () => (await releaseRecordOf(env, uid))?.proof === released.proof);
  console.log('record before', JSON.stringify(await releaseRecordOf(env, uid)), 'stamp', released.stamp);

  const unrefuse = await refuseConfigMapOperation(env, RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid), 'UPDATE', 'records frozen');
  try {
    await sleep(3_000);
    // 3. Cancelled as `bundlesmith cancel` does.
    await takeReleaseOff(env, t.configMap, ns, 'cm-ended', uid);
    await sleep(5_000);
    console.log('record after the cancel (refused)', JSON.stringify(await releaseRecordOf(env, uid)));
  } finally {
    // 4. The refusal lifted.
    await unrefuse();
  }
  await sleep(2_000);
  console.log('record before the write-back', JSON.stringify(await releaseRecordOf(env, uid)));

  // 5. The release as it was, written back.
  await writeReleaseBack(env, t.configMap, ns, 'cm-ended', released);
  const writtenBackAt = Date.now();
  await expectKeptFor(env, t.configMap, ns, 'cm-ended', uid, (DELAY_S + 10) * 1000);
  console.log('kept', Date.now() - writtenBackAt, 'ms after the write-back; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 180_000);
