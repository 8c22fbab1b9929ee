/**
 * The Bundle reconciler on a fresh control plane (the operator in this
 * process, as the integration tests run it, without the garbage collector),
 * issue 13.4:
 * - one Bundle of N ConfigMaps, apply -> Ready, against two references on
 *   the same control plane: the same objects applied server-side by the
 *   bench itself, many in flight (raw), and `kubectl apply --server-side`
 *   of a file holding them (what a person would run); interleaved run by run;
 * - K Bundles of M ConfigMaps each: time to all Ready, the operator's heap,
 *   a no-op pass over every Bundle, and a restart with all of them in place
 *   (time until every Bundle has been reconciled once more). Writes are
 *   counted by the API server (apiserver_request_total by verb and
 *   resource, status writes included), so every client of the process is
 *   counted; a no-op pass and a restart must write nothing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { applyCrd } from '../hack/crd-install.js';
import { ensureTools } from '../hack/tools.js';
import { BUNDLE_RESOURCE_TYPE } from '../src/kube/bundle-resource.js';
import type { KubeClient } from '../src/kube/client.js';
import type { KubeObject } from '../src/kube/types.js';
import { silentLogger } from '../src/observability/logger.js';
import { OperatorMetrics } from '../src/observability/metrics.js';
import { systemClock } from '../src/kube/clock.js';
import { Operator } from '../src/operator.js';
import { createNamespace, forEachConcurrently, sleep, startBenchCluster, type BenchCluster } from './cluster.js';
import type { BenchConfig } from './config.js';
import { settledHeap } from './memory.js';

export interface SingleBundleRun {
  /** Bundle applied -> Ready=True at its generation, seconds. */
  operatorS: number;
  /** The same objects applied server-side by the bench, `rawConcurrency` in flight. */
  rawS: number;
  /** `kubectl apply --server-side -f` of a file holding them (process start included, as a person runs it). */
  kubectlS: number;
  /**
   * What one write of the Ready Bundle costs the API server: its status
   * written back unchanged by the bench (PUT), median of 5, seconds. A pass
   * of a new Bundle writes it three times (finalizer, the kinds ahead of the
   * objects, the final status).
   */
  bundleWriteS: number;
}

export interface SingleBundleResult {
  objects: number;
  rawConcurrency: number;
  runs: SingleBundleRun[];
}

/** Requests the API server counted, "VERB resource[/subresource]" -> count. */
export type RequestCounts = Record<string, number>;

export interface FleetResult {
  bundles: number;
  objectsPerBundle: number;
  workers: number;
  /** First apply to every Bundle Ready. */
  readySeconds: number;
  /** The operator's heap: heapUsed after forced GCs with every Bundle Ready, less before the operator started. */
  heapBytes: number;
  noop: { reconciles: number; seconds: number; writes: number; requests: RequestCounts; bundleRvsUnchanged: boolean };
  restart: { seconds: number; reconciles: number; writes: number; requests: RequestCounts; bundleRvsUnchanged: boolean };
}

export interface ReconcilerResult {
  single?: SingleBundleResult;
  fleet?: FleetResult;
}

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE', 'DELETECOLLECTION', 'CREATE', 'UPDATE']);
/** Written by the control plane itself (the apiserver's identity lease) whatever the operator does. */
const NOT_OURS = new Set(['leases']);

/** apiserver_request_total summed by verb, resource and subresource (all codes). */
async function requestCounters(cluster: BenchCluster): Promise<Map<string, number>> {
  const text = await cluster.admin.raw('GET', '/metrics');
  const counts = new Map<string, number>();
  if (typeof text !== 'string') return counts;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const label = (name: string) => new RegExp(`[{,]${name}="([^"]*)"`).exec(line)?.[1] ?? '';
    const resource = label('resource');
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!resource || NOT_OURS.has(resource) || !Number.isFinite(value)) continue;
    const subresource = label('subresource');
    const key = `${label('verb')} ${resource}${subresource ? `/${subresource}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

function delta(before: Map<string, number>, after: Map<string, number>, less: RequestCounts = {}): RequestCounts {
  const out: RequestCounts = {};
  for (const [key, value] of after) {
    const d = value - (before.get(key) ?? 0) - (less[key] ?? 0);
    if (d > 0) out[key] = d;
  }
  return out;
}

/** Reviews are POSTs that store nothing: the API server answers a question (may I?) and forgets it. */
const QUESTIONS = new Set([
  'selfsubjectaccessreviews',
  'selfsubjectrulesreviews',
  'subjectaccessreviews',
  'localsubjectaccessreviews',
  'tokenreviews',
]);

function writesIn(counts: RequestCounts): number {
  let n = 0;
  for (const [key, count] of Object.entries(counts)) {
    const [verb = '', resource = ''] = key.split(' ');
    if (WRITE_VERBS.has(verb) && !QUESTIONS.has(resource.split('/')[0] ?? '')) n += count;
  }
  return n;
}

function configMapObject(name: string, i: number): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { index: String(i), payload: 'x'.repeat(64) } };
}

function bundleManifest(namespace: string, name: string, objects: number): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace },
    spec: {
      resources: Array.from({ length: objects }, (_, i) => ({ name: `cm-${i}`, spec: { object: configMapObject(`${name}-cm-${i}`, i) } })),
    },
  };
}

/** Ready=True at the Bundle's current generation. */
export function isReady(b: KubeObject): boolean {
  const status = b.status as { observedGeneration?: number; conditions?: { type: string; status: string }[] } | undefined;
  return (
    status?.observedGeneration === b.metadata.generation &&
    (status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

async function reconcileCount(metrics: OperatorMetrics): Promise<number> {
  const { values } = await metrics.reconciles.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

/**
 * Starts watching the namespace's Bundles; `ready()` resolves once `count`
 * of them are Ready at their generation. A watch, not a poll: listing large
 * Bundles every few milliseconds would load the API server being measured.
 */
async function readyWatch(
  cluster: BenchCluster,
  namespace: string,
  count: number,
  timeoutMs: number,
): Promise<{ ready: () => Promise<void> }> {
  const readyNames = new Set<string>();
  const abort = new AbortController();
  const { resourceVersion } = await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace);
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  const watching = cluster.admin
    .watch(
      BUNDLE_RESOURCE_TYPE,
      namespace,
      resourceVersion,
      { timeoutSeconds: Math.ceil(timeoutMs / 1000) + 60, signal: abort.signal },
      (event) => {
        if (event.type === 'BOOKMARK') return;
        if (event.type !== 'DELETED' && isReady(event.object)) readyNames.add(event.object.metadata.name);
        else readyNames.delete(event.object.metadata.name);
        if (readyNames.size >= count) wake?.();
      },
    )
    .catch((err: unknown) => {
      if (!abort.signal.aborted) failure = err instanceof Error ? err : new Error('the Bundle watch failed');
      wake?.();
    });
  return {
    ready: async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        if (readyNames.size < count) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, timeoutMs);
          });
        }
      } finally {
        clearTimeout(timer);
        abort.abort();
        await watching;
      }
      if (failure !== undefined) throw failure;
      if (readyNames.size < count)
        throw new Error(`only ${readyNames.size} of ${count} Bundles became Ready within ${Math.round(timeoutMs / 1000)} s`);
    },
  };
}

async function bundleRvs(cluster: BenchCluster, namespace: string): Promise<Map<string, string | undefined>> {
  return new Map(
    (await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace)).items.map((b) => [b.metadata.name, b.metadata.resourceVersion]),
  );
}

function sameRvs(a: Map<string, string | undefined>, b: Map<string, string | undefined>): boolean {
  return a.size === b.size && [...a].every(([name, rv]) => b.get(name) === rv);
}

/** Until `metrics` counted `target` reconciles and the queue is empty. */
async function reconciledAtLeast(operator: Operator, metrics: OperatorMetrics, target: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let done = await reconcileCount(metrics);
  while (done < target || operator.bundles.queueLength() > 0) {
    if (Date.now() > deadline) throw new Error(`only ${done} of ${target} reconciles within ${Math.round(timeoutMs / 1000)} s`);
    await sleep(5);
    done = await reconcileCount(metrics);
  }
  return done;
}

function startOperator(client: KubeClient, namespace: string, workers: number, metrics: OperatorMetrics): Operator {
  return new Operator({
    client,
    clock: systemClock,
    logger: silentLogger(),
    metrics,
    namespace,
    workers,
    releaseKey: randomBytes(32),
    releaseKeySecret: { namespace, name: 'bundlesmith-release-key' },
  });
}

async function started(operator: Operator): Promise<Operator> {
  await operator.start();
  while (!operator.ready()) await sleep(20);
  return operator;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, maxBuffer: 64 * 2 ** 20 }, (err, _stdout, stderr) =>
      err ? reject(new Error(`${file} ${args.join(' ')}: ${stderr || err.message}`)) : resolve(),
    );
  });
}

/** One Bundle of N ConfigMaps against raw parallel server-side apply and kubectl, interleaved. */
export async function singleBundleBench(config: BenchConfig, log: (line: string) => void): Promise<SingleBundleResult> {
  const { singleObjects: objects, workers } = config.reconciler;
  const rawConcurrency = config.cascade.rawConcurrency;
  const result: SingleBundleResult = { objects, rawConcurrency, runs: [] };
  const tools = await ensureTools();
  const cluster = await startBenchCluster();
  const dir = mkdtempSync(join(tmpdir(), 'bundlesmith-bench-'));
  let client: KubeClient | undefined;
  try {
    await applyCrd(cluster.state.kubeconfig);
    client = await cluster.client({ maxSockets: Infinity });
    const names = Array.from({ length: objects }, (_, i) => `single-cm-${i}`);
    const file = join(dir, 'configmaps.json');
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: names.map((n, i) => configMapObject(n, i)) }));
    for (let r = 0; r < config.cascade.runs; r++) {
      // Raw: the bench's own unthrottled client, as many in flight as the raw DELETE rate uses.
      const rawNs = await createNamespace(cluster, `bench-single-raw-${r}`);
      const rawStarted = performance.now();
      await forEachConcurrently(names.length, rawConcurrency, async (i) => {
        await cluster.admin.apply(
          cluster.configMaps,
          { ...configMapObject(names[i] ?? '', i), metadata: { name: names[i], namespace: rawNs } },
          { fieldManager: 'bench', force: true },
        );
      });
      const rawS = (performance.now() - rawStarted) / 1000;

      const kubectlNs = await createNamespace(cluster, `bench-single-kubectl-${r}`);
      const kubectlStarted = performance.now();
      await run(tools.kubectl, ['apply', '--server-side', '--field-manager=bench', '-n', kubectlNs, '-f', file], {
        ...process.env,
        KUBECONFIG: cluster.state.kubeconfig,
      });
      const kubectlS = (performance.now() - kubectlStarted) / 1000;

      const opNs = await createNamespace(cluster, `bench-single-op-${r}`);
      const metrics = new OperatorMetrics();
      const operator = await started(startOperator(client, opNs, workers, metrics));
      let running: Operator | undefined = operator;
      try {
        const watch = await readyWatch(cluster, opNs, 1, 120_000);
        const opStarted = performance.now();
        await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, bundleManifest(opNs, 'single', objects), { fieldManager: 'bench', force: true });
        await watch.ready();
        const operatorS = (performance.now() - opStarted) / 1000;
        await operator.stop();
        running = undefined;
        const writes: number[] = [];
        for (let w = 0; w < 5; w++) {
          const live = await cluster.admin.get(BUNDLE_RESOURCE_TYPE, opNs, 'single');
          const writeStarted = performance.now();
          await cluster.admin.replaceStatus(BUNDLE_RESOURCE_TYPE, live);
          writes.push((performance.now() - writeStarted) / 1000);
        }
        const bundleWriteS = [...writes].sort((a, b) => a - b)[2] ?? NaN;
        result.runs.push({ operatorS, rawS, kubectlS, bundleWriteS });
        log(
          `  run ${r + 1}: one Bundle of ${objects} ConfigMaps Ready in ${operatorS.toFixed(2)} s; raw parallel apply ${rawS.toFixed(2)} s (${(operatorS / rawS).toFixed(2)}x); kubectl apply --server-side ${kubectlS.toFixed(2)} s (${(operatorS / kubectlS).toFixed(2)}x); one write of the Bundle ${(bundleWriteS * 1000).toFixed(0)} ms`,
        );
      } finally {
        await running?.stop();
      }
    }
  } finally {
    client?.close();
    cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

/** K Bundles x M ConfigMaps: all Ready, heap, a no-op pass, a restart. */
export async function fleetBench(config: BenchConfig, log: (line: string) => void): Promise<FleetResult> {
  const { bundles, objectsPerBundle, workers, noopRounds } = config.reconciler;
  const cluster = await startBenchCluster();
  let operator: Operator | undefined;
  let client: KubeClient | undefined;
  try {
    await applyCrd(cluster.state.kubeconfig);
    client = await cluster.client({ maxSockets: Infinity });
    const namespace = await createNamespace(cluster, 'bench-fleet');
    const heapBefore = await settledHeap();
    let metrics = new OperatorMetrics();
    operator = await started(startOperator(client, namespace, workers, metrics));

    const names = Array.from({ length: bundles }, (_, i) => `bundle-${i}`);
    const watch = await readyWatch(cluster, namespace, bundles, 900_000);
    const readyStarted = performance.now();
    await forEachConcurrently(names.length, 8, async (i) => {
      await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, bundleManifest(namespace, names[i] ?? '', objectsPerBundle), {
        fieldManager: 'bench',
        force: true,
      });
    });
    await watch.ready();
    const readySeconds = (performance.now() - readyStarted) / 1000;
    log(`  ${bundles} Bundles x ${objectsPerBundle} ConfigMaps Ready in ${readySeconds.toFixed(2)} s`);

    // Settle: nothing counted for 3 s and the queue empty (rechecks after writes have run).
    let last = writesIn(delta(new Map(), await requestCounters(cluster)));
    let quietSince = Date.now();
    while (Date.now() - quietSince < 3_000 || operator.bundles.queueLength() > 0) {
      await sleep(250);
      const now = writesIn(delta(new Map(), await requestCounters(cluster)));
      if (now !== last) {
        last = now;
        quietSince = Date.now();
      }
    }
    const heapBytes = (await settledHeap()) - heapBefore;
    log(
      `  operator heap with every Bundle Ready: ${(heapBytes / 2 ** 20).toFixed(1)} MiB (${(heapBytes / bundles / 1024).toFixed(1)} KiB per Bundle)`,
    );

    // A no-op pass: every Bundle re-queued while nothing changes.
    const rvsBefore = await bundleRvs(cluster, namespace);
    const countersBefore = await requestCounters(cluster);
    let done = await reconcileCount(metrics);
    const noopStarted = performance.now();
    for (let round = 0; round < noopRounds; round++) {
      for (const name of names) operator.bundles.enqueue(`${namespace}/${name}`);
      done = await reconciledAtLeast(operator, metrics, done + names.length, 600_000);
    }
    const noopSeconds = (performance.now() - noopStarted) / 1000;
    // The bench's own: the LIST of Bundles below comes after the counters are read.
    const noopRequests = delta(countersBefore, await requestCounters(cluster));
    const noop = {
      reconciles: noopRounds * names.length,
      seconds: noopSeconds,
      writes: writesIn(noopRequests),
      requests: noopRequests,
      bundleRvsUnchanged: sameRvs(rvsBefore, await bundleRvs(cluster, namespace)),
    };
    log(
      `  no-op: ${noop.reconciles} reconciles in ${noopSeconds.toFixed(2)} s (${(noop.reconciles / noopSeconds).toFixed(0)}/s), ${noop.writes} writes, Bundle resourceVersions unchanged: ${noop.bundleRvsUnchanged}`,
    );

    // A restart with everything in place: a new operator, every Bundle reconciled once, nothing written.
    await operator.stop();
    operator = undefined;
    metrics = new OperatorMetrics();
    const rvsBeforeRestart = await bundleRvs(cluster, namespace);
    const countersBeforeRestart = await requestCounters(cluster);
    const restartStarted = performance.now();
    operator = await started(startOperator(client, namespace, workers, metrics));
    const reconciles = await reconciledAtLeast(operator, metrics, bundles, 900_000);
    const restartSeconds = (performance.now() - restartStarted) / 1000;
    const restartRequests = delta(countersBeforeRestart, await requestCounters(cluster));
    const restart = {
      seconds: restartSeconds,
      reconciles,
      writes: writesIn(restartRequests),
      requests: restartRequests,
      bundleRvsUnchanged: sameRvs(rvsBeforeRestart, await bundleRvs(cluster, namespace)),
    };
    log(
      `  restart: every Bundle confirmed ${restartSeconds.toFixed(2)} s after the start (${reconciles} reconciles), ${restart.writes} writes, Bundle resourceVersions unchanged: ${restart.bundleRvsUnchanged}`,
    );
    return { bundles, objectsPerBundle, workers, readySeconds, heapBytes, noop, restart };
  } finally {
    await operator?.stop();
    client?.close();
    cluster.stop();
  }
}
