/**
 * Countdowns expiring at once (issue 13.5): Bundles of up to 250
 * ConfigMaps (the CRD allows 256 resources) hold N ConfigMaps with the
 * same deletionDelay, and one edit per Bundle, sent together, drops them all. The
 * operator (in this process, without the garbage collector) stamps each
 * one; every deletion is timed by the DELETED event of a watch on the
 * unthrottled admin client and compared with the object's own deadline
 * (its stamp + delay, as the last version the watch saw before the delete
 * says). Lateness is that difference; a negative one is an early delete.
 */
import { randomBytes } from 'node:crypto';
import { applyCrd } from '../hack/crd-install.js';
import { BUNDLE_RESOURCE_TYPE } from '../src/kube/bundle-resource.js';
import { Annotations } from '../src/api/names.js';
import type { KubeClient } from '../src/kube/client.js';
import { silentLogger } from '../src/observability/logger.js';
import { systemClock } from '../src/kube/clock.js';
import { Operator } from '../src/operator.js';
import { createNamespace, forEachConcurrently, sleep, startBenchCluster } from './cluster.js';
import type { BenchConfig } from './config.js';
import { isReady } from './reconciler.js';

export interface ExpiryResult {
  objects: number;
  delaySeconds: number;
  /** Milliseconds past each object's deadline, sorted. */
  latenessMs: number[];
  early: number;
  /** From the edit that dropped them to the last stamp written. */
  stampSeconds: number;
  /**
   * The reference: as many ConfigMaps deleted by the bench itself, read
   * fresh by one LIST and each deleted with its uid and resourceVersion
   * (what the operator sends for a wave of expired countdowns),
   * `rawInFlight` at once: the API server's own time for the work, seconds.
   */
  rawSeconds?: number;
  rawInFlight: number;
}

/** The raw reference's requests in flight: the operator's 4 workers x 32 prunes at once. */
const RAW_IN_FLIGHT = 128;

const LABEL = 'bench.bundlesmith.dev/set';

const PER_BUNDLE = 250;

/** Bundle `b` with objects [from, to), or with none of them but its keeper (a Bundle lists at least one resource). */
function manifest(namespace: string, b: number, from: number, to: number, delay: string): Record<string, unknown> {
  const keep = {
    name: 'keep',
    spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `keep-${b}` }, data: { k: 'v' } } },
  };
  const resources = Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k).map((i) => ({
    name: `cm-${i}`,
    spec: {
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `exp-${i}`, labels: { [LABEL]: 'expiry' }, annotations: { [Annotations.deletionDelay]: delay } },
        data: { i: String(i) },
      },
    },
  }));
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: `expiry-${b}`, namespace },
    spec: { resources: [keep, ...resources] },
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

export async function expiryBench(config: BenchConfig, log: (line: string) => void): Promise<ExpiryResult> {
  const { objects, delaySeconds } = config.expiry;
  const cluster = await startBenchCluster();
  let operator: Operator | undefined;
  let client: KubeClient | undefined;
  const abort = new AbortController();
  try {
    await applyCrd(cluster.state.kubeconfig);
    client = await cluster.client({ maxSockets: Infinity });
    const namespace = await createNamespace(cluster, 'bench-expiry');
    operator = new Operator({
      client,
      clock: systemClock,
      logger: silentLogger(),
      namespace,
      workers: 4,
      releaseKey: randomBytes(32),
      releaseKeySecret: { namespace, name: 'bundlesmith-release-key' },
    });
    await operator.start();
    while (!operator.ready()) await sleep(20);

    const delay = `${delaySeconds}s`;
    const bundles = Math.ceil(objects / PER_BUNDLE);
    const slice = (b: number): [number, number] => [b * PER_BUNDLE, Math.min(objects, (b + 1) * PER_BUNDLE)];
    for (let b = 0; b < bundles; b++)
      await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, manifest(namespace, b, ...slice(b), delay), { fieldManager: 'bench', force: true });
    for (;;) {
      const { items } = await cluster.admin.list(BUNDLE_RESOURCE_TYPE, namespace);
      if (items.length === bundles && items.every(isReady)) break;
      await sleep(100);
    }
    log(`  ${objects} ConfigMaps with deletionDelay ${delay} Ready in ${bundles} Bundles`);

    // Each object's deadline, from the last version seen before its deletion.
    const deadline = new Map<string, number>();
    const lateness: number[] = [];
    let early = 0;
    let lastStampAt = 0;
    const list = await cluster.admin.list(cluster.configMaps, namespace, { labelSelector: `${LABEL}=expiry` });
    const watching = cluster.admin
      .watch(
        cluster.configMaps,
        namespace,
        list.resourceVersion,
        { labelSelector: `${LABEL}=expiry`, timeoutSeconds: 600, signal: abort.signal },
        (event) => {
          const name = event.object.metadata.name;
          const stamp = event.object.metadata.annotations?.[Annotations.deletionTimestamp];
          // The operator writes UTC with milliseconds, which Date.parse reads exactly.
          const parsed = stamp === undefined ? NaN : Date.parse(stamp);
          const stampMs = Number.isNaN(parsed) ? undefined : parsed;
          if (stampMs !== undefined && !deadline.has(name)) lastStampAt = Date.now();
          if (stampMs !== undefined) deadline.set(name, stampMs + delaySeconds * 1000);
          if (event.type !== 'DELETED') return;
          const due = deadline.get(name);
          if (due === undefined) return;
          const late = Date.now() - due;
          if (late < 0) early++;
          lateness.push(late);
        },
      )
      .catch((err: unknown) => {
        if (!abort.signal.aborted) throw err;
      });

    const dropped = Date.now();
    await Promise.all(
      Array.from({ length: bundles }, (_, b) =>
        cluster.admin.apply(BUNDLE_RESOURCE_TYPE, manifest(namespace, b, 0, 0, delay), { fieldManager: 'bench', force: true }),
      ),
    );
    const limit = Date.now() + delaySeconds * 1000 + 120_000;
    while (lateness.length < objects) {
      if (Date.now() > limit) {
        const left = (await cluster.admin.list(cluster.configMaps, namespace, { labelSelector: `${LABEL}=expiry` })).items;
        const stamped = left.filter((o) => o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined).length;
        throw new Error(
          `only ${lateness.length} of ${objects} countdowns ended within ${delaySeconds + 120} s (${left.length} left, ${stamped} of them stamped; the watch saw ${deadline.size} stamps)`,
        );
      }
      await sleep(100);
    }
    abort.abort();
    await watching;
    lateness.sort((a, b) => a - b);
    const result: ExpiryResult = {
      objects,
      delaySeconds,
      latenessMs: lateness,
      early,
      stampSeconds: (lastStampAt - dropped) / 1000,
      rawInFlight: RAW_IN_FLIGHT,
    };
    log(
      `  stamps written in ${result.stampSeconds.toFixed(2)} s; lateness min ${lateness[0] ?? NaN} ms, p50 ${percentile(lateness, 50)} ms, p99 ${percentile(lateness, 99)} ms, max ${lateness[lateness.length - 1] ?? NaN} ms, ${early} early`,
    );

    // The reference: the same number of ConfigMaps, each read fresh and deleted with preconditions by the bench.
    await operator.stop();
    operator = undefined;
    const rawNs = await createNamespace(cluster, 'bench-expiry-raw');
    const names = Array.from({ length: objects }, (_, i) => `raw-${i}`);
    await forEachConcurrently(objects, 32, async (i) => {
      await cluster.admin.create(cluster.configMaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: names[i], namespace: rawNs },
        data: { i: String(i) },
      });
    });
    const rawStarted = performance.now();
    const fresh = new Map(
      (await cluster.admin.list(cluster.configMaps, rawNs, { metadataOnly: true })).items.map((o) => [o.metadata.name, o]),
    );
    await forEachConcurrently(objects, RAW_IN_FLIGHT, async (i) => {
      const read = fresh.get(names[i] ?? '');
      await cluster.admin.delete(cluster.configMaps, rawNs, names[i] ?? '', {
        uid: read?.metadata.uid ?? '',
        ...(read?.metadata.resourceVersion ? { resourceVersion: read.metadata.resourceVersion } : {}),
      });
    });
    result.rawSeconds = (performance.now() - rawStarted) / 1000;
    log(
      `  reference: one fresh LIST, then ${objects} DELETEs with uid and resourceVersion preconditions, ${RAW_IN_FLIGHT} in flight, by the bench: ${result.rawSeconds.toFixed(2)} s`,
    );
    return result;
  } finally {
    abort.abort();
    await operator?.stop();
    client?.close();
    cluster.stop();
  }
}
