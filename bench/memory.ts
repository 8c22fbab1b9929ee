/**
 * Heap bytes per object the garbage collector tracks, measured as
 * `process.memoryUsage().heapUsed` deltas after forced full GCs (the process
 * runs with --expose-gc).
 *
 * Synthetic: metadata-only objects (Pods owned by ReplicaSets, one owner per
 * `objectsPerOwner` objects, spread over 100 namespaces) made on demand from
 * their index (nothing about them is held before or between the samples),
 * each page serialised and parsed as the list or watch stream delivers it,
 * so every string is a fresh heap string as in production. They go through
 * the real SupervisedInformer, storeless with the graph as its index (as
 * collector.ts configures it), into the real GcEngine and its writer loop:
 * the retained heap is the graph, which is all the collector keeps. A second
 * row feeds the GcEngine directly (the graph alone). Sizes: 10k, the
 * configured size (100k) and a large one (1M).
 *
 * Real: the whole GarbageCollector on a real apiserver, before and after
 * `realObjects` ConfigMaps are created (again one owner per ten, by a
 * process of their own: create-objects.ts); on the
 * same control plane kube-controller-manager runs with only its garbage
 * collector, and its resident-set growth over the same objects is the
 * reference (a Go process cannot be asked for a collected heap; its RSS
 * and ours are both given).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GarbageCollector } from '../src/controllers/gc/collector.js';
import { GcEngine, type GcApi } from '../src/controllers/gc/engine.js';
import type { ResourceResolver } from '../src/controllers/gc/owner-verifier.js';
import { KubeClient, type ListOptions, type WatchOptions } from '../src/kube/client.js';
import type { KubeTransport } from '../src/kube/transport.js';
import type { KubeObject, ResourceType, WatchEvent } from '../src/kube/types.js';
import { systemClock } from '../src/kube/clock.js';
import { SupervisedInformer } from '../src/runtime/informer.js';
import {
  controllerManagerLog,
  createNamespace,
  grantControllerManagerGcRole,
  sleep,
  startBenchCluster,
  type BenchCluster,
} from './cluster.js';

const POD: ResourceType = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
  verbs: ['list', 'watch', 'delete'],
};
const REPLICA_SET: ResourceType = {
  group: 'apps',
  version: 'v1',
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  plural: 'replicasets',
  namespaced: true,
  verbs: ['list', 'watch', 'delete'],
};

function forceGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('the memory benchmark needs node --expose-gc (bench/main.ts re-executes itself with it)');
  for (let i = 0; i < 4; i++) gc();
}

export async function settledHeap(): Promise<number> {
  // Let pending callbacks and timers release what they hold, then collect.
  await sleep(50);
  forceGc();
  await sleep(10);
  forceGc();
  return process.memoryUsage().heapUsed;
}

/** 32 well-mixed bits of (a, b) (murmur3's finaliser): the synthetic UIDs and hashes, reproducible from an index. */
function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** A UUID-shaped UID, a different one for each (kind, index). */
function syntheticUid(kind: number, index: number): string {
  const a = hex32(mix(kind, index));
  const b = hex32(mix(kind + 1, index));
  const c = hex32(mix(kind + 2, index));
  const d = hex32(mix(kind + 3, index));
  return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-a${c.slice(1, 4)}-${c.slice(4)}${d}`;
}

const CREATED = '2026-11-01T10:00:00Z';
const MANAGED_FIELDS = [
  {
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'v1',
    time: CREATED,
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
  },
];
const RS_KIND = 10;
const POD_KIND = 20;

/**
 * A synthetic cluster made from indices: `owners` ReplicaSets and the rest
 * Pods, each Pod owned by ReplicaSet (index mod owners), as the API serves
 * them (labels, managedFields). Nothing is stored: an object is built when
 * asked for.
 */
class SyntheticCluster {
  readonly owners: number;
  readonly pods: number;

  constructor(
    readonly total: number,
    objectsPerOwner: number,
  ) {
    this.owners = Math.ceil(total / objectsPerOwner);
    this.pods = total - this.owners;
  }

  private ownerName(i: number): string {
    return `service-${i}-${hex32(mix(RS_KIND + 7, i))}${(mix(RS_KIND + 8, i) & 0xff).toString(16).padStart(2, '0')}`;
  }

  replicaSet(i: number): object {
    const name = this.ownerName(i);
    return {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name,
        namespace: `team-${i % 100}`,
        uid: syntheticUid(RS_KIND, i),
        resourceVersion: String(1_000_000 + i),
        generation: 1,
        creationTimestamp: CREATED,
        labels: { app: `service-${i}`, 'pod-template-hash': name.slice(-10) },
        managedFields: MANAGED_FIELDS,
      },
    };
  }

  pod(j: number): object {
    const owner = j % this.owners;
    const ownerName = this.ownerName(owner);
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${ownerName}-${hex32(mix(POD_KIND + 7, j)).slice(0, 5)}`,
        namespace: `team-${owner % 100}`,
        uid: syntheticUid(POD_KIND, j),
        resourceVersion: String(1_000_000 + this.owners + j),
        creationTimestamp: CREATED,
        labels: { app: `service-${owner}`, 'pod-template-hash': ownerName.slice(-10) },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: ownerName,
            uid: syntheticUid(RS_KIND, owner),
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        managedFields: MANAGED_FIELDS,
      },
    };
  }

  count(rt: ResourceType): number {
    return rt === REPLICA_SET ? this.owners : this.pods;
  }

  /** Objects [from, to) of a resource, each parsed from its own JSON text (fresh strings, as a list delivers them). */
  page(rt: ResourceType, from: number, to: number): KubeObject[] {
    const items: KubeObject[] = [];
    for (let i = from; i < to; i++)
      items.push(JSON.parse(JSON.stringify(rt === REPLICA_SET ? this.replicaSet(i) : this.pod(i))) as KubeObject);
    return items;
  }
}

const PAGE = 500;

/** Serves the synthetic cluster to SupervisedInformers: one list, a page at a time, then a watch that stays quiet until stopped. */
class InMemoryListClient extends KubeClient {
  constructor(private readonly cluster: SyntheticCluster) {
    // Never used: listPages and watch below are the only calls an informer makes.
    super(undefined as unknown as KubeTransport);
  }

  override async listPages(
    rt: ResourceType,
    _namespace: string | undefined,
    _opts: ListOptions,
    onPage: (items: KubeObject[]) => void,
  ): Promise<string> {
    const count = this.cluster.count(rt);
    for (let from = 0; from < count; from += PAGE) {
      onPage(this.cluster.page(rt, from, Math.min(count, from + PAGE)));
      // The next page comes from the network: the graph writer runs meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return '3000000';
  }

  override watch(
    _rt: ResourceType,
    _namespace: string | undefined,
    _rv: string,
    opts: WatchOptions,
    _onEvent: (event: WatchEvent) => void,
  ): Promise<void> {
    return new Promise((resolve) => {
      if (opts.signal?.aborted) resolve();
      opts.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }
}

const unusedApi: GcApi = {
  tryGet: () => Promise.reject(new Error('not used: the memory benchmark holds the workers')),
  patch: () => Promise.reject(new Error('not used')),
  delete: () => Promise.reject(new Error('not used')),
  createEvent: () => Promise.resolve('unused'),
  updateEventSeries: () => Promise.resolve(),
};

const staticResolver: ResourceResolver = {
  resolve: (apiVersion, kind) => Promise.resolve([POD, REPLICA_SET].find((rt) => rt.apiVersion === apiVersion && rt.kind === kind)),
};

export interface MemoryRow {
  what: string;
  objects: number;
  bytesPerObject: number;
  /** Graph nodes after feeding (objects, plus any virtual owners). */
  graphNodes?: number;
  /** Real apiserver only: our process's resident-set growth per object. */
  rssBytesPerObject?: number;
  /** Real apiserver only: kube-controller-manager's (garbage collector only) resident-set growth per object, over the same objects. */
  referenceRssBytesPerObject?: number;
}

type Holder = { release(): Promise<void>; graphNodes?: number };

/** Builds something that retains the synthetic objects; returns heap bytes per object retained. */
async function measure(what: string, total: number, build: () => Promise<Holder>): Promise<MemoryRow> {
  const before = await settledHeap();
  const holder = await build();
  const after = await settledHeap();
  const row: MemoryRow = {
    what,
    objects: total,
    bytesPerObject: (after - before) / total,
    ...(holder.graphNodes !== undefined ? { graphNodes: holder.graphNodes } : {}),
  };
  await holder.release();
  return row;
}

function newEngine(): GcEngine {
  return new GcEngine(unusedApi, staticResolver, { mode: 'cluster', clock: systemClock });
}

/** Owners first (as if the ReplicaSet informer synced first): the steady state, no virtual nodes. */
function feedEngine(engine: GcEngine, cluster: SyntheticCluster): void {
  for (const rt of [REPLICA_SET, POD]) {
    const count = cluster.count(rt);
    for (let from = 0; from < count; from += PAGE) {
      for (const obj of cluster.page(rt, from, Math.min(count, from + PAGE))) engine.observed(obj);
      engine.drainChanges();
    }
  }
}

/** The collector's wiring: storeless informers whose index is the graph (as collector.ts starts them), the writer loop running, workers held. */
async function startCollectorParts(cluster: SyntheticCluster): Promise<{ engine: GcEngine; informers: SupervisedInformer[] }> {
  const engine = newEngine();
  engine.setSyncBarrier({ phase: 'held', waitingFor: ['the memory benchmark'] });
  engine.run(1, 1);
  const client = new InMemoryListClient(cluster);
  const informers = [REPLICA_SET, POD].map(
    (rt, i) =>
      new SupervisedInformer(client, rt, {
        metadataOnly: true,
        index: {
          observed: (obj) => engine.observed(obj, i + 1),
          deleted: (obj) => engine.deleted(obj),
          listed: (uids) => engine.listed(i + 1, uids),
        },
      }),
  );
  // ReplicaSets first, then Pods (owners known before their dependents).
  for (const informer of informers) {
    informer.start();
    await informer.waitForSync();
  }
  while (engine.pendingChanges() > 0) await sleep(10);
  return { engine, informers };
}

export interface SyntheticMemoryOptions {
  /** Sizes to measure, e.g. 10k, 100k, 1M (0s are skipped). */
  sizes: readonly number[];
  objectsPerOwner: number;
}

export async function syntheticMemory(options: SyntheticMemoryOptions, log: (line: string) => void): Promise<MemoryRow[]> {
  const out: MemoryRow[] = [];
  for (const total of [...new Set(options.sizes)].filter((n) => n > 0).sort((a, b) => a - b)) {
    const cluster = new SyntheticCluster(total, options.objectsPerOwner);
    const rows: MemoryRow[] = [];
    // Two runs below 1M objects, for the lower of two (GC timing only ever adds noise upwards); one at 1M and beyond.
    const repeats = total >= 1_000_000 ? 1 : 2;
    for (let repeat = 0; repeat < repeats; repeat++) {
      const graphOnly = await measure('graph only (GcEngine fed directly)', total, () => {
        const engine = newEngine();
        feedEngine(engine, cluster);
        return Promise.resolve({ graphNodes: engine.graph.size, release: () => engine.stop() });
      });
      const collectorTotal = await measure('collector total: storeless informers + graph', total, async () => {
        const { engine, informers } = await startCollectorParts(cluster);
        return {
          graphNodes: engine.graph.size,
          release: async () => {
            await Promise.all(informers.map((i) => i.stop()));
            await engine.stop();
          },
        };
      });
      for (const row of [graphOnly, collectorTotal])
        log(`  ${total} objects, ${row.what}: ${row.bytesPerObject.toFixed(0)} bytes/object (run ${repeat + 1})`);
      rows.push(graphOnly, collectorTotal);
    }
    const best = new Map<string, MemoryRow>();
    for (const row of rows) {
      const seen = best.get(row.what);
      if (!seen || row.bytesPerObject < seen.bytesPerObject) best.set(row.what, row);
    }
    out.push(...best.values());
  }
  return out;
}

/** Waits for kube-controller-manager's "All resource monitors have synced" (its graph has listed everything), then a little more for its memory to settle. */
async function controllerManagerSynced(cluster: BenchCluster, log: (line: string) => void): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (!/resource monitors have synced/i.test(controllerManagerLog(cluster))) {
    if (Date.now() > deadline) {
      log('  kube-controller-manager did not log its collector synced within 180 s; sampling anyway');
      break;
    }
    await sleep(500);
  }
  await sleep(3_000);
}

/** Runs a program to its end (stderr passed through); rejects unless it exits 0. */
function runToCompletion(program: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${args[0] ?? program} exited with ${code}`))));
  });
}

/** Resident set of a process, in bytes (Linux /proc). */
function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** The lowest of a few samples a little apart (the Go runtime returns memory to the OS lazily; ours has young-generation slack). */
async function lowestResident(pid: number): Promise<number> {
  let lowest = Infinity;
  for (let i = 0; i < 5; i++) {
    lowest = Math.min(lowest, residentBytes(pid));
    await sleep(1_000);
  }
  return lowest;
}

/**
 * The whole GarbageCollector on a real apiserver: heap (and resident set)
 * after sync, then after `count` more objects are in its graph; beside it,
 * kube-controller-manager with only its garbage collector, over the same
 * objects.
 */
export async function realMemory(count: number, objectsPerOwner: number, log: (line: string) => void): Promise<MemoryRow> {
  const cluster = await startBenchCluster({ withGarbageCollector: true });
  const client = await cluster.client({ maxSockets: Infinity });
  const gc = new GarbageCollector(client, { mode: 'cluster', workers: 16 });
  try {
    const kcmPid = cluster.state.pids['kube-controller-manager'];
    if (kcmPid === undefined) throw new Error('kube-controller-manager did not start');
    await grantControllerManagerGcRole(cluster);
    const namespace = await createNamespace(cluster, 'bench-memory');
    await gc.start();
    await gc.waitForSync();
    // kube-controller-manager's informers failed on RBAC before the grant, back off and relist: wait until its collector says it synced.
    await controllerManagerSynced(cluster, log);
    const nodesBefore = gc.graphSize();
    const before = await settledHeap();
    const rssBefore = await lowestResident(process.pid);
    const kcmBefore = await lowestResident(kcmPid);
    // Created from a process of its own: this one's resident set holds the collector, not the creating.
    await runToCompletion(process.execPath, [
      join(dirname(fileURLToPath(import.meta.url)), 'create-objects.js'),
      cluster.state.kubeconfig,
      namespace,
      String(count),
      String(objectsPerOwner),
    ]);
    const deadline = Date.now() + 120_000;
    while (gc.graphSize() < nodesBefore + count) {
      if (Date.now() > deadline) throw new Error(`the collector's graph reached ${gc.graphSize() - nodesBefore} of ${count} new objects`);
      await sleep(100);
    }
    // kube-controller-manager's watch delivers the creates within a second on loopback; wait more, then sample both.
    await sleep(5_000);
    // A second sample, a little later, for the lower of two (GC timing only adds upwards).
    const after = Math.min(await settledHeap(), (await sleep(1_000), await settledHeap()));
    const rssAfter = await lowestResident(process.pid);
    const kcmAfter = await lowestResident(kcmPid);
    const row: MemoryRow = {
      what: 'collector total on a real apiserver (GarbageCollector, ConfigMaps)',
      objects: count,
      bytesPerObject: (after - before) / count,
      graphNodes: gc.graphSize(),
      rssBytesPerObject: (rssAfter - rssBefore) / count,
      referenceRssBytesPerObject: (kcmAfter - kcmBefore) / count,
    };
    log(
      `  real: ${row.bytesPerObject.toFixed(0)} heap bytes/object, ${(row.rssBytesPerObject ?? 0).toFixed(0)} RSS bytes/object over ${count} objects; kube-controller-manager (GC only): ${(row.referenceRssBytesPerObject ?? 0).toFixed(0)} RSS bytes/object`,
    );
    return row;
  } finally {
    await gc.stop();
    client.close();
    cluster.stop();
  }
}
