/**
 * Red team 38: a release an earlier version signed (v2 proof, no record, as
 * every release outstanding at the upgrade is) whose stamp a person took off
 * (its proof then no longer checks: it reads as unproven, kept). A live
 * Bundle lists it while the upgraded operator runs (its passes and the sweep
 * see the listing: the object shows the former-bundle label and annotation
 * and the v2 proof), then drops it; then the old stamp is written back (a
 * backup restored, a tool replaying what it saw).
 *
 * Steps:
 *  1. Bundle `second` lists Deployment web (never Available here: no
 *     kube-controller-manager) and ConfigMap cm, cm referencing web
 *     (Blocked, not applied: no take-hold), as in redteam33.
 *  2. cm is created as released by an earlier operator (former-bundle label
 *     and annotation `app`, deletionDelay 20s, a stamp S0 a minute ago), and
 *     its v2 proof over S0 is written in the same patch that takes S0 off
 *     (the stamp was taken off by hand before the upgraded operator saw it).
 *  3. `second` lists cm for 15 s (its passes and the sweep look at it).
 *  4. `second` drops cm; 5 s later S0 is written back by hand.
 *
 * Expected (docs/safety.md, Released-object sweeper): "a live Bundle's
 * listing of an object showing any release mark records the recorded
 * signing cancelled, whatever the object shows, its stamp or its proof
 * taken off included"; "an earlier release written back ... is kept, never
 * counted". The known limit for v2 proofs without a record covers marks
 * "taken off and written back while no upgraded operator ran", not a
 * listing the upgraded operator saw. cm must be kept at least 20 s after the
 * write-back (at worst a new countdown).
 *
 * Before the fix (a listing now records a v2 or v1 release without a record
 * cancelled under its proof, checking or not: cancelledByListing): the
 * listing recorded nothing. recordListingCancel
 * (release-records.ts) writes only where
 * cancelledByListing decides, and with no record it requires the proof to
 * check (`current === undefined && !proven`) and a stamp on the object
 * (release-record.ts, cancelledByListing): the
 * stamp is off, so both the Bundle's pass and the sweep leave no record.
 * Once S0 is back the v2 proof checks, there is no record, the sweep signs
 * it again as it stands (recordOlderRelease / asItStandsRecord 'write') and
 * deletes cm at once on the countdown the listing cancelled.
 */
import { Annotations } from '../../src/api/names.js';
import { applyBundle } from './bundles.js';
import { operatorFixture } from './operator.js';
import { blockedListing, expectKeptFor, legacyRelease, NEVER_READY_DEPLOYMENT, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt38v2stampless');
const DELAY_S = 20;

it('a v2 release listed while its stamp was off counts its old stamp once written back after the drop', async () => {
  const { env, ns, t } = f;
  // 1. Listed, Blocked behind web.
  await blockedListing(env, ns, 'second', 'cm', `${DELAY_S}s`);
  await sleep(3000);
  expect(await env.client.tryGet(t.configMap, ns, 'cm')).toBeUndefined();

  // 2. Released by an earlier operator a minute ago; its stamp taken off by hand.
  const stamp = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const { uid } = await legacyRelease(env, ns, 'cm', { formerBundle: 'app', delay: `${DELAY_S}s`, stamp, takenOff: 'stamp' });

  // 3. Listed by a live Bundle while the upgraded operator runs.
  await sleep(15_000);
  const listed = await env.client.get(t.configMap, ns, 'cm');
  console.log(
    'record after listing',
    JSON.stringify(await releaseRecordOf(env, uid)),
    'owners',
    JSON.stringify(listed.metadata.ownerReferences),
  );

  // 4. Dropped; then the old stamp written back.
  await applyBundle(env, ns, 'second', [{ name: 'web', object: NEVER_READY_DEPLOYMENT }]);
  await sleep(5000);
  await env.client.patch(t.configMap, ns, 'cm', { metadata: { annotations: { [Annotations.deletionTimestamp]: stamp } } }, 'merge');
  const writtenBackAt = Date.now();
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, (DELAY_S - 3) * 1000);
  console.log('kept', Date.now() - writtenBackAt, 'ms after the write-back; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 180_000);
