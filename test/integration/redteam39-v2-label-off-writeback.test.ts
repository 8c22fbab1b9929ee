/**
 * Red team 39: a release an earlier version signed (v2 proof, no record, as
 * every release outstanding at the upgrade is) whose stamp, or whose proof,
 * a person took off (the proof then no longer checks, or is not there), seen
 * by the upgraded operator's sweep (unproven: kept); then its former-bundle
 * label is taken off by hand (`bundlesmith cancel` does the same) while the
 * sweep watches; later the label and what was taken off are written back (a
 * backup restored, a tool replaying what it saw). The siblings of
 * redteam38-v2-stampless-listing-writeback, with the label taken off instead
 * of a Bundle listing the object.
 *
 * Steps:
 *  1. cm is released as an earlier operator did it (former-bundle label and
 *     annotation `app`, deletionDelay 20s, a stamp S0 a minute ago, a v2
 *     proof over them), with the stamp or the proof left out. The sweep sees
 *     it.
 *  2. 5 s later the former-bundle label is taken off by hand: cm leaves the
 *     sweep's label-selected watch, still there.
 *  3. 5 s later the label and the stamp (or the proof) are written back.
 *
 * Expected (docs/safety.md, Released-object sweeper row): "a release ends
 * when the object is there without the former-bundle label: the sweep
 * records it when the object leaves its label-selected watch"; the known
 * limit covers a label taken off and put back "while no sweep watched" or
 * while the operator is down: here the sweep watched throughout. cm must be
 * kept at least 17 s after the write-back (at worst a new countdown).
 *
 * Before the fix (endIfLeft now records `ended` whatever proof the object
 * left with): endIfLeft ended a release without a record only where the
 * proof the object left with checked, so nothing was recorded; once the
 * marks were back, the v2 proof checked over S0 with no record, the sweep
 * signed it again as it stood (recordOlderRelease, asItStandsRecord 'write')
 * and deleted cm at once on the release that ended (failed 2/2 each).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { operatorFixture } from './operator.js';
import { expectKeptFor, legacyRelease, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt39v2labeloff');
const DELAY_S = 20;

it.each(['stamp', 'proof'] as const)(
  'a v2 release whose label was taken off while its %s was off stays kept once both are written back',
  async (takenOff) => {
    const { env, ns, t } = f;
    const name = `cm-${takenOff}`;
    // 1. Released by an earlier operator a minute ago; its stamp or its proof taken off by hand.
    const stamp = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const { uid, proof } = await legacyRelease(env, ns, name, { formerBundle: 'app', delay: `${DELAY_S}s`, stamp, takenOff });
    await sleep(5000);

    // 2. Its label taken off by hand while the sweep watches.
    await env.client.patch(t.configMap, ns, name, { metadata: { labels: { [Labels.formerBundle]: null } } }, 'merge');
    await sleep(5000);
    console.log('record after the label was taken off', JSON.stringify(await releaseRecordOf(env, uid)));

    // 3. The label and what was taken off written back.
    const back = takenOff === 'stamp' ? { [Annotations.deletionTimestamp]: stamp } : { [Annotations.releaseProof]: proof };
    await env.client.patch(t.configMap, ns, name, { metadata: { labels: { [Labels.formerBundle]: 'app' }, annotations: back } }, 'merge');
    const writtenBackAt = Date.now();
    await expectKeptFor(env, t.configMap, ns, name, uid, (DELAY_S - 3) * 1000);
    console.log('kept', Date.now() - writtenBackAt, 'ms after the write-back; record', JSON.stringify(await releaseRecordOf(env, uid)));
  },
  180_000,
);
