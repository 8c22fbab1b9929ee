/**
 * Each scenario's headline figures in results.json's row shape (name, value,
 * unit, reference, ratio, target, met). One function per scenario result;
 * a scenario whose result carries `figures: Figure[]` (built with figure()
 * from bench/results.ts) supplies all its rows and needs none here. The ids are
 * stable across sizes, so the smoke test and tooling can key on them.
 */
import type { BenchConfig } from './config.js';
import type { ExpiryResult } from './expiry.js';
import { percentile } from './expiry.js';
import { representative, requestsPerObject, type CascadeResult } from './gc-cascade.js';
import type { PolicyResult } from './gc-policies.js';
import type { LoopResult, UnrelatedHeapResult } from './hostile.js';
import type { MemoryRow } from './memory.js';
import type { ReconcilerResult } from './reconciler.js';
import { figure, type Figure } from './results.js';
import type { ShardingResult } from './sharding.js';
import { median } from './table.js';

const byId = (results: readonly CascadeResult[], id: string) => results.find((r) => r.id === id);

export function cascadeFigures(results: readonly CascadeResult[], config: BenchConfig): Figure[] {
  const { n, qps } = config.cascade;
  const ours = representative(byId(results, 'ours') ?? { label: '', runs: [] });
  if (!ours) return [];
  const out: Figure[] = [];
  const rows = [
    {
      id: 'gc-background-equal-budget',
      kcm: 'kcm-same-budget',
      what: `equal request budget (${qps} requests/s)`,
      flag: qps / 2,
      target: 2,
    },
    {
      id: 'gc-background-equal-flag',
      kcm: 'kcm-same-flag',
      what: `equal flag value (--qps / --kube-api-qps ${qps})`,
      flag: qps,
      target: 1,
    },
  ];
  for (const row of rows) {
    const kcm = representative(byId(results, row.kcm) ?? { label: '', runs: [] });
    out.push(
      figure({
        id: row.id,
        name: `GC cascade (background), ${n} dependents, ${row.what}`,
        value: ours.deletesPerSecond,
        unit: 'deletes/s',
        better: 'higher',
        detail: requestsPerObject(ours, n),
        ...(kcm
          ? {
              reference: {
                name: `kube-controller-manager at --kube-api-qps=${row.flag} (${requestsPerObject(kcm, n)})`,
                value: kcm.deletesPerSecond,
              },
            }
          : {}),
        target: { text: `>= ${row.target}x kube-controller-manager`, met: ({ ratio }) => ratio !== null && ratio >= row.target },
      }),
    );
  }
  return out;
}

export function unthrottledFigures(results: readonly CascadeResult[], config: BenchConfig): Figure[] {
  const n = config.cascade.unthrottledN;
  const raw = representative(byId(results, 'raw') ?? { label: '', runs: [] });
  const out: Figure[] = [];
  for (const [id, workers] of [
    ['ours-default-workers', config.gcWorkers],
    ['ours-high-workers', config.gcWorkersHigh],
  ] as const) {
    const ours = representative(byId(results, id) ?? { label: '', runs: [] });
    if (!ours) continue;
    out.push(
      figure({
        id: `gc-unthrottled-${id === 'ours-default-workers' ? 'default' : 'high'}-workers`,
        name: `GC cascade (background), ${n} dependents, no client limit, ${workers} workers`,
        value: ours.deletesPerSecond,
        unit: 'deletes/s',
        better: 'higher',
        detail: requestsPerObject(ours, n),
        ...(raw
          ? { reference: { name: `raw parallel DELETE (${config.cascade.rawConcurrency} in flight)`, value: raw.deletesPerSecond } }
          : {}),
        target: { text: '>= 0.8x raw', met: ({ ratio }) => ratio !== null && ratio >= 0.8 },
      }),
    );
  }
  return out;
}

/** Issue 13.6: time to completion, ours against kube-controller-manager at the same budget (lower is better). */
export function policyFigures(results: readonly PolicyResult[], config: BenchConfig): Figure[] {
  const { qps } = config.cascade;
  const out: Figure[] = [];
  for (const r of results) {
    const ours = representative(r.ours);
    const kcm = representative(r.kcm);
    if (!ours) continue;
    out.push(
      figure({
        id: `gc-${r.shape}-equal-budget`,
        name: `GC cascade (${r.shape}), ${r.description} (${r.dependents} dependents), equal request budget (${qps} requests/s): time to the owner's removal`,
        value: ours.seconds,
        unit: 's',
        better: 'lower',
        detail: requestsPerObject(ours, r.dependents),
        ...(kcm
          ? {
              reference: {
                name: `kube-controller-manager at --kube-api-qps=${qps / 2} (${requestsPerObject(kcm, r.dependents)})`,
                value: kcm.seconds,
              },
            }
          : {}),
      }),
    );
  }
  return out;
}

export function memoryFigures(synthetic: readonly MemoryRow[] | undefined, real: MemoryRow | undefined): Figure[] {
  const out: Figure[] = [];
  const sizeId = (n: number) =>
    n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}m` : n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
  // One row per size: flat from 10k to 1M is part of the target.
  for (const total of synthetic?.filter((m) => m.what.startsWith('collector total')) ?? []) {
    out.push(
      figure({
        id: `gc-heap-per-object-${sizeId(total.objects)}`,
        name: `GC heap per tracked object, ${total.objects.toLocaleString('en-US')} synthetic objects (storeless informers + graph)`,
        value: total.bytesPerObject,
        unit: 'bytes/object',
        better: 'lower',
        target: { text: '<= 300 bytes/object', met: ({ value }) => value <= 300 },
      }),
    );
  }
  if (real) {
    out.push(
      figure({
        id: 'gc-heap-per-object-real',
        name: `GC heap per tracked object, ${real.objects} ConfigMaps on a real apiserver (whole collector)`,
        value: real.bytesPerObject,
        unit: 'bytes/object',
        better: 'lower',
        ...(real.rssBytesPerObject !== undefined
          ? { detail: `our resident-set growth ${Math.round(real.rssBytesPerObject)} bytes/object` }
          : {}),
        ...(real.referenceRssBytesPerObject !== undefined
          ? {
              reference: {
                name: 'kube-controller-manager, garbage collector only: resident-set growth',
                value: real.referenceRssBytesPerObject,
              },
            }
          : {}),
      }),
    );
  }
  return out;
}

export function reconcilerFigures(rc: ReconcilerResult): Figure[] {
  const out: Figure[] = [];
  const single = rc.single;
  if (single && single.runs.length > 0) {
    const operator = median(single.runs.map((r) => r.operatorS));
    const raw = median(single.runs.map((r) => r.rawS));
    const kubectl = median(single.runs.map((r) => r.kubectlS));
    const write = median(single.runs.map((r) => r.bundleWriteS));
    const detail = `${single.runs.length} runs; one write of the Bundle costs the API server ${(write * 1000).toFixed(0)} ms (median), a new Bundle needs three`;
    out.push(
      figure({
        id: 'reconciler-one-bundle-vs-raw',
        name: `One Bundle of ${single.objects} ConfigMaps, Bundle applied -> Ready`,
        value: operator,
        unit: 's',
        better: 'lower',
        detail,
        reference: { name: `raw parallel server-side apply of the same objects (${single.rawConcurrency} in flight)`, value: raw },
        target: { text: '<= 1.3x raw', met: ({ ratio }) => ratio !== null && ratio <= 1.3 },
      }),
    );
    out.push(
      figure({
        id: 'reconciler-one-bundle-vs-kubectl',
        name: `One Bundle of ${single.objects} ConfigMaps, Bundle applied -> Ready`,
        value: operator,
        unit: 's',
        better: 'lower',
        detail,
        reference: { name: 'kubectl apply --server-side -f of the same objects', value: kubectl },
        target: { text: '<= 0.8x kubectl', met: ({ ratio }) => ratio !== null && ratio <= 0.8 },
      }),
    );
  }
  const fleet = rc.fleet;
  if (fleet) {
    const objects = fleet.bundles * fleet.objectsPerBundle;
    const size = `${fleet.bundles} Bundles x ${fleet.objectsPerBundle} ConfigMaps`;
    out.push(
      figure({
        id: 'reconciler-ready',
        name: `Reconciler: ${size}, creation to all Ready`,
        value: objects / fleet.readySeconds,
        unit: 'objects Ready/s',
        better: 'higher',
        detail: `${fleet.readySeconds.toFixed(1)} s, ${fleet.workers} workers`,
      }),
    );
    out.push(
      figure({
        id: 'reconciler-heap',
        name: `Reconciler: the operator's heap with ${size} Ready`,
        value: fleet.heapBytes / 2 ** 20,
        unit: 'MiB',
        better: 'lower',
      }),
    );
    out.push(
      figure({
        id: 'reconciler-noop',
        name: `Reconciler: no-op passes over ${size}`,
        value: fleet.noop.reconciles / fleet.noop.seconds,
        unit: 'reconciles/s',
        better: 'higher',
        detail: `${fleet.noop.writes} writes`,
        target: { text: '0 writes', met: () => fleet.noop.writes === 0 },
      }),
    );
    out.push(
      figure({
        id: 'reconciler-restart',
        name: `Reconciler: restart with ${size} in place, until every Bundle is confirmed`,
        value: fleet.restart.seconds,
        unit: 's',
        better: 'lower',
        detail: `${fleet.restart.writes} writes, ${fleet.restart.reconciles} reconciles`,
        target: { text: '0 writes', met: () => fleet.restart.writes === 0 },
      }),
    );
  }
  return out;
}

export function hostileFigures(loop: LoopResult | undefined, heap: UnrelatedHeapResult | undefined): Figure[] {
  const out: Figure[] = [];
  const controller = loop?.cases.filter((c) => c.path === 'controller') ?? [];
  if (controller.length > 0) {
    const worst = Math.max(0, ...controller.flatMap((c) => c.runs.map((r) => r.longest.ms)));
    out.push(
      figure({
        id: 'hostile-longest-block',
        name: "Longest event-loop block on a hostile Bundle (the Bundle controller's steps)",
        value: worst,
        unit: 'ms',
        better: 'lower',
        target: { text: '< 100 ms', met: ({ value }) => value < 100 },
      }),
    );
  }
  if (heap) {
    const mib = (bytes: number) => bytes / 2 ** 20;
    out.push(
      figure({
        id: 'hostile-unrelated-heap',
        name: `Bundle controller heap beside ${heap.perKind} unrelated Secrets + ${heap.perKind} Pods`,
        value: mib(heap.afterBytes - heap.beforeBytes),
        unit: 'MiB',
        better: 'lower',
        detail: `${heap.cachedObjects} objects cached, data growth ${mib(heap.dataGrowthBytes).toFixed(1)} MiB`,
        ...(heap.unselected
          ? {
              reference: {
                name: `full-object informers without the managed-label selector (${heap.unselected.objects} cached)`,
                value: mib(heap.unselected.bytes),
              },
            }
          : {}),
        target: {
          text: 'flat: < 1 MiB of data growth, 2 objects cached, Bundle Ready',
          met: () => heap.dataGrowthBytes < 2 ** 20 && heap.cachedObjects === 2 && heap.bundleReady,
        },
      }),
    );
  }
  return out;
}

export function expiryFigures(e: ExpiryResult): Figure[] {
  const p99 = percentile(e.latenessMs, 99);
  return [
    figure({
      id: 'expiry-p99-late',
      name: `${e.objects} countdowns of ${e.delaySeconds} s expiring at once: p99 lateness`,
      value: p99,
      unit: 'ms',
      better: 'lower',
      detail: `p50 ${Math.round(percentile(e.latenessMs, 50))} ms, max ${Math.round(e.latenessMs[e.latenessMs.length - 1] ?? NaN)} ms, ${e.early} early`,
      ...(e.rawSeconds !== undefined
        ? {
            reference: {
              name: `the API server's own time for the work: one LIST and ${e.objects} DELETEs with preconditions by the bench, ${e.rawInFlight} in flight`,
              value: e.rawSeconds * 1000,
            },
          }
        : {}),
      target: { text: '<= 500 ms late, 0 early', met: ({ value }) => value <= 500 && e.early === 0 },
    }),
  ];
}

/** Issue 13.7: one shard is the reference for two (lower is better). */
export function shardingFigures(s: ShardingResult): Figure[] {
  const objects = s.bundles * s.objectsPerBundle;
  const one = s.layouts.find((l) => l.shards === 1);
  const oneSeconds = one && one.readySeconds.length > 0 ? median(one.readySeconds) : undefined;
  return s.layouts
    .filter((l) => l.readySeconds.length > 0)
    .map((l) => {
      const seconds = median(l.readySeconds);
      return figure({
        id: l.shards === 1 ? 'sharding-one-shard' : `sharding-${l.shards}-shards`,
        name: `${s.bundles} Bundles x ${s.objectsPerBundle} ConfigMaps over ${l.shards === 1 ? 'one shard' : `${l.shards} shards`} (operator processes, ${s.workers} workers each): creation to all Ready`,
        value: seconds,
        unit: 's',
        better: 'lower',
        detail: `${Math.round(objects / seconds)} objects Ready/s; runs ${l.readySeconds.map((x) => x.toFixed(1)).join(' / ')}`,
        ...(l.shards !== 1 && oneSeconds !== undefined ? { reference: { name: 'one shard', value: oneSeconds } } : {}),
      });
    });
}
