/**
 * Issue 13.7, beyond one replica: two operator processes (the real binary),
 * each reconciling the Bundles its --bundle-selector matches. Each Bundle is
 * reconciled by exactly one (the events it gets name that process), no shard
 * deletes what another shard's Bundle lists, and relabelling a Bundle hands
 * it to the other shard without a delete. "Kept" is the same uid and no
 * deletionTimestamp.
 */
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { parseArgs } from '../../src/config.js';
import type { KubeObject } from '../../src/kube/types.js';
import {
  conditionOf,
  connect,
  createNamespace,
  expectKept,
  resourceType,
  run,
  uidOf,
  waitFor,
  waitForGone,
  type TestEnv,
} from './harness.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, types, waitForBundle, type KnownTypes } from './bundles.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

let env: TestEnv;
let ns: string;
let t: KnownTypes;
const shards = new Map<'a' | 'b', OperatorProcess>();

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'shards');
  t = await types(env);
  // Shard a also sweeps released objects; shard b leaves that to it.
  shards.set('a', startOperatorProcess(['--namespace', ns, '--gc=off', '--bundle-selector', 'shard=a']));
  shards.set('b', startOperatorProcess(['--namespace', ns, '--gc=off', '--bundle-selector', 'shard in (b)', '--sweep-released=false']));
});

afterAll(async () => {
  for (const p of shards.values()) await p.terminate();
  env.close();
});

/** A Bundle with a shard label, applied as a user would. */
async function applyShardBundle(name: string, shard: string, objects: string[]): Promise<void> {
  const manifest = bundleManifest(
    ns,
    name,
    objects.map((o) => ({ name: o, object: configMap(o) })),
  );
  (manifest.metadata as Record<string, unknown>).labels = { shard };
  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
}

const timeOf = (e: KubeObject): string => (typeof e.eventTime === 'string' ? e.eventTime : '');

/** The process (by pid) that wrote each event about a Bundle, oldest first. */
async function reporters(bundle: string): Promise<string[]> {
  const rt = await resourceType(env, 'events.k8s.io/v1', 'Event');
  const { items } = await env.client.list(rt, ns);
  return items
    .filter(
      (e) =>
        (e.regarding as { kind?: string; name?: string } | undefined)?.kind === 'Bundle' &&
        (e.regarding as { name?: string }).name === bundle,
    )
    .sort((x, y) => timeOf(x).localeCompare(timeOf(y)))
    .map((e) => {
      const instance = typeof e.reportingInstance === 'string' ? e.reportingInstance : '';
      const pid = Number(instance.slice(instance.lastIndexOf('-') + 1));
      return pid === shards.get('a')?.child.pid ? 'a' : pid === shards.get('b')?.child.pid ? 'b' : instance;
    });
}

it('reconciles each Bundle in exactly one shard', async () => {
  await applyShardBundle('xa', 'a', ['sh-xa']);
  await applyShardBundle('yb', 'b', ['sh-yb']);
  await waitForBundle(env, ns, 'xa', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 60_000);
  await waitForBundle(env, ns, 'yb', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 60_000);
  await waitFor('events for both Bundles', async () => (await reporters('xa')).length > 0 && (await reporters('yb')).length > 0);
  expect(new Set(await reporters('xa'))).toEqual(new Set(['a']));
  expect(new Set(await reporters('yb'))).toEqual(new Set(['b']));
});

it("no shard deletes what another shard's Bundle lists: an object dropped in shard a while a Bundle of shard b lists it is handed over", async () => {
  await applyShardBundle('xa', 'a', ['sh-xa', 'sh-shared']);
  await waitForBundle(env, ns, 'xa', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 60_000);
  const uid = await uidOf(env, t.configMap, ns, 'sh-shared');
  await applyShardBundle('yb', 'b', ['sh-yb', 'sh-shared']);
  await applyShardBundle('xa', 'a', ['sh-xa']);
  const taken = await waitFor(
    'sh-shared to be taken by yb',
    async () => {
      const o = await env.client.tryGet(t.configMap, ns, 'sh-shared');
      const bundle = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'yb');
      return o?.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === bundle?.metadata.uid) ? o : undefined;
    },
    { timeoutMs: 60_000 },
  );
  expectKept(taken, uid);
  await waitForBundle(env, ns, 'yb', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 60_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'sh-shared'), uid);
});

it('relabelling a Bundle hands it to the other shard: nothing deleted, and only the new shard acts on it from then on', async () => {
  const uid = await uidOf(env, t.configMap, ns, 'sh-xa');
  const before = (await reporters('xa')).length;
  await applyShardBundle('xa', 'b', ['sh-xa', 'sh-xa2']);
  await waitForBundle(env, ns, 'xa', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 60_000);
  await waitFor('sh-xa2 to be created', async () => (await env.client.tryGet(t.configMap, ns, 'sh-xa2')) !== undefined, {
    timeoutMs: 60_000,
  });
  expectKept(await env.client.tryGet(t.configMap, ns, 'sh-xa'), uid);
  // A pass that applies and finds everything Ready at once writes no event; a prune always does: the shard that prunes is the one acting.
  await applyShardBundle('xa', 'b', ['sh-xa']);
  await waitForGone(env, t.configMap, ns, 'sh-xa2', { timeoutMs: 60_000 });
  expectKept(await env.client.tryGet(t.configMap, ns, 'sh-xa'), uid);
  await waitFor('an event about xa from shard b', async () => (await reporters('xa')).slice(before).includes('b'));
  expect((await reporters('xa')).slice(before).filter((r) => r !== 'b')).toEqual([]);
});

it('the chart renders one Deployment per shard: its selector, its own Lease, the collector and the sweeper on the first only', async () => {
  const shardsValue = JSON.stringify([
    { name: 'main', selector: '!bundlesmith.dev/shard' },
    { name: 's1', selector: 'bundlesmith.dev/shard in (s1)' },
  ]);
  const rendered = await run('helm', [
    'template',
    'r',
    join(repoRoot(), 'charts', 'bundlesmith'),
    '-n',
    'ops',
    '--show-only',
    'templates/deployment.yaml',
    '--set-json',
    `sharding.shards=${shardsValue}`,
  ]);
  expect(rendered.code).toBe(0);
  const deployments = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJSON() as { metadata: { name: string }; spec: { template: { spec: { containers: { args: string[] }[] } } } })
    .filter((d) => d !== null);
  const args = new Map(deployments.map((d) => [d.metadata.name, d.spec.template.spec.containers[0]?.args ?? []]));
  expect([...args.keys()]).toEqual(['r-bundlesmith-main', 'r-bundlesmith-s1']);
  expect(args.get('r-bundlesmith-main')).toEqual(
    expect.arrayContaining(['--bundle-selector=!bundlesmith.dev/shard', '--leader-election-id=bundlesmith-leader-main', '--gc=bundles']),
  );
  expect(args.get('r-bundlesmith-main')).not.toContain('--sweep-released=false');
  expect(args.get('r-bundlesmith-s1')).toEqual(
    expect.arrayContaining([
      '--bundle-selector=bundlesmith.dev/shard in (s1)',
      '--leader-election-id=bundlesmith-leader-s1',
      '--gc=off',
      '--sweep-released=false',
    ]),
  );
  // Every flag the chart passes is one the operator accepts.
  for (const a of args.values()) expect(parseArgs(a)).toMatchObject({ ok: true });
});
