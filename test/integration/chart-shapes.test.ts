/**
 * The chart in each shape it offers, installed with helm on the real API
 * server and run as its own ServiceAccount (a token of it, as the pod would
 * have) with the flags of each rendered Deployment, one operator process per
 * pod: one replica without leader election (gc.mode=off, deletion guard
 * off); two replicas with leader election (gc.mode=bundles, deletion guard
 * on); sharded, every shard leading its own Lease. rbac.test.ts runs the
 * other shapes the same way: gc.mode=cluster and lockdown
 * (tenancy.defaultServiceAccount). No shape may be refused anything.
 */
import { Annotations } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import {
  applyBundle,
  BUNDLE_RESOURCE_TYPE,
  bundleManifest,
  configMap,
  types,
  waitForBundle,
  waitForReady,
  type KnownTypes,
} from './bundles.js';
import { forbiddenLines, installChart, serviceAccountKubeconfig, type InstalledChart } from './chart.js';
import { connect, createNamespace, expectKept, resourceType, run, uidOf, uniqueName, waitFor, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

let env: TestEnv;
let t: KnownTypes;

beforeAll(async () => {
  env = await connect();
  t = await types(env);
});
afterAll(() => env.close());

/** One shape: its release namespace, the namespace its Bundles live in, what helm installed and one operator process per pod. */
interface Shape {
  releaseNs: string;
  ns: string;
  installed: InstalledChart;
  /** By Deployment name, one process per replica. */
  pods: Map<string, OperatorProcess[]>;
}

/**
 * Before the block's tests: the chart installed with `values` (watching the
 * Bundles' namespace only: other test files' Bundles are not ours), and one
 * operator process per replica of each Deployment, authenticated as the
 * chart's ServiceAccount. After them, every process left must exit 0 and
 * none may have been refused anything.
 */
function chartShape(values: string[]): Shape {
  const shape = { pods: new Map() } as Shape;
  beforeAll(async () => {
    shape.releaseNs = await createNamespace(env, 'shape-ops');
    shape.ns = await createNamespace(env, 'shape');
    shape.installed = await installChart(uniqueName('bs'), shape.releaseNs, [
      `watchNamespace=${shape.ns}`,
      'leaderElection.leaseDurationSeconds=4',
      ...values,
    ]);
    const kubeconfig = await serviceAccountKubeconfig(shape.releaseNs, shape.installed.serviceAccountName);
    for (const d of shape.installed.deployments)
      shape.pods.set(
        d.name,
        Array.from({ length: d.replicas }, () => startOperatorProcess(d.args, {}, kubeconfig)),
      );
  });
  afterAll(async () => {
    for (const p of [...shape.pods.values()].flat()) {
      expect(forbiddenLines(p)).toEqual([]);
      if (p.child.exitCode === null) expect(await stop(p)).toBe(0);
    }
  });
  return shape;
}

/** SIGTERM, then SIGKILL if the process has not exited within the chart's grace period; resolves with the exit code ('killed' then). */
async function stop(p: OperatorProcess): Promise<number | null | 'killed'> {
  let timer: NodeJS.Timeout | undefined;
  const graceExpired = new Promise<'killed'>((resolve) => (timer = setTimeout(() => resolve('killed'), 30_000)));
  const code = await Promise.race([p.terminate(), graceExpired]);
  clearTimeout(timer);
  if (code === 'killed') await p.kill();
  return code;
}

const has = (s: Shape, kind: string, suffix: string): boolean =>
  s.installed.objects.some((o) => o.kind === kind && o.name.endsWith(suffix));

async function leaseHolder(namespace: string, name: string): Promise<string | undefined> {
  const lease = await env.client.tryGet(await resourceType(env, 'coordination.k8s.io/v1', 'Lease'), namespace, name);
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
}

/** The process among `pods` whose pid ends the holder identity of Lease `name`, once there is one. */
async function leaderOf(s: Shape, name: string, pods: OperatorProcess[]): Promise<OperatorProcess> {
  return await waitFor(`a process of the shape to hold Lease ${name}`, async () => {
    const holder = await leaseHolder(s.releaseNs, name);
    return pods.find((p) => holder?.endsWith(`-${p.child.pid}`));
  });
}

/** The pids of the processes that wrote events about Bundle `name`, once there is one (events are written after the status). */
async function writersOf(namespace: string, name: string): Promise<number[]> {
  return [
    ...(await waitFor(`an event about Bundle ${name}`, async () => {
      const pids = await reporterPids(namespace, name);
      return pids.size > 0 ? pids : undefined;
    })),
  ];
}

/** The pids of the processes that wrote events about Bundle `name` (events.k8s.io reportingInstance ends in the pid). */
async function reporterPids(namespace: string, name: string): Promise<Set<number>> {
  const { items } = await env.client.list(await resourceType(env, 'events.k8s.io/v1', 'Event'), namespace);
  return new Set(
    items
      .filter((e: KubeObject) => {
        const r = e.regarding as { kind?: string; name?: string } | undefined;
        return r?.kind === 'Bundle' && r.name === name;
      })
      .map((e) =>
        typeof e.reportingInstance === 'string' ? Number(e.reportingInstance.slice(e.reportingInstance.lastIndexOf('-') + 1)) : NaN,
      ),
  );
}

describe('one replica, no leader election, gc.mode=off, deletion guard off', () => {
  const s = chartShape(['replicaCount=1', 'leaderElection.enabled=false', 'gc.mode=off', 'deletionGuard.enabled=false']);

  it('renders one pod, no Lease rights, no guard, no spread', () => {
    expect(s.installed.deployments).toMatchObject([{ replicas: 1, topologySpread: undefined }]);
    expect(s.installed.deployments[0]?.args).toEqual(expect.arrayContaining(['--leader-elect=false', '--gc=off']));
    expect(has(s, 'Role', '-leader-election')).toBe(false);
    expect(has(s, 'ValidatingAdmissionPolicy', '-deletion-guard')).toBe(false);
  });

  it('reconciles a Bundle as the chart ServiceAccount', async () => {
    await applyBundle(env, s.ns, 'app', [{ name: 'c', object: configMap('one-c') }]);
    await waitForReady(env, s.ns, 'app');
  });
});

describe('two replicas with leader election, gc.mode=bundles, deletion guard on', () => {
  const s = chartShape(['replicaCount=2', 'gc.mode=bundles', 'deletionGuard.enabled=true']);

  it('renders two pods spread across nodes', () => {
    expect(s.installed.deployments).toHaveLength(1);
    expect(s.installed.deployments[0]).toMatchObject({
      replicas: 2,
      topologySpread: [{ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' }],
    });
  });

  it('one replica leads and reconciles; the standby takes over when it stops', async () => {
    const pods = [...s.pods.values()].flat();
    const leader = await leaderOf(s, 'bundlesmith-leader', pods);
    await applyBundle(env, s.ns, 'first', [{ name: 'c', object: configMap('first-c') }]);
    await waitForReady(env, s.ns, 'first');
    expect(await writersOf(s.ns, 'first')).toEqual([leader.child.pid]);

    expect(await stop(leader)).toBe(0);
    const standby = await leaderOf(
      s,
      'bundlesmith-leader',
      pods.filter((p) => p !== leader),
    );
    await applyBundle(env, s.ns, 'second', [{ name: 'c', object: configMap('second-c') }]);
    await waitForReady(env, s.ns, 'second');
    expect(await writersOf(s.ns, 'second')).toEqual([standby.child.pid]);
  });

  it('the deletion guard refuses the collector identity a delete of an object the Bundle releases (deletionPolicy Orphan)', async () => {
    expect(has(s, 'ValidatingAdmissionPolicy', '-deletion-guard')).toBe(true);
    await applyBundle(env, s.ns, 'guarded', [
      { name: 'c', object: configMap('guarded-c', { key: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    ]);
    await waitForReady(env, s.ns, 'guarded');
    // Server-side dry run: admission runs, nothing is deleted even before the policy is in force.
    const refused = await waitFor('the guard to refuse the delete', async () => {
      const r = await run('kubectl', ['delete', 'configmap', 'guarded-c', '-n', s.ns, '--dry-run=server', '--as', s.installed.user]);
      return r.code !== 0 ? r.stderr : undefined;
    });
    expect(refused).toMatch(/bundlesmith deletion guard: guarded-c has deletionPolicy Orphan/);
    const plain = await run('kubectl', ['delete', 'configmap', 'first-c', '-n', s.ns, '--dry-run=server', '--as', s.installed.user]);
    expect(plain.code).toBe(0);
  });
});

describe('sharded: two shards, each with its own Lease', () => {
  const s = chartShape([
    'replicaCount=1',
    'gc.mode=bundles',
    'sharding.shards[0].name=main',
    'sharding.shards[0].selector=!bundlesmith.dev/shard',
    'sharding.shards[1].name=s1',
    'sharding.shards[1].selector=bundlesmith.dev/shard=s1',
  ]);
  const shard = (name: 'main' | 's1'): OperatorProcess => {
    const p = [...s.pods].find(([deployment]) => deployment.endsWith(`-${name}`))?.[1][0];
    if (!p) throw new Error(`no process for shard ${name}`);
    return p;
  };

  it('every shard leads its own Lease', async () => {
    expect(s.installed.deployments.map((d) => d.name.split('-').pop())).toEqual(['main', 's1']);
    expect(await leaderOf(s, 'bundlesmith-leader-main', [shard('main')])).toBe(shard('main'));
    expect(await leaderOf(s, 'bundlesmith-leader-s1', [shard('s1')])).toBe(shard('s1'));
  });

  it('every shard reconciles its own Bundles, and a relabelled Bundle moves with nothing deleted', async () => {
    await applyBundle(env, s.ns, 'plain', [{ name: 'c', object: configMap('plain-c') }]);
    const labelled = (resources: Parameters<typeof bundleManifest>[2], labels: Record<string, string>) => {
      const m = bundleManifest(s.ns, 'moving', resources);
      (m.metadata as Record<string, unknown>).labels = labels;
      return env.client.apply(BUNDLE_RESOURCE_TYPE, m, { fieldManager: 'test-user', force: true });
    };
    await labelled([{ name: 'a', object: configMap('moving-a') }], { 'bundlesmith.dev/shard': 's1' });
    await waitForReady(env, s.ns, 'plain');
    await waitForReady(env, s.ns, 'moving');
    expect(await writersOf(s.ns, 'plain')).toEqual([shard('main').child.pid]);
    expect(await writersOf(s.ns, 'moving')).toEqual([shard('s1').child.pid]);

    const uid = await uidOf(env, t.configMap, s.ns, 'moving-a');
    // To the main shard, with one more object, which exists already: adopting it, the main shard says so in an event.
    await env.client.create(t.configMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'moving-b', namespace: s.ns },
      data: { key: 'moving-b' },
    });
    await labelled(
      [
        { name: 'a', object: configMap('moving-a') },
        { name: 'b', object: configMap('moving-b') },
      ],
      {},
    );
    await waitForBundle(
      env,
      s.ns,
      'moving',
      'Ready with both objects',
      (b) => (b.status as { resourcesReady?: string }).resourcesReady === '2/2',
    );
    expectKept(await env.client.tryGet(t.configMap, s.ns, 'moving-a'), uid);
    await waitFor('the main shard to adopt moving-b', async () => (await reporterPids(s.ns, 'moving')).has(shard('main').child.pid ?? -1));
  });
});
