/**
 * Red team 42: a shard's Bundle that lists a released object while the
 * operator may not add its finalizer to it (an admission policy refusing
 * UPDATE of that Bundle: what another team's policy engine may do; the
 * status subresource stays writable) records no cancel: every pass fails at
 * addFinalizer, before reconcileLive, and the sweeping shard, away during
 * the listing, ends the cancelled countdown on its old stamp. A sibling of
 * redteam42-shard-failed-read-listing that a fix inside reconcileLive alone
 * would not reach.
 *
 * Two shards: shard A (`!shard`) sweeps; shard B (`shard=b`,
 * `--sweep-released=false`). Full rights otherwise; no record refusal.
 *
 * Steps:
 *  1. Bundle `first` (shard=b) lists cm-fin-refused (deletionDelay 90s) and
 *     is deleted: shard B releases it (stamp S1, record `signed`).
 *  2. Shard A stops; 20 s pass.
 *  3. A ValidatingAdmissionPolicy refuses UPDATE of Bundle `second`.
 *  4. Bundle `second` (shard=b) is created listing cm-fin-refused: shard B's
 *     passes fail adding the finalizer (403 from the policy), over and over.
 *  5. `second` is deleted (no finalizer: gone at once), the policy removed;
 *     shard A starts again.
 *
 * docs/safety.md: "a countdown a Bundle's listing cancelled is recorded as
 * cancelled by whichever sees the listing first (the Bundle's pass, ...)";
 * the listing limit is "a listing that starts and ends while no pass of the
 * Bundle and no sweep runs (the operator down throughout) leaves no record".
 * Shard B ran passes of `second` throughout (each failing). Expected: kept
 * past S1 + 90 s.
 *
 * What happens (2 runs of 2 failed; the control passed 1 of 1): shard B
 * logs "reconcile failed" for `second` ("bundles.smith.atlassian.com
 * \"second\" is forbidden: ValidatingAdmissionPolicy ..."), the record stays
 * `signed`, and shard A's sweep decides "expired" and deletes
 * cm-fin-refused at S1 + 90.5 s / 90.1 s. Cause: BundleController.reconcile
 * (controllers/bundle/controller.ts) returns addFinalizer's outcome (here:
 * throws) before reconcileLive, the only place a live, valid Bundle's
 * listing is recorded (listed-releases.ts); only the sweep, away, records a
 * listing otherwise.
 * Control (RT42_CONTROL=1: no policy): `second` takes hold; kept.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { bundleManifest, configMap, types, waitForReady, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';
import { deleteBundle, expectKeptFor, releaseRecordOf, releaseSnapshot, sleep } from './release-writeback.js';
import { refuseOperation } from './refuse-operation.js';
import type { KubeObject } from '../../src/kube/types.js';

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let shardA: InProcessOperator | undefined;
let shardB: InProcessOperator | undefined;
const startShardA = (): Promise<InProcessOperator> => startOperator({ namespace: ns, bundleSelector: '!shard' });

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'rt42finref');
  t = await types(env);
  shardB = await startOperator({ namespace: ns, bundleSelector: 'shard=b', sweepReleased: false });
  shardA = await startShardA();
}, 180_000);
afterAll(async () => {
  await shardA?.stop();
  await shardB?.stop();
  env.close();
});

async function applyShardB(name: string, objects: Record<string, unknown>[]): Promise<KubeObject> {
  const manifest = bundleManifest(
    ns,
    name,
    objects.map((object) => ({ name: (object.metadata as { name: string }).name, object })),
  );
  (manifest.metadata as Record<string, unknown>).labels = { shard: 'b' };
  return await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
}

const bundleStatus = async (name: string): Promise<string> =>
  (await run('kubectl', ['get', 'bundle', name, '-n', ns, '-o', 'jsonpath={.status.conditions}'])).stdout;

it('a listing whose passes fail adding the finalizer records no cancel; the sweeping shard deletes on the old stamp', async () => {
  const control = process.env.RT42_CONTROL === '1';
  const DELAY = 90;
  const name = 'cm-fin-refused';
  const cm = configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY}s` });

  await applyShardB('first', [cm]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  const released = await releaseSnapshot(env, t.configMap, ns, name);
  expect(released.stamp).toBeDefined();
  const { uid } = released;
  await waitFor('record written', async () => (await releaseRecordOf(env, uid))?.proof === released.proof);
  console.log('released: S1', released.stamp, 'record', JSON.stringify(await releaseRecordOf(env, uid)));

  await shardA?.stop();
  shardA = undefined;
  await sleep(20_000);

  const restore = control
    ? async () => {}
    : await refuseOperation(
        env,
        { group: BUNDLE_RESOURCE_TYPE.group, plural: BUNDLE_RESOURCE_TYPE.plural },
        ns,
        'second',
        'UPDATE',
        'bundle frozen',
      );
  try {
    if (!control) await sleep(3_000); // the policy in force
    await applyShardB('second', [cm]);
    if (control) await waitForReady(env, ns, 'second');
    await sleep(8_000);
    console.log('second status', await bundleStatus('second'));
    console.log('while listed: record', JSON.stringify(await releaseRecordOf(env, uid)));
    await deleteBundle(env, ns, 'second');
  } finally {
    await restore();
  }
  await sleep(3_000);
  shardA = await startShardA();
  console.log('shard A back; record', JSON.stringify(await releaseRecordOf(env, uid)));
  const keepUntil = Date.parse(released.stamp ?? '') + (DELAY + 20) * 1000;
  try {
    await expectKeptFor(env, t.configMap, ns, name, uid, Math.max(10_000, keepUntil - Date.now()));
  } catch (err) {
    throw new Error(`${String(err)}: S1 ${released.stamp}; record ${JSON.stringify(await releaseRecordOf(env, uid))}`);
  }
  console.log('kept; record', JSON.stringify(await releaseRecordOf(env, uid)));
}, 300_000);
