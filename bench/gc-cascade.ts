/**
 * Garbage-collection cascades: one owner ConfigMap with N dependent
 * ConfigMaps, the owner deleted in the background, timed from the owner's
 * DELETE returning to the last dependent's DELETED watch event (seen on an
 * unthrottled admin client, so observing never spends the budget under test).
 *
 * - At equal client QPS: our collector (transport qps/burst) against
 *   kube-controller-manager's (--kube-api-qps/--kube-api-burst), each on a
 *   control plane of its own so that only one collector ever runs.
 * - Unthrottled: our collector with no client limit against the apiserver's
 *   raw rate for the same DELETEs (uid preconditions, high concurrency,
 *   through our transport), on one control plane, one after the other.
 *
 * Requests per object come from the apiserver's own counters
 * (apiserver_request_total), so both collectors are counted the same way.
 */
import { GarbageCollector } from '../src/controllers/gc/collector.js';
import { KubeClient, type EventInput } from '../src/kube/client.js';
import { systemClock } from '../src/kube/clock.js';
import { RequestBudget } from '../src/kube/request-budget.js';
import {
  DeletionWatch,
  createNamespace,
  createOwnerWithDependents,
  forEachConcurrently,
  grantControllerManagerGcRole,
  sleep,
  startBenchCluster,
  type BenchCluster,
} from './cluster.js';
import type { BenchConfig } from './config.js';
import { median, type Row } from './table.js';

export interface CascadeRun {
  seconds: number;
  deletesPerSecond: number;
  /** Requests the apiserver served during the run, by verb and resource (e.g. "DELETE configmaps"), minus the bench's own. */
  requests: Record<string, number>;
}

export interface CascadeResult {
  label: string;
  runs: CascadeRun[];
  /** A stable name for results.json (bench/figures.ts), where a row has one. */
  id?: string;
}

/** apiserver_request_total summed by "VERB resource" (all codes). */
export async function requestCounters(cluster: BenchCluster): Promise<Map<string, number>> {
  const text = await cluster.admin.raw('GET', '/metrics');
  const counts = new Map<string, number>();
  if (typeof text !== 'string') return counts;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const resource = /[{,]resource="([^"]*)"/.exec(line)?.[1] ?? '';
    const verb = /[{,]verb="([^"]*)"/.exec(line)?.[1] ?? '';
    const subresource = /[{,]subresource="([^"]*)"/.exec(line)?.[1] ?? '';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!resource || subresource || !Number.isFinite(value)) continue;
    const key = `${verb} ${resource}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

export function counterDelta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [key, value] of after) {
    const d = value - (before.get(key) ?? 0);
    if (d > 0) delta[key] = d;
  }
  return delta;
}

/** Requests the bench itself makes around a cascade (owner DELETE, list + watch, the metrics scrapes), removed from the counts. */
const BENCH_OWN_REQUESTS: Record<string, number> = { 'DELETE configmaps': 1, 'LIST configmaps': 1, 'WATCH configmaps': 1 };

/** One cascade: owner + n dependents created, collector given time to see them, owner deleted, dependents timed until gone. */
async function cascade(
  cluster: BenchCluster,
  namespace: string,
  label: string,
  n: number,
  settle: () => Promise<void>,
  timeoutMs: number,
): Promise<CascadeRun> {
  const { owner } = await createOwnerWithDependents(cluster, namespace, label, n, label);
  await settle();
  const watch = await DeletionWatch.start(cluster, namespace, label, n);
  const before = await requestCounters(cluster);
  const started = performance.now();
  try {
    await cluster.admin.delete(cluster.configMaps, namespace, owner.metadata.name, {
      uid: owner.metadata.uid,
      propagationPolicy: 'Background',
    });
    const lastGone = await watch.gone(timeoutMs);
    const seconds = (lastGone - started) / 1000;
    // Give in-flight work (events after the last DELETE) a moment to land in the counters.
    await sleep(500);
    const requests = counterDelta(before, await requestCounters(cluster));
    for (const [key, own] of Object.entries(BENCH_OWN_REQUESTS)) {
      const count = requests[key];
      if (count === undefined) continue;
      if (count > own) requests[key] = count - own;
      else delete requests[key];
    }
    return { seconds, deletesPerSecond: n / seconds, requests };
  } finally {
    await watch.close();
  }
}

/** A small cascade first: proves the collector runs and watches ConfigMaps before anything is timed. */
let warmUps = 0;
export async function warmUp(cluster: BenchCluster, namespace: string, timeoutMs: number): Promise<void> {
  const label = `warmup-${warmUps++}`;
  const { owner } = await createOwnerWithDependents(cluster, namespace, label, 5, label);
  const watch = await DeletionWatch.start(cluster, namespace, label, 5);
  await cluster.admin.delete(cluster.configMaps, namespace, owner.metadata.name, {
    uid: owner.metadata.uid,
    propagationPolicy: 'Background',
  });
  await watch.gone(timeoutMs);
}

/** Waits until our collector's graph holds every object of a set (it has seen all the dependents). */
export async function graphHas(
  gc: GarbageCollector,
  cluster: BenchCluster,
  namespace: string,
  label: string,
  timeoutMs: number,
): Promise<void> {
  const { items } = await cluster.admin.list(cluster.configMaps, namespace, {
    labelSelector: `bench.bundlesmith.dev/set=${label}`,
    metadataOnly: true,
  });
  const deadline = Date.now() + timeoutMs;
  while (!items.every((o) => gc.engine.graph.get(o.metadata.uid)?.observed)) {
    if (Date.now() > deadline) throw new Error(`the collector's graph did not see the ${label} objects within ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

export interface RunningCollector {
  gc: GarbageCollector;
  client: KubeClient;
  stop(): Promise<void>;
}

/**
 * "What if" variants of where the collector's GarbageCollected Events go:
 * through a client of their own (so the limited budget is spent on DELETEs
 * only), or nowhere (what an apiserver pays for them). The operator ships
 * with `same-client`.
 */
export type EventRouting = 'same-client' | 'own-client' | 'drop';

class EventRoutingClient extends KubeClient {
  constructor(
    main: KubeClient,
    private readonly events: KubeClient | undefined,
  ) {
    super(main.transport);
  }

  override createEvent(input: EventInput): Promise<string> {
    return this.events ? this.events.createEvent(input) : Promise.resolve('dropped');
  }

  override updateEventSeries(...a: Parameters<KubeClient['updateEventSeries']>): Promise<void> {
    return this.events ? this.events.updateEventSeries(...a) : Promise.resolve();
  }
}

export async function startOurCollector(
  cluster: BenchCluster,
  workers: number,
  limit: { qps: number; burst: number } | undefined,
  events: EventRouting = 'same-client',
): Promise<RunningCollector> {
  // As the operator builds its clients (process-clients.ts): 64 request sockets (watches have their own pool),
  // Events on a client of their own, and --qps/--burst one budget for both (the whole process).
  const budget = limit ? new RequestBudget(systemClock, limit) : undefined;
  const main = await cluster.client({ maxSockets: 64, ...(budget ? { limiter: budget } : {}) });
  const eventsClient =
    events === 'own-client' ? await cluster.client({ maxSockets: 8, ...(budget ? { limiter: budget } : {}) }) : undefined;
  const client = events === 'same-client' ? main : new EventRoutingClient(main, eventsClient);
  // As the operator runs it (--gc=cluster), with its worker count.
  const gc = new GarbageCollector(client, { mode: 'cluster', workers });
  await gc.start();
  await gc.waitForSync();
  return {
    gc,
    client,
    stop: async () => {
      await gc.stop();
      main.close();
      eventsClient?.close();
    },
  };
}

/** Time for a token bucket of this size to fill up again (so every run starts with a full burst, for both collectors). */
export function refillMs(qps: number, burst: number): number {
  return Math.ceil((burst / qps) * 1000) + 500;
}

export async function equalQpsCascade(config: BenchConfig, log: (line: string) => void): Promise<CascadeResult[]> {
  const { n, qps, burst, runs } = config.cascade;
  const timeoutMs = Math.max(120_000, ((n * 4) / qps) * 1000);
  const results: CascadeResult[] = [];

  const variants = [
    {
      eventsApart: true,
      result: {
        id: 'ours',
        label: `bundlesmith as shipped (qps ${qps}, burst ${burst}, ${config.gcWorkers} workers; Events on a client of their own, one budget for the process)`,
        runs: [],
      } as CascadeResult,
    },
    ...(config.cascade.eventsApartVariant
      ? [
          {
            eventsApart: false,
            result: {
              id: 'ours-events-shared',
              label: `bundlesmith, Events through the collector's own client (the wiring before c0dcd27)`,
              runs: [],
            } as CascadeResult,
          },
        ]
      : []),
  ];
  log(`cascade at ${qps} qps: our collector (fresh control plane)`);
  {
    const cluster = await startBenchCluster();
    try {
      const namespace = await createNamespace(cluster, 'bench-cascade');
      for (let r = 0; r < runs; r++) {
        for (const variant of variants) {
          const collector = await startOurCollector(
            cluster,
            config.gcWorkers,
            { qps, burst },
            variant.eventsApart ? 'own-client' : 'same-client',
          );
          try {
            await warmUp(cluster, namespace, 60_000);
            const label = `ours-${variant.eventsApart ? 'ev' : 'as'}-${r}`;
            const run = await cascade(
              cluster,
              namespace,
              label,
              n,
              async () => {
                await graphHas(collector.gc, cluster, namespace, label, 60_000);
                await sleep(refillMs(qps, burst));
              },
              timeoutMs,
            );
            log(
              `  ${variant.result.label} run ${r + 1}: ${run.seconds.toFixed(2)} s, ${run.deletesPerSecond.toFixed(0)} deletes/s ${JSON.stringify(run.requests)}`,
            );
            variant.result.runs.push(run);
          } finally {
            await collector.stop();
          }
        }
      }
    } finally {
      cluster.stop();
    }
  }
  results.push(...variants.map((v) => v.result));

  // kube-controller-manager doubles the QPS of its collector's client
  // (cmd/kube-controller-manager: "each object deletion takes two API calls,
  // so to get |config.QPS| deletion rate we need to allow 2x more requests"):
  // at --kube-api-qps=Q it may send 2Q requests/s. So it runs twice: with the
  // same flag value as ours, and with half of it (the same request budget).
  const kcmSettings = [
    { id: 'kcm-same-flag', flagQps: qps, label: `kube-controller-manager (--kube-api-qps=${qps}: its GC client gets ${2 * qps} qps)` },
    {
      id: 'kcm-same-budget',
      flagQps: qps / 2,
      label: `kube-controller-manager (--kube-api-qps=${qps / 2}: its GC client gets ${qps} qps, the same budget)`,
    },
  ];
  for (const setting of kcmSettings) {
    log(`cascade: ${setting.label} (fresh control plane)`);
    const kcm: CascadeResult = { id: setting.id, label: `${setting.label}, burst ${burst}`, runs: [] };
    const cluster = await startBenchCluster({
      withGarbageCollector: true,
      controllerManagerArgs: [`--kube-api-qps=${setting.flagQps}`, `--kube-api-burst=${burst}`],
    });
    try {
      await grantControllerManagerGcRole(cluster);
      const namespace = await createNamespace(cluster, 'bench-cascade');
      // Its informers start, fail on RBAC, back off and relist: give it time.
      await warmUp(cluster, namespace, 180_000);
      for (let r = 0; r < runs; r++) {
        const run = await cascade(
          cluster,
          namespace,
          `kcm-${r}`,
          n,
          async () => {
            // No way to ask kube-controller-manager what its graph holds: its
            // watch delivers the creates within a second on loopback; wait more.
            await sleep(2_000 + refillMs(setting.flagQps * 2, burst));
          },
          timeoutMs,
        );
        log(`  run ${r + 1}: ${run.seconds.toFixed(2)} s, ${run.deletesPerSecond.toFixed(0)} deletes/s ${JSON.stringify(run.requests)}`);
        kcm.runs.push(run);
      }
    } finally {
      cluster.stop();
    }
    results.push(kcm);
  }
  return results;
}

export async function unthrottledCascade(config: BenchConfig, log: (line: string) => void): Promise<CascadeResult[]> {
  const { unthrottledN: n, unthrottledRuns: runs, rawConcurrency } = config.cascade;
  const timeoutMs = 180_000;
  const raw: CascadeResult = { id: 'raw', label: `raw parallel DELETE (${rawConcurrency} in flight, uid preconditions)`, runs: [] };
  const variants = [
    ...[...new Set([config.gcWorkers, config.gcWorkersHigh])].map((workers) => ({ workers, events: 'on' as const })),
    ...(config.cascade.eventsApartVariant
      ? [...new Set([config.gcWorkers, config.gcWorkersHigh])].map((workers) => ({ workers, events: 'off' as const }))
      : []),
  ];
  const ours = variants.map((v): CascadeResult => ({
    id: `ours-${v.workers === config.gcWorkers ? 'default' : 'high'}-workers${v.events === 'on' ? '' : '-no-events'}`,
    label:
      v.events === 'on'
        ? `bundlesmith, no client limit (${v.workers} workers)`
        : `bundlesmith, no Event per deletion (what if; ${v.workers} workers)`,
    runs: [],
  }));

  log('unthrottled: raw DELETE rate and our collector (one fresh control plane, one at a time)');
  const cluster = await startBenchCluster();
  try {
    const namespace = await createNamespace(cluster, 'bench-unthrottled');
    const deleter = await cluster.client({ maxSockets: Infinity });
    try {
      for (let r = 0; r < runs; r++) {
        // Raw: the same objects (dependents of an owner), deleted directly.
        const label = `raw-${r}`;
        const { dependents } = await createOwnerWithDependents(cluster, namespace, label, n, label);
        await sleep(1_000);
        const watch = await DeletionWatch.start(cluster, namespace, label, n);
        const before = await requestCounters(cluster);
        const started = performance.now();
        await forEachConcurrently(dependents.length, rawConcurrency, async (i) => {
          const d = dependents[i];
          if (d)
            await deleter.delete(cluster.configMaps, namespace, d.metadata.name, { uid: d.metadata.uid, propagationPolicy: 'Background' });
        });
        const seconds = ((await watch.gone(timeoutMs)) - started) / 1000;
        await sleep(500);
        const requests = counterDelta(before, await requestCounters(cluster));
        raw.runs.push({ seconds, deletesPerSecond: n / seconds, requests });
        log(`  raw run ${r + 1}: ${seconds.toFixed(2)} s, ${(n / seconds).toFixed(0)} deletes/s`);

        for (const [i, { workers, events }] of variants.entries()) {
          const collector = await startOurCollector(cluster, workers, undefined, events === 'off' ? 'drop' : 'same-client');
          try {
            await warmUp(cluster, namespace, 60_000);
            const ourLabel = `ours-${workers}-${events}-${r}`;
            const run = await cascade(
              cluster,
              namespace,
              ourLabel,
              n,
              () => graphHas(collector.gc, cluster, namespace, ourLabel, 60_000),
              timeoutMs,
            );
            ours[i]?.runs.push(run);
            log(
              `  ${ours[i]?.label ?? ''} run ${r + 1}: ${run.seconds.toFixed(2)} s, ${run.deletesPerSecond.toFixed(0)} deletes/s ${JSON.stringify(run.requests)}`,
            );
          } finally {
            await collector.stop();
          }
        }
      }
    } finally {
      deleter.close();
    }
  } finally {
    cluster.stop();
  }
  return [raw, ...ours];
}

export function requestsPerObject(run: CascadeRun, n: number): string {
  const parts = Object.entries(run.requests)
    .filter(
      ([key]) =>
        !key.startsWith('WATCH') &&
        !key.startsWith('LIST') &&
        !key.endsWith(' ') &&
        (key.endsWith(' configmaps') || key.endsWith(' events')),
    )
    .map(([key, count]) => `${key} ${(count / n).toFixed(2)}`);
  return parts.join(', ') || '-';
}

/** The run with the median time (the better of two when there are two). */
export function representative(result: CascadeResult): CascadeRun | undefined {
  const sorted = [...result.runs].sort((a, b) => a.seconds - b.seconds);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export function cascadeRows(results: CascadeResult[], n: number): Row[] {
  return results.map((r) => {
    const rep = representative(r);
    return [
      r.label,
      String(n),
      r.runs.map((x) => x.seconds.toFixed(2)).join(' / '),
      rep ? rep.seconds.toFixed(2) : '-',
      rep ? rep.deletesPerSecond.toFixed(0) : '-',
      rep ? requestsPerObject(rep, n) : '-',
    ];
  });
}

export const CASCADE_HEADER: Row = [
  'collector',
  'dependents',
  'runs (s)',
  'reported (s)',
  'deletes/s',
  'requests per object (apiserver counters)',
];

export function ratio(a: CascadeResult | undefined, b: CascadeResult | undefined): number | undefined {
  const ra = a && representative(a);
  const rb = b && representative(b);
  return ra && rb ? ra.deletesPerSecond / rb.deletesPerSecond : undefined;
}

export { median };
