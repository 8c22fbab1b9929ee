/**
 * Red team 41: a shard's Bundle that lists a released object while one of its
 * kinds' watches cannot list records no cancel, and the sweeping shard, away
 * during the listing, ends the cancelled countdown on its old stamp. No RBAC
 * or record refusal here: full rights throughout.
 *
 * Two shards, as the chart renders `sharding.shards`: shard A (`!shard`)
 * runs the released-object sweeper; shard B (`shard=b`,
 * `--sweep-released=false`) reconciles the Bundles labelled shard=b.
 *
 * Steps:
 *  1. Bundle `first` (shard=b) lists cm-unsynced (deletionDelay 90s) and is
 *     deleted: shard B's finalizer releases it (stamp S1, record `signed`).
 *  2. Shard A stops (a rollout, a drained node); 20 s pass.
 *  3. Bundle `second` (shard=b) lists cm-unsynced and a Widget at v2, a CRD
 *     version whose conversion webhook is down (a Widget stored at v1
 *     exists): shard B's pass stops at WatchNotSynced.
 *  4. `second` is edited to list only the Widget (the listing of
 *     cm-unsynced ends); shard A starts again.
 *
 * docs/safety.md: "a countdown a Bundle's listing cancelled is recorded as
 * cancelled by whichever sees the listing first (the Bundle's pass, which
 * reads as the operator an object listed at a version no longer served ...
 * or one its identity may not read, or the sweep ...)"; the limit it names
 * is "a listing that starts and ends while no pass of the Bundle and no
 * sweep runs (the operator down throughout) leaves no record". Here shard B
 * ran passes of `second` throughout the listing. Expected: kept past
 * S1 + 90 s (a new countdown when the sweep sees it unlisted).
 *
 * What happens (2 runs of 2 failed; the control passed 1 of 1): shard B
 * logs "conversion webhook for rt41unsynced.example.com/v1, Kind=Widget
 * failed ... watch failed; relisting" and `second`'s status says
 * WatchNotSynced; the record stays `signed` while listed, and shard A
 * deletes cm-unsynced at S1 + 90.2 s (the sweep's "expired" decision, on
 * the stamp the listing cancelled). Cause: reconcileLive
 * (controllers/bundle/live-pass.ts) returns on gatherBundle's WatchNotSynced
 * before recordListingCancels, and only the sweep (in the other shard, away)
 * records a listing otherwise.
 * Control (RT41_CONTROL=1: no Widget in `second`): `second` takes hold and,
 * dropping it, counts it down anew from the drop: kept past S1 + 110 s.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { bundleManifest, configMap, types, waitForBundle, waitForReady, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';
import { deleteBundle, expectKeptFor, releaseRecordOf, releaseSnapshot, sleep } from './release-writeback.js';
import type { KubeObject } from '../../src/kube/types.js';

const GROUP = 'rt41unsynced.example.com';
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: ['v1', 'v2'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    })),
    conversion: {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } },
    },
  },
};

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let shardA: InProcessOperator | undefined;
let shardB: InProcessOperator | undefined;
const startShardA = (): Promise<InProcessOperator> => startOperator({ namespace: ns, bundleSelector: '!shard', watchSyncTimeoutMs: 2_000 });

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'rt41unsynced');
  t = await types(env);
  shardB = await startOperator({ namespace: ns, bundleSelector: 'shard=b', sweepReleased: false, watchSyncTimeoutMs: 2_000 });
  shardA = await startShardA();
}, 180_000);
afterAll(async () => {
  await shardA?.stop();
  await shardB?.stop();
  await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, '--wait=false']);
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

it('a listing behind a watch that cannot list, in a non-sweeping shard, records no cancel; the sweeping shard deletes on the old stamp', async () => {
  const control = process.env.RT41_CONTROL === '1';
  const DELAY = 90;
  const name = 'cm-unsynced';
  const cm = configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY}s` });
  const widget = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w-unsynced' }, spec: { size: 1 } };
  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd) });
  expect(r.code).toBe(0);
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v1.${GROUP}`, '-n', ns])).code === 0);
  r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'stored-v1', namespace: ns }, spec: { size: 0 } }),
  });
  expect(r.code).toBe(0);
  await waitFor('v2 lists fail', async () => (await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns])).code !== 0);

  await applyShardB('first', [cm]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  const released = await releaseSnapshot(env, t.configMap, ns, name);
  expect(released.stamp).toBeDefined();
  const { uid } = released;
  await waitFor('record written', async () => (await releaseRecordOf(env, uid))?.proof === released.proof);
  console.log('released: S1', released.stamp, 'record', JSON.stringify(await releaseRecordOf(env, uid)));

  // 2. The sweeping shard goes away; later than the release by 20 s (the control's drop counts down after S1 + 110 s).
  await shardA?.stop();
  shardA = undefined;
  await sleep(20_000);

  // 3. Listed again, behind a watch that cannot list (the control: alone).
  await applyShardB('second', control ? [cm] : [cm, widget]);
  if (control) await waitForReady(env, ns, 'second');
  else await waitForBundle(env, ns, 'second', 'WatchNotSynced', (b) => JSON.stringify(b.status ?? {}).includes('WatchNotSynced'), 30_000);
  await sleep(5_000);
  console.log('while listed: record', JSON.stringify(await releaseRecordOf(env, uid)));
  // 4. The listing ends; the sweeping shard is back.
  await applyShardB('second', control ? [configMap('cm-other')] : [widget]);
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
