/**
 * Red team 41: a listing's cancel held in memory because its release record
 * could not be read (UnwrittenRecords.holdUnread, red team 40's fix) or
 * written (holdUnwritten, red team 36's) in a shard that does not sweep is
 * never written, and the sweeping shard ends the cancelled countdown on its
 * old stamp.
 *
 * Two shards, as the chart renders `sharding.shards` (docs/operations.md,
 * Sharding): shard A (`--bundle-selector '!shard'`) runs the released-object
 * sweeper; shard B (`--bundle-selector shard=b --sweep-released=false`)
 * reconciles the Bundles labelled shard=b. Both impersonate one user with
 * what the chart grants (records-rbac.ts).
 *
 * Steps:
 *  1. Bundle `first` (shard=b) lists cm-shard-held (deletionDelay 90s) and is
 *     deleted: shard B's finalizer releases it (stamp S1, v3 proof P, record
 *     `signed` P).
 *  2. Shard A stops (a rollout of its Deployment, a node drained); 20 s pass.
 *  3. `read` variant: the RoleBinding granting configmaps in the operator's
 *     namespace (the records) is deleted. `write` variant: a
 *     ValidatingAdmissionPolicy refuses UPDATE of the object's record (red
 *     team 36's refusal: the GET works, the cancel is held unwritten,
 *     UnwrittenRecords.holdUnwritten).
 *  4. Bundle `second` (shard=b) lists cm-shard-held: shard B's pass records
 *     the listing's cancel and the take-hold's end; the record's GET is
 *     forbidden (`write`: its PATCH refused), both are held in shard B's
 *     memory (ReleaseRecords.write -> UnwrittenRecords.holdUnread /
 *     holdUnwritten); the take-hold is not sent.
 *  5. `second` is deleted (it never took hold: nothing of it to release).
 *  6. The RoleBinding is created again (the policy removed); 20 s later
 *     shard A starts again.
 *
 * docs/safety.md: "a countdown a Bundle's listing cancelled is recorded as
 * cancelled by whichever sees the listing first (the Bundle's pass, ...)",
 * and "a cancel or an end decided where the record may not even be read (the
 * operator's RBAC on ConfigMaps in its namespace removed, a read that fails)
 * is held the same way and decided on the record once it can be read: a
 * cancel then cancels the signing the record names, which at worst starts a
 * later countdown again, never ends one early"; for a refused write: "counts
 * in the process that decided it, which writes it at its next read of that
 * record and keeps the object while it cannot". The documented limit is a
 * restart of the process holding it ("a restart before that write lands
 * forgets it"); shard B never restarts here. So cm-shard-held must be kept
 * past S1 + 90s (a new countdown starts when the sweep sees it unlisted).
 *
 * What happens (`read`: 6 runs of 6 failed, the first on a draft without
 * the 20 s waits; `write`: 3 of 3; deleted at
 * S1 + 90.6 s, the cancelled stamp's end): shard B logs "recording the
 * cancel of a listed released object failed; the next pass tries again ...
 * cannot get resource configmaps" (`write`: "the release record of
 * ConfigMap ... may not be written: ... records frozen"; the adopt claim
 * fails the same), the record still says `signed` P after the rights are
 * back (shard B only writes a held decision at its next read or write of
 * that record, and its Bundle no longer lists the object; the retry of held
 * decisions, ReleaseRecords.pruneGone, runs only from the sweeper's
 * rediscovery, ReleasedObjectSweeper.scheduleRediscovery, which shard B does
 * not run), and shard A deletes cm-shard-held at S1 + 90s ("deleted ConfigMap
 * cm-shard-held, released by deleted Bundle first: its deletion delay ended").
 * Control (RT41_CONTROL=1: the RoleBinding never taken away): `second` takes
 * hold (record `ended`) and, deleted, releases cm-shard-held itself (a new
 * stamp, ~S1 + 30 s): kept past S1 + 110 s (passes: `read` 2 runs, `write`
 * 1 run).
 */
import { Annotations } from '../../src/api/names.js';
import { waitFor } from './harness.js';
import { bundleManifest, configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { recordsRbacFixture } from './records-rbac.js';
import { startOperator, type InProcessOperator } from './operator.js';
import {
  deleteBundle,
  expectKeptFor,
  RELEASE_RECORDS_NAMESPACE,
  releaseRecordName,
  releaseRecordOf,
  releaseSnapshot,
  sleep,
} from './release-writeback.js';
import { refuseConfigMapOperation, waitUntilUpdatesRefused } from './refuse-operation.js';
import type { KubeObject } from '../../src/kube/types.js';

// Shard B: Bundles labelled shard=b, no sweeper. Shard A (the sweeper) is started by the test below.
const f = recordsRbacFixture('rt41shard', async (fx) => [
  await startOperator({ namespace: fx.ns, impersonate: { user: fx.user }, bundleSelector: 'shard=b', sweepReleased: false }),
]);

let shardA: InProcessOperator | undefined;
const startShardA = async (): Promise<InProcessOperator> =>
  startOperator({ namespace: f.ns, impersonate: { user: f.user }, bundleSelector: '!shard' });

beforeAll(async () => {
  shardA = await startShardA();
}, 180_000);
afterAll(async () => {
  await shardA?.stop();
});

/** A Bundle of shard b listing `object`. */
async function applyShardB(name: string, object: Record<string, unknown>): Promise<KubeObject> {
  const manifest = bundleManifest(f.ns, name, [{ name: 'r', object }]);
  (manifest.metadata as Record<string, unknown>).labels = { shard: 'b' };
  return await f.env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
}

it.each(['read', 'write'] as const)(
  'a listing cancel held (record %s refused) in a non-sweeping shard is never written; the sweeping shard deletes on the cancelled stamp',
  async (refused) => {
    const { env, ns, t } = f;
    const DELAY = 90;
    const name = `cm-shard-held-${refused}`;
    const first = `first-${refused}`;
    const second = `second-${refused}`;
    const cm = configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY}s` });
    await applyShardB(first, cm);
    await waitForReady(env, ns, first);
    await deleteBundle(env, ns, first);
    const released = await releaseSnapshot(env, t.configMap, ns, name);
    expect(released.stamp).toBeDefined();
    const { uid } = released;
    await waitFor('record written', async () => (await releaseRecordOf(env, uid))?.proof === released.proof);
    console.log('released: S1', released.stamp, 'record', JSON.stringify(await releaseRecordOf(env, uid)));

    // 2. The sweeping shard goes away for a while.
    await shardA?.stop();
    shardA = undefined;
    // Later than the release by 20 s: in the control, `second`'s own release (when it is deleted) ends after S1 + 110 s.
    await sleep(20_000);

    const control = process.env.RT41_CONTROL === '1';
    const listedAndDropped = async (): Promise<void> => {
      // 4. Shard B's Bundle `second` lists the released object.
      await applyShardB(second, cm);
      await waitForBundle(env, ns, second, 'a pass', () => true);
      await sleep(5_000);
      console.log('while listed: record', JSON.stringify(await releaseRecordOf(env, uid)));
      // 5. Dropped again: the Bundle is deleted.
      await deleteBundle(env, ns, second);
      expect(await getBundle(env, ns, second)).toBeUndefined();
    };
    if (control) await listedAndDropped();
    else if (refused === 'read')
      await f.withoutRecords(async () => {
        await sleep(3_000);
        await listedAndDropped();
      });
    else {
      const restore = await refuseConfigMapOperation(env, RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid), 'UPDATE', 'records frozen');
      try {
        await waitUntilUpdatesRefused(env, t.configMap, RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid));
        await listedAndDropped();
      } finally {
        await restore();
      }
    }
    // Shard B has had its rights back for 20 s before the sweeping shard returns.
    await sleep(20_000);
    console.log('rights back 20 s; record', JSON.stringify(await releaseRecordOf(env, uid)));
    // 6. The sweeping shard is back.
    shardA = await startShardA();
    console.log('shard A back; record', JSON.stringify(await releaseRecordOf(env, uid)));
    const stampMs = Date.parse(released.stamp ?? '');
    const keepUntil = stampMs + (DELAY + 20) * 1000;
    try {
      await expectKeptFor(env, t.configMap, ns, name, uid, Math.max(10_000, keepUntil - Date.now()));
    } catch (err) {
      throw new Error(`${String(err)}: S1 ${released.stamp}; record ${JSON.stringify(await releaseRecordOf(env, uid))}`);
    }
    console.log('kept; record', JSON.stringify(await releaseRecordOf(env, uid)));
  },
  300_000,
);
