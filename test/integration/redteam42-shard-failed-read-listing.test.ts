/**
 * Red team 42: a shard's Bundle that lists a released object while the read
 * of ANOTHER object it lists fails (not a 403, not WatchNotSynced: a 500
 * from a conversion webhook that is down) records no cancel, and the
 * sweeping shard, away during the listing, ends the cancelled countdown on
 * its old stamp. Full rights throughout; no record refusal.
 *
 * Two shards, as in redteam41-shard-unsynced-listing: shard A (`!shard`)
 * sweeps; shard B (`shard=b`, `--sweep-released=false`) reconciles shard=b.
 *
 * Steps:
 *  0. CRD Widget: v1 storage, v2 served, conversion webhook down. No Widget
 *     exists yet, so a list at v2 succeeds: Bundle `watcher` (shard=b)
 *     lists Widget `w-none` at v2, and shard B's Widget v2 watch lists and
 *     stays synced (its create fails: conversion). Then Widget `stored-v1`
 *     is created at v1 (no conversion, no managed label: the label-selected
 *     watch never has to convert it).
 *  1. Bundle `first` (shard=b) lists cm-failread (deletionDelay 90s) and is
 *     deleted: shard B releases it (stamp S1, record `signed`).
 *  2. Shard A stops; 20 s pass.
 *  3. Bundle `second` (shard=b) lists cm-failread and Widget `stored-v1` at
 *     v2: the watch is synced, the Widget is not in the cache (no managed
 *     label), its GET at v2 fails with a 500 (conversion), gatherBundle
 *     throws, and reconcileLive throws before recordListingCancels.
 *  4. `second` is edited to list only the Widget; shard A starts again.
 *
 * docs/safety.md: "a countdown a Bundle's listing cancelled is recorded as
 * cancelled by whichever sees the listing first (the Bundle's pass, ...)";
 * the only limit for a listing is "a listing that starts and ends while no
 * pass of the Bundle and no sweep runs (the operator down throughout)
 * leaves no record". Shard B ran (failing) passes of `second` throughout.
 * The same table says of a Bundle's own countdowns "a pass stopped before
 * deciding (a watch not synced, a failure) cancels it". Expected: kept past
 * S1 + 90 s.
 *
 * What happens (2 runs of 2 failed; the control passed 1 of 1): shard B
 * logs "reconcile failed" for `second` ("conversion webhook for
 * rt42failread.example.com/v1, Kind=Widget failed ... connection refused"),
 * its status says "reconcile failed, retrying", the record stays `signed`
 * while listed, and shard A deletes cm-failread at S1 + 90.15 s (the sweep's
 * "expired" decision, on the stamp the listing cancelled). Cause: reconcileLive
 * (controllers/bundle/live-pass.ts) records the listing's cancels only after
 * gatherBundle returns, or on WatchNotSynced; any other error from
 * gatherBundle (readAtCoordinates rethrows every non-403 error) leaves the
 * listing unrecorded, and reconcileKey (controller.ts) only reports it.
 * Control (RT42_CONTROL=1: `second` lists the CM alone): kept.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { bundleManifest, configMap, types, waitForReady, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';
import { deleteBundle, expectKeptFor, releaseRecordOf, releaseSnapshot, sleep } from './release-writeback.js';
import type { KubeObject } from '../../src/kube/types.js';

const GROUP = 'rt42failread.example.com';
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
  ns = await createNamespace(env, 'rt42failread');
  t = await types(env);
  const r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd) });
  expect(r.code).toBe(0);
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns])).code === 0);
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

const bundleStatus = async (name: string): Promise<string> =>
  (await run('kubectl', ['get', 'bundle', name, '-n', ns, '-o', 'jsonpath={.status.conditions}'])).stdout;

it('a listing whose pass fails reading another listed object records no cancel; the sweeping shard deletes on the old stamp', async () => {
  const control = process.env.RT42_CONTROL === '1';
  const DELAY = 90;
  const name = 'cm-failread';
  const cm = configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY}s` });
  const stored = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'stored-v1' }, spec: { size: 1 } };

  // 0. Shard B's Widget v2 watch lists while no Widget exists, then a Widget is stored at v1.
  await applyShardB('watcher', [{ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w-none' }, spec: { size: 2 } }]);
  await sleep(6_000);
  console.log('watcher status', await bundleStatus('watcher'));
  let r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'stored-v1', namespace: ns }, spec: { size: 0 } }),
  });
  expect(r.code).toBe(0);
  r = await run('kubectl', ['get', `widgets.v2.${GROUP}`, 'stored-v1', '-n', ns]);
  console.log('GET at v2:', r.code, r.stderr.slice(0, 200));
  expect(r.code).not.toBe(0);

  // 1. Released by shard B.
  await applyShardB('first', [cm]);
  await waitForReady(env, ns, 'first');
  await deleteBundle(env, ns, 'first');
  const released = await releaseSnapshot(env, t.configMap, ns, name);
  expect(released.stamp).toBeDefined();
  const { uid } = released;
  await waitFor('record written', async () => (await releaseRecordOf(env, uid))?.proof === released.proof);
  console.log('released: S1', released.stamp, 'record', JSON.stringify(await releaseRecordOf(env, uid)));

  // 2. The sweeping shard goes away.
  await shardA?.stop();
  shardA = undefined;
  await sleep(20_000);

  // 3. Listed again, beside a Widget whose read fails (the control: alone).
  await applyShardB('second', control ? [cm] : [cm, stored]);
  if (control) await waitForReady(env, ns, 'second');
  await sleep(8_000);
  console.log('second status', await bundleStatus('second'));
  console.log('while listed: record', JSON.stringify(await releaseRecordOf(env, uid)));
  // 4. The listing ends; the sweeping shard is back.
  await applyShardB('second', control ? [configMap('cm-other')] : [stored]);
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
