/**
 * Red team 39: a release an earlier version signed (v2 proof, no record, as
 * every release outstanding at the upgrade is) whose PROOF a person took off
 * (its label, former-bundle annotation, delay and stamp stay), seen by the
 * upgraded operator's sweep (unproven: kept); then its former-bundle label is
 * taken off by hand (`bundlesmith cancel` does the same) while the sweep
 * watches; later the label and the proof are written back (a backup
 * restored, a tool replaying what it saw). The proofless sibling of
 * redteam39-v2-stampless-label-off-writeback (a fix of endIfLeft that ends
 * any v2/v1 proof the object left with, checking or not, still leaves this
 * one: it left with no proof at all).
 *
 * Steps:
 *  1. cm is created as released by an earlier operator (former-bundle label
 *     and annotation `app`, deletionDelay 20s, a stamp S0 a minute ago); its
 *     v2 proof over S0 is computed but not on the object (taken off by hand).
 *     The sweep sees it (unproven: kept, reported).
 *  2. 5 s later the former-bundle label is taken off by hand: cm leaves the
 *     sweep's label-selected watch, still there.
 *  3. 5 s later the label and the v2 proof are written back by hand.
 *
 * Expected (docs/safety.md, Released-object sweeper row): "a release ends
 * when the object is there without the former-bundle label: the sweep
 * records it when the object leaves its label-selected watch (`bundlesmith
 * cancel`, a person taking the label off)"; the known limit covers a label
 * taken off and put back "while no sweep watched" or while the operator is
 * down: here the sweep watched throughout. cm must be kept at least 17 s
 * after the write-back (at worst a new countdown).
 *
 * Before the fix (endIfLeft now records `ended` whatever proof the object left with): endIfLeft
 * (src/controllers/softdelete/release-records.ts:147-160, line 156) calls end() only
 * where the proof the object left with checks, else endIfRecorded, which
 * writes nothing without a record; there is no proof, so nothing is
 * recorded. Once label and proof are back, the v2 proof checks over S0,
 * there is no record, the sweep signs it again as it stands
 * (recordOlderRelease / asItStandsRecord 'write') and deletes cm at once on
 * the release that ended.
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { resourceType } from './harness.js';
import { operatorFixture, releaseProofFor } from './operator.js';
import { expectKeptFor, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt39v2prooflesslabel');
const DELAY_S = 20;

it('a v2 release whose label was taken off while its proof was off counts its old stamp once both are written back', async () => {
  const { env, ns, t } = f;
  const configMaps = await resourceType(env, 'v1', 'ConfigMap');
  // 1. Released by an earlier operator a minute ago; its proof taken off by hand.
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
  await sleep(5000);

  // 2. Its label taken off by hand while the sweep watches.
  await env.client.patch(configMaps, ns, 'cm', { metadata: { labels: { [Labels.formerBundle]: null } } }, 'merge');
  await sleep(5000);
  console.log('record after the label was taken off', JSON.stringify(await releaseRecordOf(env, uid)));

  // 3. Label and proof written back.
  await env.client.patch(
    configMaps,
    ns,
    'cm',
    { metadata: { labels: { [Labels.formerBundle]: 'app' }, annotations: { ...signed } } },
    'merge',
  );
  const writtenBackAt = Date.now();
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, (DELAY_S - 3) * 1000);
  console.log('kept', Date.now() - writtenBackAt, 'ms after the write-back; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 180_000);
