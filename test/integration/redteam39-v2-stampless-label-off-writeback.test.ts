/**
 * Red team 39: a release an earlier version signed (v2 proof, no record, as
 * every release outstanding at the upgrade is) whose stamp a person took off
 * (its proof then no longer checks), seen by the upgraded operator's sweep;
 * then its former-bundle label is taken off by hand (`bundlesmith cancel`
 * does the same) while the sweep watches; later the label and the old stamp
 * are written back (a backup restored, a tool replaying what it saw). The
 * sibling of redteam38-v2-stampless-listing-writeback, with the label taken
 * off instead of a Bundle listing the object.
 *
 * Steps:
 *  1. cm is created as released by an earlier operator (former-bundle label
 *     and annotation `app`, deletionDelay 20s, a stamp S0 a minute ago), and
 *     its v2 proof over S0 is written in the same patch that takes S0 off.
 *     The sweep sees it (unproven: kept, reported).
 *  2. 5 s later the former-bundle label is taken off by hand: cm leaves the
 *     sweep's label-selected watch, still there.
 *  3. 5 s later the label and S0 are written back by hand.
 *
 * Expected (docs/safety.md): a release whose label is taken off has ended,
 * whoever took it off ("a release whose label is taken off ... while the
 * operator is down ... still counts, and so does one whose label was taken
 * off and put back while no sweep watched" is the known limit: here the
 * sweep watched throughout, and had seen the v2 proof). cm must be kept at
 * least 17 s after the write-back (at worst a new countdown).
 *
 * Before the fix (endIfLeft now records `ended` whatever proof the object left with): endIfLeft
 * (src/controllers/softdelete/release-records.ts:147-160, line 156) records the end
 * where there is no record only when the proof the object left with checks
 * (`checkReleaseProof(...).proven ? this.end(object) : this.endIfRecorded(object)`);
 * its stamp is off, so it does not check, and endIfRecorded writes nothing
 * (no record). The listing path was changed in e6a370c to record a v2 proof
 * whether it checks or not (cancelledByListing), this one was not. Once the
 * label and S0 are back, the v2 proof checks, there is no record, the sweep
 * signs it again as it stands (recordOlderRelease / asItStandsRecord
 * 'write') and deletes cm at once on the release that ended.
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { resourceType } from './harness.js';
import { operatorFixture, releaseProofFor } from './operator.js';
import { expectKeptFor, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt39v2labeloff');
const DELAY_S = 20;

it('a v2 release whose label was taken off while its stamp was off counts its old stamp once both are written back', async () => {
  const { env, ns, t } = f;
  const configMaps = await resourceType(env, 'v1', 'ConfigMap');
  // 1. Released by an earlier operator a minute ago; its stamp taken off by hand.
  const stamp = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const created = await env.client.create(configMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'cm',
      namespace: ns,
      labels: { [Labels.formerBundle]: 'app' },
      annotations: {
        [Annotations.formerBundle]: 'app',
        [Annotations.deletionDelay]: `${DELAY_S}s`,
        [Annotations.deletionTimestamp]: stamp,
      },
    },
    data: { key: 'v' },
  });
  const uid = created.metadata.uid ?? '';
  const signed = await releaseProofFor(created.metadata, 'v2');
  await env.client.patch(
    configMaps,
    ns,
    'cm',
    { metadata: { annotations: { ...signed, [Annotations.deletionTimestamp]: null } } },
    'merge',
  );
  await sleep(5000);

  // 2. Its label taken off by hand while the sweep watches.
  await env.client.patch(configMaps, ns, 'cm', { metadata: { labels: { [Labels.formerBundle]: null } } }, 'merge');
  await sleep(5000);
  console.log('record after the label was taken off', JSON.stringify(await releaseRecordOf(env, uid)));

  // 3. Label and stamp written back.
  await env.client.patch(
    configMaps,
    ns,
    'cm',
    { metadata: { labels: { [Labels.formerBundle]: 'app' }, annotations: { [Annotations.deletionTimestamp]: stamp } } },
    'merge',
  );
  const writtenBackAt = Date.now();
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, (DELAY_S - 3) * 1000);
  console.log('kept', Date.now() - writtenBackAt, 'ms after the write-back; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 180_000);
