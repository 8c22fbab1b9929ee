/**
 * Foreground and orphan cascades (issue 13.6), ours against
 * kube-controller-manager at an equal total request budget, each collector
 * alone on a control plane of its own (as the background cascade in
 * gc-cascade.ts):
 *
 * - Foreground: an owner ConfigMap with `width` dependents, each with
 *   `leaves` dependents of its own (1 -> 50 -> 50x20 in a full run), every
 *   reference blocking; the owner deleted with propagationPolicy=Foreground.
 *   Done when the owner's DELETED event arrives (it goes last: its
 *   foregroundDeletion finalizer waits for every blocking dependent, and the
 *   middle level waits for its leaves the same way).
 * - Orphan: an owner with `orphanN` dependents deleted with
 *   propagationPolicy=Orphan. Done when the owner's DELETED event arrives
 *   (its orphan finalizer goes once every dependent's reference to it is
 *   removed); every dependent must then still exist, without that reference.
 *
 * Requests per object are the apiserver's counters (apiserver_request_total,
 * all verbs) over the run, minus the bench's own, divided by the dependents.
 */
import type { KubeObject } from '../src/kube/types.js';
import {
  DeletionWatch,
  createNamespace,
  forEachConcurrently,
  grantControllerManagerGcRole,
  sleep,
  startBenchCluster,
  type BenchCluster,
} from './cluster.js';
import type { BenchConfig } from './config.js';
import {
  counterDelta,
  graphHas,
  refillMs,
  requestCounters,
  startOurCollector,
  warmUp,
  type CascadeResult,
  type CascadeRun,
} from './gc-cascade.js';

export type PolicyShape = 'foreground' | 'orphan';

export interface PolicyResult {
  shape: PolicyShape;
  /** Objects the cascade acts on (every dependent, all levels; the owner not counted). */
  dependents: number;
  /** What was built, in words (e.g. "1 -> 50 -> 50x20"). */
  description: string;
  ours: CascadeResult;
  kcm: CascadeResult;
}

const SET = 'bench.bundlesmith.dev/set';

function configMap(namespace: string, name: string, label: string, owner: KubeObject | undefined, index: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      labels: { [SET]: label },
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                name: owner.metadata.name,
                uid: owner.metadata.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : {}),
    },
    data: { index: String(index), payload: 'x'.repeat(64) },
  };
}

/** The owner (labelled `<label>-owner`) and its dependents (labelled `<label>`): `width` of them, each with `leaves` of its own when leaves > 0. */
async function createTree(
  cluster: BenchCluster,
  namespace: string,
  label: string,
  width: number,
  leaves: number,
): Promise<{ owner: KubeObject; dependents: number }> {
  const owner = await cluster.admin.create(cluster.configMaps, configMap(namespace, `${label}-owner`, `${label}-owner`, undefined, 0));
  const middle = new Array<KubeObject>(width);
  await forEachConcurrently(width, 32, async (i) => {
    middle[i] = await cluster.admin.create(cluster.configMaps, configMap(namespace, `${label}-d-${i}`, label, owner, i));
  });
  await forEachConcurrently(width * leaves, 32, async (k) => {
    const parent = middle[Math.floor(k / leaves)];
    await cluster.admin.create(
      cluster.configMaps,
      configMap(namespace, `${label}-d-${Math.floor(k / leaves)}-${k % leaves}`, label, parent, k),
    );
  });
  return { owner, dependents: width + width * leaves };
}

/** The bench's own requests during a timed run: the owner's DELETE, and a LIST and a WATCH per DeletionWatch. */
function withoutBenchRequests(requests: Record<string, number>, watches: number): Record<string, number> {
  const own: Record<string, number> = { 'DELETE configmaps': 1, 'LIST configmaps': watches, 'WATCH configmaps': watches };
  const out = { ...requests };
  for (const [key, count] of Object.entries(own)) {
    const seen = out[key];
    if (seen === undefined) continue;
    if (seen > count) out[key] = seen - count;
    else delete out[key];
  }
  return out;
}

/** Orphaned means: still there, no longer naming the owner. */
async function checkOrphaned(cluster: BenchCluster, namespace: string, label: string, owner: KubeObject, expected: number): Promise<void> {
  const { items } = await cluster.admin.list(cluster.configMaps, namespace, { labelSelector: `${SET}=${label}`, metadataOnly: true });
  const stillOwned = items.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid)).length;
  if (items.length !== expected || stillOwned > 0)
    throw new Error(`orphan cascade ${label}: ${items.length} of ${expected} dependents left, ${stillOwned} still naming the owner`);
}

async function timedPolicyCascade(
  cluster: BenchCluster,
  namespace: string,
  shape: PolicyShape,
  label: string,
  sizes: PolicySizes,
  settle: () => Promise<void>,
  timeoutMs: number,
): Promise<CascadeRun> {
  const { owner, dependents } =
    shape === 'foreground'
      ? await createTree(cluster, namespace, label, sizes.width, sizes.leaves)
      : await createTree(cluster, namespace, label, sizes.orphanN, 0);
  await settle();
  const ownerGone = await DeletionWatch.start(cluster, namespace, `${label}-owner`, 1);
  const dependentsGone = shape === 'foreground' ? await DeletionWatch.start(cluster, namespace, label, dependents) : undefined;
  const before = await requestCounters(cluster);
  const started = performance.now();
  try {
    await cluster.admin.delete(cluster.configMaps, namespace, owner.metadata.name, {
      uid: owner.metadata.uid,
      propagationPolicy: shape === 'foreground' ? 'Foreground' : 'Orphan',
    });
    const ends = [await ownerGone.gone(timeoutMs), ...(dependentsGone ? [await dependentsGone.gone(timeoutMs)] : [])];
    const seconds = (Math.max(...ends) - started) / 1000;
    await sleep(500);
    const requests = withoutBenchRequests(counterDelta(before, await requestCounters(cluster)), dependentsGone ? 2 : 1);
    if (shape === 'orphan') await checkOrphaned(cluster, namespace, label, owner, dependents);
    return { seconds, deletesPerSecond: dependents / seconds, requests };
  } finally {
    await ownerGone.close();
    await dependentsGone?.close();
  }
}

interface PolicySizes {
  width: number;
  leaves: number;
  orphanN: number;
}

/** Foreground then orphan on each collector's own control plane; the same client budget for both (ours: --qps Q; kube-controller-manager: --kube-api-qps Q/2, which it doubles). */
export async function policyCascades(config: BenchConfig, log: (line: string) => void): Promise<PolicyResult[]> {
  const { qps, burst, runs } = config.cascade;
  const sizes: PolicySizes = config.policies;
  const shapes: { shape: PolicyShape; dependents: number; description: string }[] = [
    {
      shape: 'foreground',
      dependents: sizes.width * (1 + sizes.leaves),
      description: `1 -> ${sizes.width} -> ${sizes.width}x${sizes.leaves}`,
    },
    { shape: 'orphan', dependents: sizes.orphanN, description: `1 -> ${sizes.orphanN}` },
  ];
  const results: PolicyResult[] = shapes.map((s) => ({
    ...s,
    ours: { id: 'ours', label: `bundlesmith as shipped (qps ${qps}, burst ${burst}, ${config.gcWorkers} workers)`, runs: [] },
    kcm: {
      id: 'kcm-same-budget',
      label: `kube-controller-manager (--kube-api-qps=${qps / 2}: its GC client gets ${qps} qps, the same budget), burst ${burst}`,
      runs: [],
    },
  }));
  const timeoutFor = (dependents: number) => Math.max(120_000, ((dependents * 4) / qps) * 1000);

  log(
    `policies: foreground ${shapes[0]?.description ?? ''} and orphan ${shapes[1]?.description ?? ''}, our collector at ${qps} qps (fresh control plane)`,
  );
  {
    const cluster = await startBenchCluster();
    try {
      const namespace = await createNamespace(cluster, 'bench-policies');
      for (let r = 0; r < runs; r++) {
        const collector = await startOurCollector(cluster, config.gcWorkers, { qps, burst }, 'own-client');
        try {
          await warmUp(cluster, namespace, 60_000);
          for (const result of results) {
            const label = `ours-${result.shape}-${r}`;
            const run = await timedPolicyCascade(
              cluster,
              namespace,
              result.shape,
              label,
              sizes,
              async () => {
                await graphHas(collector.gc, cluster, namespace, label, 60_000);
                await graphHas(collector.gc, cluster, namespace, `${label}-owner`, 60_000);
                await sleep(refillMs(qps, burst));
              },
              timeoutFor(result.dependents),
            );
            log(`  ours ${result.shape} run ${r + 1}: ${run.seconds.toFixed(2)} s ${JSON.stringify(run.requests)}`);
            result.ours.runs.push(run);
          }
        } finally {
          await collector.stop();
        }
      }
    } finally {
      cluster.stop();
    }
  }

  const flagQps = qps / 2;
  log(`policies: kube-controller-manager at --kube-api-qps=${flagQps} (fresh control plane)`);
  const cluster = await startBenchCluster({
    withGarbageCollector: true,
    controllerManagerArgs: [`--kube-api-qps=${flagQps}`, `--kube-api-burst=${burst}`],
  });
  try {
    await grantControllerManagerGcRole(cluster);
    const namespace = await createNamespace(cluster, 'bench-policies');
    // Its informers start, fail on RBAC, back off and relist: give it time.
    await warmUp(cluster, namespace, 180_000);
    for (let r = 0; r < runs; r++) {
      for (const result of results) {
        const run = await timedPolicyCascade(
          cluster,
          namespace,
          result.shape,
          `kcm-${result.shape}-${r}`,
          sizes,
          async () => {
            // No way to ask kube-controller-manager what its graph holds: its watch delivers the creates within a second on loopback; wait more.
            await sleep(2_000 + refillMs(flagQps * 2, burst));
          },
          timeoutFor(result.dependents),
        );
        log(`  kube-controller-manager ${result.shape} run ${r + 1}: ${run.seconds.toFixed(2)} s ${JSON.stringify(run.requests)}`);
        result.kcm.runs.push(run);
      }
    }
  } finally {
    cluster.stop();
  }
  return results;
}
