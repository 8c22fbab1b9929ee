/**
 * The Bundle reconciler on a fresh control plane (the operator in this
 * process, as the integration tests run it, without the garbage collector):
 * K Bundles of M ConfigMaps each, timed from the first apply to every
 * Bundle's Ready=True at its current generation; then no-op passes, each
 * Bundle re-queued while nothing changes, counting reconciles/s and every
 * request the operator's client sends (a no-op pass must send no writes).
 */
import { randomBytes } from 'node:crypto';
import { applyCrd } from '../hack/crd-install.js';
import { BUNDLE_RESOURCE_TYPE } from '../src/api/bundle-resource.js';
import type { KubeClient } from '../src/kube/client.js';
import type { KubeObject } from '../src/kube/types.js';
import { silentLogger } from '../src/observability/logger.js';
import { OperatorMetrics } from '../src/observability/metrics.js';
import { systemClock } from '../src/runtime/clock.js';
import { Operator } from '../src/operator.js';
import { createNamespace, forEachConcurrently, sleep, startBenchCluster } from './cluster.js';
import type { BenchConfig } from './config.js';

export interface ReconcilerResult {
  bundles: number;
  objectsPerBundle: number;
  workers: number;
  /** Creation to all Ready, per run. */
  readySeconds: number[];
  noop: { rounds: number; reconciles: number; seconds: number; writes: number; reads: number; bundleRvsUnchanged: boolean }[];
}

/** Counts the requests a client sends, by HTTP method (watches and lists are GETs). */
class RequestCounter {
  readonly byMethod = new Map<string, number>();

  constructor(client: KubeClient) {
    const transport = client.transport;
    const request = transport.request.bind(transport);
    const stream = transport.stream.bind(transport);
    transport.request = (method, path, opts) => {
      this.byMethod.set(method, (this.byMethod.get(method) ?? 0) + 1);
      return request(method, path, opts);
    };
    transport.stream = (path, opts, onValue) => {
      this.byMethod.set('WATCH', (this.byMethod.get('WATCH') ?? 0) + 1);
      return stream(path, opts, onValue);
    };
  }

  writes(): number {
    let n = 0;
    for (const [method, count] of this.byMethod) if (method !== 'GET' && method !== 'WATCH') n += count;
    return n;
  }

  reads(): number {
    return this.byMethod.get('GET') ?? 0;
  }
}

function bundleManifest(namespace: string, name: string, objects: number): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace },
    spec: {
      resources: Array.from({ length: objects }, (_, i) => ({
        name: `cm-${i}`,
        spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-cm-${i}` }, data: { index: String(i), payload: 'x'.repeat(64) } } },
      })),
    },
  };
}

/** Ready=True at the Bundle's current generation. */
export function isReady(b: KubeObject): boolean {
  const status = b.status as { observedGeneration?: number; conditions?: { type: string; status: string }[] } | undefined;
  return status?.observedGeneration === b.metadata.generation && (status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

async function reconcileCount(metrics: OperatorMetrics): Promise<number> {
  const { values } = await metrics.reconciles.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

export async function reconcilerBench(config: BenchConfig, log: (line: string) => void): Promise<ReconcilerResult> {
  const { bundles, objectsPerBundle, workers, noopRounds } = config.reconciler;
  const runs = config.cascade.runs;
  const result: ReconcilerResult = { bundles, objectsPerBundle, workers, readySeconds: [], noop: [] };
  const cluster = await startBenchCluster();
  let operator: Operator | undefined;
  let client: KubeClient | undefined;
  try {
    await applyCrd(cluster.state.kubeconfig);
    client = await cluster.client({ maxSockets: Infinity });
    const counter = new RequestCounter(client);
    for (let r = 0; r < runs; r++) {
      const namespace = await createNamespace(cluster, `bench-bundles-${r}`);
      const metrics = new OperatorMetrics();
      operator = new Operator({ client, clock: systemClock, logger: silentLogger(), metrics, namespace, workers, releaseKey: randomBytes(32) });
      await operator.start();
      while (!operator.ready()) await sleep(20);

      const names = Array.from({ length: bundles }, (_, i) => `bundle-${i}`);
      const started = performance.now();
      await forEachConcurrently(names.length, 8, async (i) => {
        await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, bundleManifest(namespace, names[i] ?? '', objectsPerBundle), { fieldManager: 'bench', force: true });
      });
      const deadline = Date.now() + 300_000;
      for (;;) {
        const { items } = await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace);
        if (items.length === bundles && items.every(isReady)) break;
        if (Date.now() > deadline) throw new Error(`only ${items.filter(isReady).length} of ${bundles} Bundles became Ready within 300 s`);
        await sleep(50);
      }
      const readySeconds = (performance.now() - started) / 1000;
      result.readySeconds.push(readySeconds);
      log(`  run ${r + 1}: ${bundles} Bundles x ${objectsPerBundle} ConfigMaps Ready in ${readySeconds.toFixed(2)} s`);

      // Settle: the queue is empty and nothing has been written for 3 s (rechecks after writes have run).
      let lastWrites = counter.writes();
      let quietSince = Date.now();
      while (Date.now() - quietSince < 3_000 || operator.bundles.queueLength() > 0) {
        await sleep(100);
        if (counter.writes() !== lastWrites) {
          lastWrites = counter.writes();
          quietSince = Date.now();
        }
      }

      const rvsBefore = new Map((await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace)).items.map((b) => [b.metadata.name, b.metadata.resourceVersion]));
      const writesBefore = counter.writes();
      const readsBefore = counter.reads();
      let done = await reconcileCount(metrics);
      const noopStarted = performance.now();
      for (let round = 0; round < noopRounds; round++) {
        for (const name of names) operator.bundles.enqueue(`${namespace}/${name}`);
        const target = done + names.length;
        while ((done = await reconcileCount(metrics)) < target) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const noopSeconds = (performance.now() - noopStarted) / 1000;
      const rvsAfter = (await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace)).items;
      const noop = {
        rounds: noopRounds,
        reconciles: noopRounds * names.length,
        seconds: noopSeconds,
        writes: counter.writes() - writesBefore,
        reads: counter.reads() - readsBefore,
        bundleRvsUnchanged: rvsAfter.length === rvsBefore.size && rvsAfter.every((b) => rvsBefore.get(b.metadata.name) === b.metadata.resourceVersion),
      };
      result.noop.push(noop);
      log(`  run ${r + 1}: ${noop.reconciles} no-op reconciles in ${noopSeconds.toFixed(2)} s (${(noop.reconciles / noopSeconds).toFixed(0)}/s), ${noop.writes} writes, ${noop.reads} reads, Bundle resourceVersions unchanged: ${noop.bundleRvsUnchanged}`);
      await operator.stop();
      operator = undefined;
    }
  } finally {
    await operator?.stop();
    client?.close();
    cluster.stop();
  }
  return result;
}
