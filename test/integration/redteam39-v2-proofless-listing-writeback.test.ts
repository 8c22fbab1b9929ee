/**
 * Red team 39: a release an earlier version signed (v2 proof, no record, as
 * every release outstanding at the upgrade is) whose PROOF a person took off
 * (the former-bundle label and annotation, the delay and the stamp stay:
 * the object still shows a release's marks). A live Bundle lists it while
 * the upgraded operator runs (its passes and the sweep see the listing),
 * then drops it; then the old proof is written back (a backup restored, a
 * tool replaying what it saw). The sibling of
 * redteam38-v2-stampless-listing-writeback, with the proof taken off instead
 * of the stamp.
 *
 * Steps:
 *  1. Bundle `second` lists Deployment web (never Available here: no
 *     kube-controller-manager) and ConfigMap cm, cm referencing web
 *     (Blocked, not applied: no take-hold), as in redteam33/38.
 *  2. cm is created as released by an earlier operator (former-bundle label
 *     and annotation `app`, deletionDelay 20s, a stamp S0 a minute ago);
 *     its v2 proof over S0 is computed but not on the object (taken off by
 *     hand).
 *  3. `second` lists cm for 15 s (its passes and the sweep look at it).
 *  4. `second` drops cm; 5 s later the v2 proof is written back by hand.
 *
 * Expected (docs/safety.md, Released-object sweeper row): "a live Bundle's
 * listing of an object showing any release mark records the recorded
 * signing cancelled, whatever the object shows, its stamp or its proof
 * taken off included"; the known limit for v2 proofs without a record
 * covers marks "taken off and written back while no upgraded operator ran",
 * not a listing the upgraded operator saw. cm must be kept at least 17 s
 * after the write-back (at worst a new countdown).
 *
 * Before the fix (the listing now records marks without a proof as `ended`:
 * cancelledByListing): the listing recorded nothing (without a record it
 * needed a proof on the object to record cancelled under); once the proof
 * was back the v2 proof checked over S0 with no record, the sweep signed it
 * again as it stood (recordOlderRelease, asItStandsRecord 'write') and
 * deleted cm at once on the countdown the listing cancelled (failed 3/3).
 */
import { Annotations } from '../../src/api/names.js';
import { applyBundle } from './bundles.js';
import { operatorFixture } from './operator.js';
import { blockedListing, expectKeptFor, legacyRelease, NEVER_READY_DEPLOYMENT, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt39v2proofless');
const DELAY_S = 20;

it('a v2 release listed while its proof was off stays kept once the proof is written back after the drop', async () => {
  const { env, ns, t } = f;
  // 1. Listed, Blocked behind web.
  await blockedListing(env, ns, 'second', 'cm', `${DELAY_S}s`);
  await sleep(3000);
  expect(await env.client.tryGet(t.configMap, ns, 'cm')).toBeUndefined();

  // 2. Released by an earlier operator a minute ago; its proof taken off by hand (stamp, delay and marks stay).
  const stamp = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const { uid, proof } = await legacyRelease(env, ns, 'cm', { formerBundle: 'app', delay: `${DELAY_S}s`, stamp, takenOff: 'proof' });

  // 3. Listed by a live Bundle while the upgraded operator runs.
  await sleep(15_000);
  const listed = await env.client.get(t.configMap, ns, 'cm');
  console.log(
    'record after listing',
    JSON.stringify(await releaseRecordOf(env, uid)),
    'owners',
    JSON.stringify(listed.metadata.ownerReferences),
    'annotations',
    JSON.stringify(listed.metadata.annotations),
  );

  // 4. Dropped; then the old proof written back.
  await applyBundle(env, ns, 'second', [{ name: 'web', object: NEVER_READY_DEPLOYMENT }]);
  await sleep(5000);
  await env.client.patch(t.configMap, ns, 'cm', { metadata: { annotations: { [Annotations.releaseProof]: proof } } }, 'merge');
  const writtenBackAt = Date.now();
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, (DELAY_S - 3) * 1000);
  console.log('kept', Date.now() - writtenBackAt, 'ms after the write-back; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 180_000);
