/**
 * Red team 33: a release an earlier version signed (v2 proof, no record, as
 * every release outstanding at the upgrade is) that a live Bundle lists
 * while the upgraded operator runs: the sweep records its countdown
 * cancelled (cancelledByListing: `cancelled`, the v2 proof). The Bundle
 * cannot take hold yet (the resource waits behind a dependency that is not
 * Ready) and drops it again inside the sweep's 30 s take-hold grace, so the
 * stamp is still on the object. No Bundle lists it: the sweep must start a
 * new countdown (a cancelled stamp reads as none).
 *
 * Steps:
 *  1. Bundle `second` lists Deployment web (never Available here: no
 *     kube-controller-manager) and ConfigMap cm, cm referencing web
 *     (Blocked, not applied).
 *  2. cm is created as released by an earlier operator: former-bundle
 *     label/annotation `app`, deletionDelay 20s, a stamp S0 a minute ago
 *     and a v2 proof over them (releaseProofFor), no record.
 *  3. The sweep sees it listed by `second`: its record is written
 *     `cancelled` with the v2 proof (waited for).
 *  4. `second` drops cm (a few seconds later, inside the 30 s grace).
 *
 * Expected (docs/safety.md, Released-object sweeper): "a live Bundle's
 * listing of an object showing any release mark records the recorded
 * signing cancelled ... (its stamp reads as none, and the sweep starts a new
 * countdown, written on the object, when no Bundle lists it)"; and a
 * listing cancels a countdown "so the stamp a refused cancel leaves does
 * not count after a restart either". cm must be kept at least 20 s after
 * the drop (a new countdown from the drop).
 *
 * What happens: on the drop the sweep decides on the cached object alone
 * (decideReleasedSweep: S0 + 20 s is past, `expired`), the v2 proof checks,
 * and RelistedReleases.recordOlderRelease signs the release again "as it
 * stands" (recordedReleasePatch: v3 over S0, the cancelled stamp). Its
 * recordSigning(resigning) accepts, because carriesRecordedRelease only
 * compares proofs, and a `cancelled` record with the v2 proof "carries" it:
 * the record is overwritten `signed` with the v3 proof over S0, which
 * undoes the listing's cancel; the patch lands, and the next sweep deletes
 * cm at once on the cancelled countdown (under a second after the drop).
 * Without the recordOlderRelease call in sweep() (tried locally, not
 * committed) the same test passes: the fresh read sees the record
 * `cancelled`, the stamp reads as none and a new countdown is written.
 *
 * Fixed: the sweep records a release an earlier version signed only where
 * the object has no record at all (ReleaseRecords.recordFirstSigning); a
 * cancelled record keeps its cancel, and the sweep starts a new countdown
 * as for any cancelled release.
 */
import { Annotations } from '../../src/api/names.js';
import { waitFor } from './harness.js';
import { applyBundle } from './bundles.js';
import { operatorFixture } from './operator.js';
import { blockedListing, expectKeptFor, legacyRelease, NEVER_READY_DEPLOYMENT, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt33v2cancel');
const DELAY_S = 20;

it('a v2 release whose countdown a listing cancelled is re-signed over the cancelled stamp when dropped, and deleted at once', async () => {
  const { env, ns, t } = f;
  // 1. Listed, Blocked behind web.
  await blockedListing(env, ns, 'second', 'cm', `${DELAY_S}s`);
  await sleep(3000);
  expect(await env.client.tryGet(t.configMap, ns, 'cm')).toBeUndefined();

  // 2. Released by an earlier operator, a minute ago.
  const stamp = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const { uid } = await legacyRelease(env, ns, 'cm', { formerBundle: 'app', delay: `${DELAY_S}s`, stamp });

  // 3. The listing cancels it in the record.
  await waitFor('the listing recorded as a cancel', async () => (await releaseRecordOf(env, uid))?.state === 'cancelled', {
    timeoutMs: 20_000,
  });
  const o = await env.client.get(t.configMap, ns, 'cm');
  console.log(
    'record after listing',
    JSON.stringify(await releaseRecordOf(env, uid)),
    'stamp on object',
    o.metadata.annotations?.[Annotations.deletionTimestamp],
  );

  // 4. Dropped inside the grace: a new countdown from here, at the earliest DELAY_S later.
  await applyBundle(env, ns, 'second', [{ name: 'web', object: NEVER_READY_DEPLOYMENT }]);
  const droppedAt = Date.now();
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, (DELAY_S - 3) * 1000);
  console.log('kept', Date.now() - droppedAt, 'ms after the drop; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 180_000);
