/**
 * Heap bytes per object the garbage collector tracks, measured as
 * `process.memoryUsage().heapUsed` deltas after forced full GCs (the process
 * runs with --expose-gc).
 *
 * Synthetic: metadata-only objects (Pods owned by ReplicaSets, one owner per
 * `objectsPerOwner` objects, spread over 100 namespaces) are serialised and
 * parsed one by one, as the watch stream does, so every string is a fresh
 * heap string as it would be in production. They go through the real
 * SupervisedInformer (storeAs: identityStub, as collector.ts configures it)
 * over a client that serves them from memory, with the collector's handlers
 * feeding the real GcEngine: the retained heap is exactly the informer stores
 * plus the graph. Two more rows split it: the graph alone (GcEngine fed
 * directly) and the stores alone.
 *
 * Real: the whole GarbageCollector on a real apiserver, before and after
 * `realObjects` ConfigMaps are created (again one owner per ten).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { GarbageCollector } from '../src/controllers/gc/collector.js';
import { GcEngine, type GcApi } from '../src/controllers/gc/engine.js';
import type { ResourceResolver } from '../src/controllers/gc/owner-verifier.js';
import { KubeClient, type ListOptions, type ListResult, type WatchOptions } from '../src/kube/client.js';
import type { KubeTransport } from '../src/kube/transport.js';
import type { KubeObject, ResourceType, WatchEvent } from '../src/kube/types.js';
import { systemClock } from '../src/runtime/clock.js';
import { SupervisedInformer, identityStub } from '../src/runtime/informer.js';
import { createNamespace, forEachConcurrently, sleep, startBenchCluster } from './cluster.js';

const POD: ResourceType = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true, verbs: ['list', 'watch', 'delete'] };
const REPLICA_SET: ResourceType = { group: 'apps', version: 'v1', apiVersion: 'apps/v1', kind: 'ReplicaSet', plural: 'replicasets', namespaced: true, verbs: ['list', 'watch', 'delete'] };

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

function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex').slice(0, bytes + 1);
}

/**
 * The synthetic cluster as two lists of JSON lines (ReplicaSets, Pods): kept
 * as text, parsed on demand, so the measured heap holds no generator state
 * beyond these strings (which exist before the baseline is taken).
 */
interface SyntheticLists {
  replicaSets: string[];
  pods: string[];
}

function syntheticLists(total: number, objectsPerOwner: number): SyntheticLists {
  const replicaSets: string[] = [];
  const pods: string[] = [];
  let rv = 1_000_000;
  const created = '2026-11-01T10:00:00Z';
  const managedFields = [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time: created, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } } }];
  for (let i = 0; replicaSets.length + pods.length < total; i++) {
    const namespace = `team-${i % 100}`;
    const app = `service-${i}`;
    const hash = hex(9);
    const rsName = `${app}-${hash}`;
    const rsUid = randomUUID();
    replicaSets.push(JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: rsName, namespace, uid: rsUid, resourceVersion: String(rv++), generation: 1, creationTimestamp: created, labels: { app, 'pod-template-hash': hash }, managedFields },
    }));
    for (let d = 1; d < objectsPerOwner && replicaSets.length + pods.length < total; d++) {
      pods.push(JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${rsName}-${hex(4)}`,
          namespace,
          uid: randomUUID(),
          resourceVersion: String(rv++),
          creationTimestamp: created,
          labels: { app, 'pod-template-hash': hash },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rsName, uid: rsUid, controller: true, blockOwnerDeletion: true }],
          managedFields,
        },
      }));
    }
  }
  return { replicaSets, pods };
}

/** Serves a synthetic list to a SupervisedInformer: one list, then a watch that stays quiet until stopped. */
class InMemoryListClient extends KubeClient {
  constructor(private readonly lines: ReadonlyMap<string, readonly string[]>) {
    // Never used: list and watch below are the only calls an informer makes.
    super(undefined as unknown as KubeTransport);
  }

  override list(rt: ResourceType, _namespace: string | undefined, _opts: ListOptions = {}): Promise<ListResult> {
    const lines = this.lines.get(rt.plural) ?? [];
    return Promise.resolve({ items: lines.map((line) => JSON.parse(line) as KubeObject), resourceVersion: '2000000' });
  }

  override watch(_rt: ResourceType, _namespace: string | undefined, _rv: string, opts: WatchOptions, _onEvent: (event: WatchEvent) => void): Promise<void> {
    return new Promise((resolve) => {
      if (opts.signal?.aborted) resolve();
      opts.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }
}

const unusedApi: GcApi = {
  tryGet: () => Promise.reject(new Error('not used: the memory benchmark never runs workers')),
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
}

type Holder = { release(): Promise<void>; graphNodes?: number };

/** Builds something that retains the synthetic objects; returns heap bytes per object retained. */
async function measure(what: string, total: number, build: () => Promise<Holder>): Promise<MemoryRow> {
  const before = await settledHeap();
  const holder = await build();
  const after = await settledHeap();
  const row: MemoryRow = { what, objects: total, bytesPerObject: (after - before) / total, ...(holder.graphNodes !== undefined ? { graphNodes: holder.graphNodes } : {}) };
  await holder.release();
  return row;
}

function newEngine(): GcEngine {
  return new GcEngine(unusedApi, staticResolver, { mode: 'cluster', clock: systemClock });
}

/** Owners first (as if the ReplicaSet informer synced first): the steady state, no virtual nodes. */
function feedEngine(engine: GcEngine, lists: SyntheticLists): void {
  let fed = 0;
  for (const line of [...lists.replicaSets, ...lists.pods]) {
    engine.observed(JSON.parse(line) as KubeObject);
    // The writer drains between socket reads; a batch stands in for that.
    if (++fed % 1000 === 0) engine.drainChanges();
  }
  engine.drainChanges();
}

async function startInformers(lists: SyntheticLists, engine: GcEngine | undefined): Promise<SupervisedInformer[]> {
  const client = new InMemoryListClient(new Map([['replicasets', lists.replicaSets], ['pods', lists.pods]]));
  const informers = [REPLICA_SET, POD].map((rt) => {
    const informer = new SupervisedInformer(client, rt, { metadataOnly: true, storeAs: identityStub });
    if (engine) {
      // As collector.ts wires them: handlers only hand objects to the writer.
      informer.addHandler({
        onAdd: (obj) => engine.observed(obj),
        onUpdate: (_old, obj) => engine.observed(obj),
        onDelete: (obj) => engine.deleted(obj),
      });
    }
    return informer;
  });
  // ReplicaSets first, then Pods (owners known before their dependents).
  for (const informer of informers) {
    informer.start();
    await informer.waitForSync();
    engine?.drainChanges();
  }
  return informers;
}

export async function syntheticMemory(total: number, objectsPerOwner: number, log: (line: string) => void): Promise<MemoryRow[]> {
  const lists = syntheticLists(total, objectsPerOwner);
  const rows: MemoryRow[] = [];
  for (let repeat = 0; repeat < 2; repeat++) {
    const graphOnly = await measure('graph only (GcEngine fed directly)', total, () => {
      const engine = newEngine();
      feedEngine(engine, lists);
      return Promise.resolve({ graphNodes: engine.graph.size, release: () => engine.stop() });
    });
    const storesOnly = await measure('informer stores only (identityStub)', total, async () => {
      const informers = await startInformers(lists, undefined);
      return { release: async () => void (await Promise.all(informers.map((i) => i.stop()))) };
    });
    const both = await measure('collector total: informer stores + graph', total, async () => {
      const engine = newEngine();
      const informers = await startInformers(lists, engine);
      return {
        graphNodes: engine.graph.size,
        release: async () => {
          await Promise.all(informers.map((i) => i.stop()));
          await engine.stop();
        },
      };
    });
    for (const row of [graphOnly, storesOnly, both]) log(`  ${row.what}: ${row.bytesPerObject.toFixed(0)} bytes/object (run ${repeat + 1})`);
    rows.push(graphOnly, storesOnly, both);
  }
  // Report the lower of the two runs per row (GC timing only ever adds noise upwards).
  const best = new Map<string, MemoryRow>();
  for (const row of rows) {
    const seen = best.get(row.what);
    if (!seen || row.bytesPerObject < seen.bytesPerObject) best.set(row.what, row);
  }
  return [...best.values()];
}

/** The whole GarbageCollector on a real apiserver: heap after sync, then after `count` more objects are in its graph. */
export async function realMemory(count: number, objectsPerOwner: number, log: (line: string) => void): Promise<MemoryRow> {
  const cluster = await startBenchCluster();
  const client = await cluster.client({ maxSockets: Infinity });
  const gc = new GarbageCollector(client, { mode: 'cluster', workers: 16 });
  try {
    const namespace = await createNamespace(cluster, 'bench-memory');
    await gc.start();
    await gc.waitForSync();
    const nodesBefore = gc.graphSize();
    const before = await settledHeap();
    const owners = Math.ceil(count / objectsPerOwner);
    const ownerRefs: { name: string; uid: string }[] = [];
    await forEachConcurrently(owners, 32, async (i) => {
      const owner = await cluster.admin.create(cluster.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `owner-${i}`, namespace }, data: { role: 'owner' } });
      ownerRefs[i] = { name: owner.metadata.name, uid: owner.metadata.uid };
    });
    const dependents = count - owners;
    await forEachConcurrently(dependents, 32, async (i) => {
      const owner = ownerRefs[i % owners];
      if (!owner) return;
      await cluster.admin.create(cluster.configMaps, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `dep-${i}`, namespace, labels: { app: `service-${i % owners}` }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true }] },
        data: { index: String(i) },
      });
    });
    ownerRefs.length = 0;
    const deadline = Date.now() + 120_000;
    while (gc.graphSize() < nodesBefore + count) {
      if (Date.now() > deadline) throw new Error(`the collector's graph reached ${gc.graphSize() - nodesBefore} of ${count} new objects`);
      await sleep(100);
    }
    // A second sample, a little later, for the lower of two (GC timing only adds upwards).
    const after = Math.min(await settledHeap(), (await sleep(1_000), await settledHeap()));
    const row: MemoryRow = { what: 'collector total on a real apiserver (GarbageCollector, ConfigMaps)', objects: count, bytesPerObject: (after - before) / count, graphNodes: gc.graphSize() };
    log(`  real: ${row.bytesPerObject.toFixed(0)} bytes/object over ${count} objects`);
    return row;
  } finally {
    await gc.stop();
    client.close();
    cluster.stop();
  }
}
