/**
 * Beyond one replica (issue 13.7): K Bundles of M ConfigMaps each, over one
 * shard and over two, timed from the first apply to every Bundle Ready=True
 * at its generation (seen by a watch on the unthrottled admin client).
 *
 * Each shard is the operator as shipped: a process of its own running
 * dist/src/main.js (`--namespace`, `--gc=off`, its `--workers`), started and
 * ready (/readyz) before the clock starts. One shard: one process, no
 * selector. Two shards: the Bundles labelled alternately s0 / s1 and two
 * processes with `--bundle-selector bundlesmith.dev/shard=s0` and `=s1`, the
 * second without the sweeper (docs/operations.md, Sharding). Every run of
 * a layout gets a fresh control plane (20,000 objects left in etcd would
 * slow the next layout down), and the layouts alternate run by run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLE_RESOURCE_TYPE } from '../src/kube/bundle-resource.js';
import { repoRoot } from '../src/api/crd-paths.js';
import { DEFAULT_RELEASE_KEY_SECRET, loadReleaseKey } from '../src/controllers/softdelete/release-key.js';
import { applyCrd } from '../hack/crd-install.js';
import { createNamespace, forEachConcurrently, sleep, startBenchCluster, trackChild, type BenchCluster } from './cluster.js';
import type { BenchConfig } from './config.js';
import { isReady } from './reconciler.js';

export interface ShardingLayout {
  shards: number;
  /** Creation (first apply) to every Bundle Ready, per run. */
  readySeconds: number[];
  /** First apply to the last apply answered, per run (the bench's own pace; 16 applies in flight). */
  appliedSeconds: number[];
}

export interface ShardingResult {
  bundles: number;
  objectsPerBundle: number;
  workers: number;
  layouts: ShardingLayout[];
}

const SHARD_LABEL = 'bundlesmith.dev/shard';

function bundleManifest(namespace: string, i: number, objects: number, shards: number): Record<string, unknown> {
  const name = `bundle-${i}`;
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace, labels: { [SHARD_LABEL]: `s${i % shards}` } },
    spec: {
      resources: Array.from({ length: objects }, (_, k) => ({
        name: `cm-${k}`,
        spec: {
          object: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${name}-cm-${k}` },
            data: { index: String(k), payload: 'x'.repeat(64) },
          },
        },
      })),
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface ShardProcess {
  child: ChildProcess;
  logFile: string;
  exited: Promise<void>;
}

async function startShard(
  kubeconfig: string,
  namespace: string,
  workers: number,
  extraArgs: string[],
  logDir: string,
  name: string,
): Promise<ShardProcess> {
  const port = await freePort();
  const logFile = join(logDir, `${namespace}-${name}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [
      join(repoRoot(), 'dist', 'src', 'main.js'),
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      namespace,
      '--gc=off',
      '--workers',
      String(workers),
      '--metrics-addr',
      '0',
      '--health-addr',
      `127.0.0.1:${port}`,
      '--log-level',
      'warn',
      ...extraArgs,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  trackChild(child);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`shard ${name} exited with ${child.exitCode} before it was ready (log: ${logFile})`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`shard ${name} was not ready within 60 s (log: ${logFile})`);
    await sleep(100);
  }
  return { child, logFile, exited };
}

async function stopShard(shard: ShardProcess): Promise<void> {
  if (shard.child.exitCode === null && shard.child.signalCode === null) shard.child.kill('SIGTERM');
  const timer = setTimeout(() => shard.child.kill('SIGKILL'), 10_000);
  await shard.exited;
  clearTimeout(timer);
}

/** Resolves with the time (performance.now()) at which `expected` Bundles of the namespace were Ready at once. */
async function allReady(
  cluster: BenchCluster,
  namespace: string,
  expected: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<number> {
  const ready = new Set<string>();
  const list = await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace);
  for (const b of list.items) if (isReady(b)) ready.add(b.metadata.name);
  if (ready.size >= expected) return performance.now();
  let done: ((at: number) => void) | undefined;
  const reached = new Promise<number>((resolve) => (done = resolve));
  const watching = cluster.admin.watch(
    BUNDLE_RESOURCE_TYPE,
    namespace,
    list.resourceVersion,
    { timeoutSeconds: Math.ceil(timeoutMs / 1000) + 5, signal },
    (event) => {
      const name = event.object.metadata.name;
      if (event.type !== 'DELETED' && isReady(event.object)) ready.add(name);
      else ready.delete(name);
      if (ready.size >= expected) done?.(performance.now());
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`only ${ready.size} of ${expected} Bundles were Ready within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
  });
  const ended = watching.then(() => {
    throw new Error(`the Bundle watch ended with ${ready.size} of ${expected} Ready`);
  });
  try {
    return await Promise.race([reached, timedOut, ended]);
  } finally {
    clearTimeout(timer);
    ended.catch(() => undefined);
  }
}

async function timeLayout(
  cluster: BenchCluster,
  config: BenchConfig,
  shards: number,
  run: number,
  logDir: string,
): Promise<{ readySeconds: number; appliedSeconds: number }> {
  const { bundles, objectsPerBundle, workers } = config.sharding;
  const namespace = await createNamespace(cluster, `bench-shards-${shards}-${run}`);
  const selectors =
    shards === 1
      ? [[]]
      : Array.from({ length: shards }, (_, s) => [
          '--bundle-selector',
          `${SHARD_LABEL}=s${s}`,
          ...(s > 0 ? ['--sweep-released=false'] : []),
        ]);
  const processes: ShardProcess[] = [];
  const abort = new AbortController();
  try {
    for (const [s, args] of selectors.entries())
      processes.push(await startShard(cluster.state.kubeconfig, namespace, workers, args, logDir, `shard-${s}`));
    const timeoutMs = Math.max(300_000, bundles * objectsPerBundle * 20);
    const readyAt = allReady(cluster, namespace, bundles, timeoutMs, abort.signal);
    // Never an unhandled rejection while the applies run; awaited below.
    readyAt.catch(() => undefined);
    const started = performance.now();
    await forEachConcurrently(bundles, 16, async (i) => {
      await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, bundleManifest(namespace, i, objectsPerBundle, shards), {
        fieldManager: 'bench',
        force: true,
      });
    });
    const appliedSeconds = (performance.now() - started) / 1000;
    const readySeconds = ((await readyAt) - started) / 1000;
    for (const p of processes) if (p.child.exitCode !== null) throw new Error(`a shard exited during the run (log: ${p.logFile})`);
    return { readySeconds, appliedSeconds };
  } finally {
    abort.abort();
    for (const p of processes) await stopShard(p);
  }
}

export async function shardingBench(config: BenchConfig, log: (line: string) => void): Promise<ShardingResult> {
  const { bundles, objectsPerBundle, workers, runs } = config.sharding;
  const layouts: ShardingLayout[] = [1, 2].map((shards) => ({ shards, readySeconds: [], appliedSeconds: [] }));
  const logDir = mkdtempSync(join(tmpdir(), 'bundlesmith-bench-shards-'));
  let failed = true;
  try {
    for (let r = 0; r < runs; r++) {
      const order = r % 2 === 0 ? layouts : [...layouts].reverse();
      for (const layout of order) {
        const cluster = await startBenchCluster();
        try {
          await applyCrd(cluster.state.kubeconfig);
          // The key every shard signs releases with: created here, so two processes starting together never race to create it.
          await loadReleaseKey(cluster.admin, { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET });
          const t = await timeLayout(cluster, config, layout.shards, r, logDir);
          layout.readySeconds.push(t.readySeconds);
          layout.appliedSeconds.push(t.appliedSeconds);
          log(
            `  ${layout.shards} shard(s) run ${r + 1}: ${bundles} Bundles x ${objectsPerBundle} ConfigMaps Ready in ${t.readySeconds.toFixed(2)} s (applied in ${t.appliedSeconds.toFixed(2)} s)`,
          );
        } finally {
          cluster.stop();
        }
      }
    }
    failed = false;
  } finally {
    // The operators' logs matter only when something failed.
    if (failed) log(`  sharding: operator logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
  return { bundles, objectsPerBundle, workers, layouts };
}
