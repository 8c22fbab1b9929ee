/**
 * `npm run bench [-- --quick] [-- --out DIR]`: the garbage collector,
 * reconciler, sharding and hostile-Bundle (issue 12) benchmarks. Prints
 * Markdown tables; a full run of every scenario writes them, with the
 * machine and versions, to docs/benchmarks.md, every headline figure to
 * bench/results.json, and the summary table at the top of docs/benchmarks.md
 * from that JSON (hand-written notes between their markers are kept). With
 * --out (or BENCH_OUT_DIR), any run writes benchmarks.md and results.json
 * there instead and leaves the committed files alone. Sizes come from
 * BENCH_* env vars (see bench/config.ts). Every control plane is started
 * fresh for its scenario and stopped on every exit path.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repoRoot } from '../src/api/crd-paths.js';
import { shareControlPlanes, stopAllControlPlanes } from './cluster.js';
import { BENCH_SCENARIOS, benchConfig, type BenchConfig } from './config.js';
import {
  CASCADE_HEADER,
  cascadeRows,
  equalQpsCascade,
  ratio,
  representative,
  requestsPerObject,
  unthrottledCascade,
  type CascadeResult,
} from './gc-cascade.js';
import { policyCascades, type PolicyResult } from './gc-policies.js';
import {
  cascadeFigures,
  expiryFigures,
  hostileFigures,
  memoryFigures,
  policyFigures,
  reconcilerFigures,
  shardingFigures,
  unthrottledFigures,
} from './figures.js';
import { notesOf, pageWithSummary, renderSummary, serializeResults, type BenchResults, type Figure } from './results.js';
import { shardingBench, type ShardingResult } from './sharding.js';
import { realMemory, syntheticMemory, type MemoryRow } from './memory.js';
import { fleetBench, singleBundleBench, type ReconcilerResult, type SingleBundleRun } from './reconciler.js';
import { expiryBench, percentile, type ExpiryResult } from './expiry.js';
import {
  HEAP_HEADER,
  type ScalingRow,
  heapRows,
  hostileLoop,
  LOOP_HEADER,
  loopRows,
  unrelatedObjectsHeap,
  type LoopCase,
  type LoopResult,
  type UnrelatedHeapResult,
} from './hostile.js';
import { markdownTable, median, met } from './table.js';

/** The memory scenario reads heap sizes after forced GCs: run under --expose-gc (re-executing this script when needed). */
function reexecWithExposeGc(): Promise<number> {
  const child = spawn(process.execPath, ['--expose-gc', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on('SIGINT', forward('SIGINT'));
  process.on('SIGTERM', forward('SIGTERM'));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

function versions(): BenchResults['versions'] {
  const root = repoRoot();
  const read = (path: string) => {
    try {
      return readFileSync(join(root, path), 'utf8').trim();
    } catch {
      return '?';
    }
  };
  let commit = '?';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    // Tracked files changed since that commit (the bench's own outputs aside): the figures are not that commit's.
    const changed = execFileSync(
      'git',
      ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!docs/benchmarks.md', ':!bench/results.json'],
      { cwd: root, encoding: 'utf8' },
    ).trim();
    if (changed !== '') commit += ' with uncommitted changes';
  } catch {
    /* not a git checkout */
  }
  return { node: process.version, kubernetes: read('hack/k8s/K8S_VERSION'), etcd: read('hack/k8s/ETCD_VERSION'), commit };
}

function machineFacts(): BenchResults['machine'] {
  return { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown CPU', memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10 };
}

function machine(): string {
  const m = machineFacts();
  return `${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB.toFixed(1)} GiB memory`;
}

interface Report {
  config: BenchConfig;
  equalQps?: CascadeResult[];
  policies?: PolicyResult[];
  unthrottled?: CascadeResult[];
  sharding?: ShardingResult;
  memory?: MemoryRow[];
  realMemory?: MemoryRow;
  reconciler?: ReconcilerResult;
  hostileLoop?: LoopResult;
  unrelatedHeap?: UnrelatedHeapResult;
  expiry?: ExpiryResult;
  failures: string[];
}

/** Issue 13.6: foreground and orphan cascades, ours against kube-controller-manager at the same budget. */
function renderPolicies(results: PolicyResult[], config: BenchConfig): string[] {
  const { qps, burst } = config.cascade;
  const rows = results.flatMap((r) =>
    [r.ours, r.kcm].map((c) => {
      const rep = representative(c);
      return [
        `${r.shape}: ${r.description}`,
        c.label,
        String(r.dependents),
        c.runs.map((x) => x.seconds.toFixed(2)).join(' / '),
        rep ? rep.seconds.toFixed(2) : '-',
        rep ? rep.deletesPerSecond.toFixed(0) : '-',
        rep ? requestsPerObject(rep, r.dependents) : '-',
      ];
    }),
  );
  const out = [
    `## Foreground and orphan cascades at an equal request budget (${qps} requests/s, burst ${burst})`,
    '',
    `Foreground: an owner ConfigMap with ${config.policies.width} dependent ConfigMaps, each the owner of ${config.policies.leaves} more (every reference with blockOwnerDeletion), the owner deleted with propagationPolicy=Foreground; done when the owner's DELETED event arrives (its finalizer waits for every blocking dependent, the middle level for its own). Orphan: an owner with ${config.policies.orphanN} dependents deleted with propagationPolicy=Orphan; done when the owner's DELETED event arrives, every dependent then checked to be still there without the reference. Ours runs as shipped at --qps ${qps}; kube-controller-manager at --kube-api-qps=${qps / 2}, which it doubles for its collector's client (the same ${qps} requests/s). Each on a control plane of its own; requests per object are the apiserver's counters (all verbs) over the run, minus the bench's own, per dependent.`,
    '',
    markdownTable(
      ['cascade', 'collector', 'dependents', 'runs (s)', 'reported (s)', 'objects/s', 'requests per object (apiserver counters)'],
      rows,
    ),
    '',
  ];
  for (const r of results) {
    const ours = representative(r.ours);
    const kcm = representative(r.kcm);
    if (ours && kcm)
      out.push(
        `- ${r.shape}: ours ${ours.seconds.toFixed(2)} s, kube-controller-manager ${kcm.seconds.toFixed(2)} s: ${(kcm.seconds / ours.seconds).toFixed(2)}x as fast (issue 13 sets no target for these).`,
      );
  }
  out.push('');
  return out;
}

/** Issue 13.7: the same Bundles over one operator process and over two shards. */
function renderSharding(s: ShardingResult): string[] {
  const objects = s.bundles * s.objectsPerBundle;
  const one = s.layouts.find((l) => l.shards === 1);
  const rows = s.layouts.map((l) => {
    const m = median(l.readySeconds);
    return [
      l.shards === 1 ? 'one shard (no selector)' : `${l.shards} shards (--bundle-selector bundlesmith.dev/shard=sN)`,
      l.readySeconds.map((x) => x.toFixed(2)).join(' / '),
      m.toFixed(2),
      (objects / m).toFixed(0),
      l.appliedSeconds.map((x) => x.toFixed(2)).join(' / '),
      l.shards !== 1 && one ? `${(m / median(one.readySeconds)).toFixed(2)}x` : '-',
    ];
  });
  return [
    '## Sharding: one operator process against two',
    '',
    `${s.bundles} Bundles of ${s.objectsPerBundle} ConfigMaps each, applied 16 at a time by the bench, timed from the first apply to every Bundle Ready=True at its generation (a watch on an unthrottled client). Each shard is the operator as shipped, a process of its own (\`node dist/src/main.js --namespace NS --gc=off --workers ${s.workers}\`, no client limit), started and ready before the clock; two shards split the Bundles by label (s0 / s1, alternately), the second without the sweeper. Each run of a layout on a fresh control plane, the layouts alternating run by run. All processes (apiserver, etcd, the shards, the bench) share the machine's cores.`,
    '',
    markdownTable(['layout', 'runs (s)', 'reported (s)', 'objects Ready/s', 'applies sent (s)', 'time against one shard'], rows),
    '',
  ];
}

/** Issue 13.5: lateness of countdowns that all end at once, from the DELETED events. */
function renderExpiry(e: ExpiryResult): string[] {
  const ms = (v: number) => (Number.isFinite(v) ? `${Math.round(v)}` : '-');
  const p99 = percentile(e.latenessMs, 99);
  return [
    '## Countdowns expiring at once',
    '',
    `${e.objects} ConfigMaps with \`deletionDelay: ${e.delaySeconds}s\`, dropped from their Bundles (250 per Bundle) by one edit each, sent together; the operator in this process, no collector. Each deletion is timed by the DELETED event of a watch on an unthrottled client and compared with the object's own deadline (its stamp + delay). Target: p99 at most 500 ms late for 1000 at once, none early.`,
    '',
    markdownTable(
      [
        'objects',
        'stamps written (s after the edits)',
        'min late (ms)',
        'p50 late (ms)',
        'p99 late (ms)',
        'max late (ms)',
        'early',
        'reference: LIST + the same DELETEs by the bench (s)',
        'target',
      ],
      [
        [
          String(e.objects),
          e.stampSeconds.toFixed(2),
          ms(e.latenessMs[0] ?? NaN),
          ms(percentile(e.latenessMs, 50)),
          ms(p99),
          ms(e.latenessMs[e.latenessMs.length - 1] ?? NaN),
          String(e.early),
          e.rawSeconds !== undefined ? e.rawSeconds.toFixed(2) : '-',
          met(e.early === 0 && p99 <= 500),
        ],
      ],
    ),
    '',
    `The reference column: ${e.objects} ConfigMaps read fresh by one LIST and each deleted with uid and resourceVersion preconditions by the bench itself, ${e.rawInFlight} in flight (the operator's 4 workers x 32 prunes at once; the operator reads a wave's expired countdowns of one kind with one LIST too): the API server's own time for the requests the due deletes need, the floor under the max lateness.`,
    '',
  ];
}

function render(report: Report, started: Date, elapsedS: number): string {
  const { config } = report;
  const v = versions();
  const out: string[] = [];
  out.push('# Benchmarks', '');
  out.push(
    `Generated by \`npm run bench${config.quick ? ' -- --quick' : ''}\` on ${started.toISOString().slice(0, 10)} (took ${Math.round(elapsedS)} s).`,
    '',
  );
  out.push(
    `- Machine: ${machine()}; nothing else is meant to run during a bench, but nothing stops it: a noisy neighbour shows as spread between runs.`,
  );
  out.push(
    `- Versions: Node ${v.node}, kube-apiserver / kube-controller-manager ${v.kubernetes}, etcd ${v.etcd}, bundlesmith commit ${v.commit}.`,
  );
  out.push(
    `- Every measurement ran at least ${config.cascade.runs} time(s)${report.sharding && config.sharding.runs < config.cascade.runs ? ` (the sharding layouts ${config.sharding.runs})` : ''}; tables list every run and report the median (with two runs, the better one).`,
  );
  out.push(
    `- Control planes are real (etcd + kube-apiserver on loopback, etcd without fsync); ${config.quick ? 'this smoke run shares one per kind (with or without kube-controller-manager at given flags) between the scenarios' : 'each scenario gets a fresh one'}.`,
    '',
  );

  if (report.equalQps) {
    const { n, qps, burst } = config.cascade;
    const kcm = report.equalQps.filter((x) => x.label.startsWith('kube-controller-manager'));
    const [kcmSameFlag, kcmSameBudget] = kcm;
    const shipped = report.equalQps[0];
    const shared = report.equalQps.find((x) => x.label.includes("Events through the collector's own client"));
    const times = (a: CascadeResult | undefined, b: CascadeResult | undefined) => {
      const r = ratio(a, b);
      return r !== undefined ? `${r.toFixed(2)}x` : 'n/a';
    };
    out.push(`## GC cascade at equal client QPS (${qps} qps, burst ${burst})`, '');
    out.push(
      `One owner ConfigMap, ${n} dependent ConfigMaps, owner deleted with propagationPolicy=Background; time from the owner's DELETE to the last dependent's DELETED watch event. Each collector runs alone on its own control plane. Requests per object are the apiserver's own counters (apiserver_request_total) over the run, minus the bench's own requests.`,
      '',
    );
    out.push(
      `kube-controller-manager doubles its garbage collector's client QPS internally (\`config.QPS *= 2\` in cmd/kube-controller-manager, "each object deletion takes two API calls"), so \`--kube-api-qps=${qps}\` lets its collector send ${2 * qps} requests/s; it is measured at that flag value and at half of it (the same ${qps} requests/s budget as ours).`,
      '',
    );
    out.push(markdownTable(CASCADE_HEADER, cascadeRows(report.equalQps, n)), '');
    const sameFlag = ratio(shipped, kcmSameFlag);
    const sameBudget = ratio(shipped, kcmSameBudget);
    out.push(
      'Targets (issue 13): ours >= 2x kube-controller-manager at an equal total request budget (every client of the process counted, Events included), and >= 1x at an equal flag value.',
    );
    out.push(
      `- As shipped, same request budget: ${times(shipped, kcmSameBudget)} - ${met(sameBudget === undefined ? undefined : sameBudget >= 2)}.`,
    );
    out.push(`- As shipped, same flag value: ${times(shipped, kcmSameFlag)} - ${met(sameFlag === undefined ? undefined : sameFlag >= 1)}.`);
    if (shared) {
      out.push(
        `- Events through the collector's own client (the earlier wiring), same flag value: ${times(shared, kcmSameFlag)}; same request budget: ${times(shared, kcmSameBudget)}.`,
      );
    }
    out.push('');
  }
  if (report.policies) out.push(...renderPolicies(report.policies, config));
  if (report.unthrottled) {
    const n = config.cascade.unthrottledN;
    const raw = report.unthrottled[0];
    out.push('## Unthrottled: our collector against the raw DELETE rate', '');
    out.push(
      `The same cascade (${n} dependents) with no client rate limit, against the bench deleting the same kind of objects itself (DELETE with uid preconditions, many in flight, through our transport). One control plane, one at a time, the variants interleaved run by run; ${config.cascade.unthrottledRuns} runs each, median reported.`,
      '',
    );
    out.push(markdownTable(CASCADE_HEADER, cascadeRows(report.unthrottled, n)), '');
    out.push('Target: ours >= 80% of raw.');
    for (const ours of report.unthrottled.slice(1)) {
      const r = ratio(ours, raw);
      const share = r !== undefined ? `${(r * 100).toFixed(0)}% of raw` : 'n/a';
      const whatIf = ours.label.includes('what if');
      out.push(
        `- ${ours.label}: ${share}${whatIf ? ' (not how the operator ships)' : ` - ${met(r === undefined ? undefined : r >= 0.8)}`}.`,
      );
    }
    out.push('');
  }
  if (report.memory || report.realMemory) {
    const rows = [...(report.memory ?? []), ...(report.realMemory ? [report.realMemory] : [])];
    out.push('## Memory per tracked object', '');
    out.push(
      `\`process.memoryUsage().heapUsed\` after forced full GCs (node --expose-gc), before and after the objects are tracked. Synthetic: metadata-only Pods owned by ReplicaSets (one owner per ${config.memory.objectsPerOwner} objects, 100 namespaces, managedFields and labels as the API serves them), made from their index and parsed page by page from JSON text as a list delivers them, through the real SupervisedInformer (storeless: the graph is its index, as the collector runs it) and GcEngine; the lower of two runs (one at 1M). Real: the whole GarbageCollector on an apiserver, before and after the ConfigMaps exist; the reference is kube-controller-manager running only its garbage collector on the same control plane, its resident-set growth over the same objects (a Go heap cannot be sampled after a forced collection from outside; our RSS growth is given beside it, and over ${config.memory.realObjects} objects both RSS figures carry the runtimes' slack: V8 sizes its young generation by allocation rate, Go keeps GOGC headroom; heap is our measure).`,
      '',
    );
    const rss = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(0));
    out.push(
      markdownTable(
        [
          'what',
          'objects',
          'graph nodes',
          'heap bytes / object',
          'RSS bytes / object',
          'kube-controller-manager RSS bytes / object (GC only)',
        ],
        rows.map((m) => [
          m.what,
          String(m.objects),
          m.graphNodes !== undefined ? String(m.graphNodes) : '-',
          m.bytesPerObject.toFixed(0),
          rss(m.rssBytesPerObject),
          rss(m.referenceRssBytesPerObject),
        ]),
      ),
      '',
    );
    const totals = (report.memory ?? []).filter((m) => m.what.startsWith('collector total'));
    out.push(
      `Target: <= 300 bytes/object (collector total), flat from 10k to 1M objects - ${met(totals.length === 0 ? undefined : totals.every((m) => m.bytesPerObject <= 300))}${totals.length > 0 ? ` (${totals.map((m) => `${m.bytesPerObject.toFixed(0)} at ${m.objects}`).join(', ')})` : ''}.`,
      '',
    );
  }
  if (report.reconciler) out.push(...renderReconciler(report.reconciler, config));
  if (report.sharding) out.push(...renderSharding(report.sharding));
  if (report.hostileLoop || report.unrelatedHeap) out.push(...renderHostile(report));
  if (report.expiry) out.push(...renderExpiry(report.expiry));
  out.push('## Notes', '');
  out.push(
    "- Where ours spends its budget: one DELETE per collected object (preconditions instead of a GET), plus one `GarbageCollected` Event per owner cascade, created once and updated as a series every 2 s while the cascade runs (the POST and PATCH events columns: about 0.00 per object). kube-controller-manager spends a GET and a DELETE and records no Event for an ordinary collection. The what-if rows change only where those few Events go (through the collector's client, or nowhere).",
  );
  out.push(
    "- The collector's informers keep no store: the graph is its only index (relists are diffed against it), so the collector total is the graph. The real-apiserver row counts everything the process kept between the two samples, over fewer objects.",
  );
  out.push('');
  if (report.failures.length > 0) {
    out.push('## Failures', '');
    for (const f of report.failures) out.push(`- ${f}`);
    out.push('');
  }
  out.push('## Reproduce', '');
  out.push(
    '```sh',
    'npm run bench                         # full run: this file, bench/results.json and the summary table above',
    'npm run bench -- --quick              # smoke run (tiny sizes; prints, writes nothing; the test suite runs it with --out)',
    'npm run bench -- --quick --out DIR    # any run: DIR/benchmarks.md and DIR/results.json, committed files left alone',
    'npm run bench:summary                 # the summary table above again from bench/results.json',
    '```',
    '',
  );
  out.push(
    `Sizes: \`BENCH_N\` (dependents per cascade), \`BENCH_UNTHROTTLED_N\`, \`BENCH_UNTHROTTLED_RUNS\`, \`BENCH_QPS\`, \`BENCH_BURST\`, \`BENCH_RUNS\`, \`BENCH_RAW_CONCURRENCY\`, \`BENCH_GC_WORKERS\`, \`BENCH_GC_WORKERS_HIGH\`, \`BENCH_EVENTS_APART=0\`, \`BENCH_FOREGROUND_WIDTH\`, \`BENCH_FOREGROUND_LEAVES\`, \`BENCH_ORPHAN_N\`, \`BENCH_MEMORY_OBJECTS\`, \`BENCH_MEMORY_LARGE_OBJECTS\`, \`BENCH_MEMORY_REAL_OBJECTS\`, \`BENCH_OBJECTS_PER_OWNER\`, \`BENCH_SINGLE_BUNDLE_OBJECTS\`, \`BENCH_BUNDLES\`, \`BENCH_BUNDLE_OBJECTS\`, \`BENCH_WORKERS\`, \`BENCH_NOOP_ROUNDS\`, \`BENCH_SHARDING_BUNDLES\`, \`BENCH_SHARDING_OBJECTS\`, \`BENCH_SHARDING_WORKERS\`, \`BENCH_SHARDING_RUNS\`, \`BENCH_EXPIRY_OBJECTS\`, \`BENCH_EXPIRY_DELAY_SECONDS\`, \`BENCH_HOSTILE_RESOURCES\`, \`BENCH_HOSTILE_CHAIN\`, \`BENCH_HOSTILE_DEPTH\`, \`BENCH_HOSTILE_STRING_BYTES\`, \`BENCH_HOSTILE_RUNS\`, \`BENCH_HOSTILE_OBJECTS\`, \`BENCH_HOSTILE_NAMESPACES\`; \`BENCH_ONLY=${BENCH_SCENARIOS.join(',')}\` picks scenarios (and leaves this file and results.json alone unless it names them all).`,
    '',
  );
  return out.join('\n');
}

/** Issue 13.4: one Bundle against raw apply and kubectl; many Bundles: Ready, heap, no-op pass, restart. */
function renderReconciler(rc: ReconcilerResult, config: BenchConfig): string[] {
  const out: string[] = ['## Bundle reconciler', ''];
  const s = rc.single;
  if (s) {
    const best = (pick: (r: SingleBundleRun) => number) => median(s.runs.map(pick));
    const op = best((r) => r.operatorS);
    const raw = best((r) => r.rawS);
    const kubectl = best((r) => r.kubectlS);
    out.push(
      `One Bundle of ${s.objects} ConfigMaps: from its apply to Ready=True at its generation (the operator in-process, ${config.reconciler.workers} workers, no garbage collector), against the same ConfigMaps applied server-side by the bench (${s.rawConcurrency} in flight, unthrottled) and by \`kubectl apply --server-side -f\` of one file holding them (process start included); the three interleaved run by run on one control plane.`,
      '',
    );
    out.push(
      markdownTable(
        ['what', 'runs (s)', 'reported (s)', 'operator / this', 'target'],
        [
          ['operator: Bundle -> Ready', s.runs.map((r) => r.operatorS.toFixed(2)).join(' / '), op.toFixed(2), '-', '-'],
          [
            'raw parallel server-side apply',
            s.runs.map((r) => r.rawS.toFixed(2)).join(' / '),
            raw.toFixed(2),
            `${(op / raw).toFixed(2)}x`,
            `<= 1.3x: ${met(op / raw <= 1.3)}`,
          ],
          [
            'kubectl apply --server-side',
            s.runs.map((r) => r.kubectlS.toFixed(2)).join(' / '),
            kubectl.toFixed(2),
            `${(op / kubectl).toFixed(2)}x`,
            `<= 0.8x: ${met(op / kubectl <= 0.8)}`,
          ],
          [
            'one write of the Ready Bundle (status PUT, unchanged, median of 5)',
            s.runs.map((r) => r.bundleWriteS.toFixed(3)).join(' / '),
            best((r) => r.bundleWriteS).toFixed(3),
            '-',
            '-',
          ],
        ],
      ),
      '',
    );
    out.push(
      `What the operator sends for a new Bundle of ${s.objects} ConfigMaps, besides the applies raw sends too: one metadata list of each kind with 16 or more objects not in its cache, and a GET of each of those the list holds (or of each, below 16: to find one it must adopt or leave alone), three writes of the Bundle itself (the finalizer; status.managedKinds ahead of the objects, with the "finalizer added" status; the final status with a condition set per resource), and a fresh read of the Bundle before the first write naming it as owner. Applies and reads go 32 at a time; the last row is the API server's price for one of the three Bundle writes.`,
      '',
    );
  }
  const f = rc.fleet;
  if (f) {
    const verbs = (counts: Record<string, number>) =>
      Object.entries(counts)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none';
    out.push(
      `${f.bundles} Bundles of ${f.objectsPerBundle} ConfigMaps each, applied 8 at a time, ${f.workers} workers. Requests are the API server's own counters (apiserver_request_total, status subresource included, leases left out: the control plane renews its own), so every client of the process counts; writes are every POST, PUT, PATCH, APPLY and DELETE except access and token reviews (questions the server answers and stores nothing of); the no-op pass re-queues every Bundle ${config.reconciler.noopRounds} time(s) while nothing changes; the restart starts a new operator with every Bundle in place and ends when every Bundle has been reconciled and the queue is empty.`,
      '',
    );
    out.push(
      markdownTable(
        ['measure', 'value', 'target'],
        [
          ['creation to all Ready (s)', f.readySeconds.toFixed(2), '-'],
          ['objects Ready / s', ((f.bundles * f.objectsPerBundle) / f.readySeconds).toFixed(0), '-'],
          ['operator heap, all Ready (MiB)', (f.heapBytes / 2 ** 20).toFixed(1), '-'],
          ['no-op reconciles / s', (f.noop.reconciles / f.noop.seconds).toFixed(0), '-'],
          ['writes during the no-op pass', String(f.noop.writes), `0: ${met(f.noop.writes === 0 && f.noop.bundleRvsUnchanged)}`],
          ['requests during the no-op pass', verbs(f.noop.requests), '-'],
          ['restart: every Bundle confirmed (s)', f.restart.seconds.toFixed(2), '-'],
          ['writes during the restart', String(f.restart.writes), `0: ${met(f.restart.writes === 0 && f.restart.bundleRvsUnchanged)}`],
          ['requests during the restart', verbs(f.restart.requests), '-'],
        ],
      ),
      '',
    );
  }
  return out;
}

/** Issue 12's figures: the event loop under hostile Bundles, and the Bundle controller's heap beside unrelated objects. */
function renderHostile(report: Report): string[] {
  const h = report.config.hostile;
  const out: string[] = ['## Hostile Bundles (issue 12)', ''];
  if (report.hostileLoop) {
    const { cases, scaling } = report.hostileLoop;
    const longestOf = (path: LoopCase['path']) =>
      Math.max(0, ...cases.filter((c) => c.path === path).flatMap((c) => c.runs.map((r) => r.longest.ms)));
    const worst = longestOf('controller');
    const unbounded = cases.filter((c) => c.path === 'unbounded');
    out.push('### Event loop', '');
    out.push(
      `Each Bundle goes through the Bundle controller's own pure steps in this process, no control plane: the watch event's JSON decoded, the Bundle informer's handler (\`listedObjects\`, to wake Bundles listing the same objects), the schema parse (\`BundleSchema\`), and, for a Bundle that parses, \`buildPlanInput\` + \`planBundle\` (validation and ordering inside) and \`buildBundleStatus\`. Each step is a task of its own, as the controller awaits between them (gatherBundle's reads and the apply are I/O and left out), so the longest step is the longest time the event loop is held; \`monitorEventLoopDelay\` (1 ms resolution) sees the same from outside (and also counts time the process waited for a CPU). The Bundles are stored as under an older CRD without bounds: the CRD now refuses more than 256 resources at \`kubectl apply\`. The last two rows hand the over-bound specs to validation, ordering, planning and status directly, as if the operator's own bound were gone (a what-if: the operator never gets there), then build the status a second time over the first, as every later pass does. The 1 MiB string is valid as far as the operator can tell; the apiserver refuses it at apply (ConfigMap data over 1 MiB), which the bad-input integration suite checks. \`claimsByObject\` is not this Bundle's own pass: every pass of another Bundle in the namespace (\`buildPlanInput\`'s claims) and the released-object sweeper's check run it over the namespace's stored Bundles, parsed or not. Outcome: the Error condition the pass writes (shortened), or what it plans. ${cases[0]?.runs.length ?? 0} run(s) each after a warm-up, each from a collected heap (a collection the pass itself triggers counts); the step column names the longest step of the worst run.`,
      '',
    );
    out.push(markdownTable(LOOP_HEADER, loopRows(cases)), '');
    out.push(
      `Target: no step of the operator holds the event loop 100 ms or more (issue 12 measured 25 s for ${h.resources.toLocaleString('en-US')} ConfigMaps before) - ${met(cases.some((c) => c.path === 'controller') ? worst < 100 : undefined)} (longest: ${worst.toFixed(1)} ms).`,
    );
    if (unbounded.length > 0) {
      const worstUnbounded = unbounded
        .flatMap((c) => c.runs.flatMap((r) => r.steps))
        .reduce((a, b) => (b.ms > a.ms ? b : a), { name: '-', ms: 0 });
      out.push(`- Past the bound (what-if): longest step ${worstUnbounded.ms.toFixed(0)} ms (${worstUnbounded.name}).`);
    }
    out.push('');
    if (scaling.rows.length > 0) {
      const ratio = (r: ScalingRow) => r.fullMs / r.halfMs;
      const steep = scaling.rows.filter((r) => ratio(r) >= 3).map((r) => `\`${r.name}\``);
      const atBound = Math.max(...scaling.rows.filter((r) => ratio(r) >= 3).map((r) => r.boundMs));
      out.push(
        `How each step grows past the bound: the wide Bundle's steps at the bound (${scaling.bound} ConfigMaps), ${scaling.half.toLocaleString('en-US')} and ${scaling.full.toLocaleString('en-US')} (medians). Near 2x from ${scaling.half.toLocaleString('en-US')} to ${scaling.full.toLocaleString('en-US')} is linear, near 4x quadratic; collections over the larger heap (and a busy machine) push the larger size up too.`,
        '',
      );
      out.push(
        markdownTable(
          [
            'step',
            `at ${scaling.bound} (ms)`,
            `at ${scaling.half.toLocaleString('en-US')} (ms)`,
            `at ${scaling.full.toLocaleString('en-US')} (ms)`,
            'growth when doubled',
          ],
          scaling.rows.map((r) => [r.name, r.boundMs.toFixed(1), r.halfMs.toFixed(1), r.fullMs.toFixed(1), `${ratio(r).toFixed(1)}x`]),
        ),
        '',
      );
      out.push(
        steep.length > 0
          ? `Growing faster than linearly: ${steep.join(', ')}; ${atBound.toFixed(1)} ms at most at the bound of ${scaling.bound} resources, so harmless while the bound holds, and the first thing to change if it is ever raised.`
          : 'Every step grows about linearly.',
        '',
      );
    }
  }
  if (report.unrelatedHeap) {
    const r = report.unrelatedHeap;
    out.push('### Bundle controller heap beside unrelated objects', '');
    out.push(
      `The operator in-process (cluster-wide, no \`--namespace\`; no garbage collector; ${report.config.reconciler.workers} workers) on a fresh control plane, with one Bundle listing one Secret and one Pod (no node runs it: the apiserver stores it Pending, and the operator counts a Pod ready once it exists). Then ${r.perKind} unrelated Secrets and ${r.perKind} unrelated Pods (a few hundred bytes of data each; spread over ${r.namespaces} namespaces, the Bundle's own among them; created in ${r.createSeconds.toFixed(0)} s), then an edit of the Bundle's two objects, Ready again at the new generation (so both watches have delivered events newer than every unrelated object). \`heapUsed\` after forced full GCs (the lower of two samples a second apart) before and after. The Bundle controller's caches select on \`smith.atlassian.com/managed=true\`, so the heap must stay flat. The second row starts, on the same cluster, full-object informers for Secrets and Pods without that selector (what the controller kept before issue 12) and measures what they add.`,
      '',
    );
    out.push(markdownTable(HEAP_HEADER, heapRows(r)), '');
    out.push(
      `"Of which data" is the growth of the spaces that hold JavaScript objects (new, old, large-object); the rest is bytecode and compiled code (code and trusted spaces), which the bench's own loops also add.`,
      '',
    );
    out.push(
      `Target: flat: under 1 MiB of data growth over all ${2 * r.perKind} unrelated objects (one cached Pod is a few KiB), none of them cached, and the Bundle still Ready - ${met(r.dataGrowthBytes < 2 ** 20 && r.cachedObjects === 2 && r.bundleReady)} (${(r.dataGrowthBytes / (2 * r.perKind)).toFixed(1)} data bytes per unrelated object).`,
      '',
    );
  }
  return out;
}

/** A scenario result that carries its own rows (`figures: Figure[]`) supplies all of them; otherwise bench/figures.ts derives them. */
function ownFigures(result: unknown): Figure[] | undefined {
  if (typeof result !== 'object' || result === null || !('figures' in result)) return undefined;
  return Array.isArray(result.figures) ? (result.figures as Figure[]) : undefined;
}

/** Every scenario's headline figures, in the order the tables show them. */
function collectFigures(report: Report): Figure[] {
  const { config } = report;
  const rows = <T>(result: T | undefined, derive: (r: T) => Figure[]): Figure[] =>
    result === undefined ? [] : (ownFigures(result) ?? derive(result));
  return [
    ...rows(report.equalQps, (r) => cascadeFigures(r, config)),
    ...rows(report.policies, (r) => policyFigures(r, config)),
    ...rows(report.unthrottled, (r) => unthrottledFigures(r, config)),
    ...memoryFigures(report.memory, report.realMemory),
    ...rows(report.reconciler, reconcilerFigures),
    ...rows(report.sharding, shardingFigures),
    ...hostileFigures(report.hostileLoop, report.unrelatedHeap),
    ...rows(report.expiry, expiryFigures),
  ];
}

async function runScenario<T>(report: Report, name: string, run: () => Promise<T>): Promise<T | undefined> {
  let failed = false;
  try {
    return await run();
  } catch (err) {
    failed = true;
    const message = err instanceof Error ? err.message : String(err);
    log(`${name} failed: ${message}`);
    report.failures.push(`${name}: ${message.split('\n')[0] ?? ''}`);
    return undefined;
  } finally {
    // A failed scenario may leave its control plane behind: never carry it into the next one. --quick shares
    // control planes between scenarios (bench/cluster.ts) and keeps them until a failure or the end.
    if (failed || !report.config.quick) stopAllControlPlanes();
  }
}

async function main(): Promise<number> {
  const config = benchConfig(process.argv.slice(2), process.env);
  const started = new Date();
  const t0 = performance.now();
  const report: Report = { config, failures: [] };
  shareControlPlanes(config.quick);
  if (config.only.has('memory')) {
    log(`memory: ${config.memory.syntheticObjects} synthetic objects`);
    report.memory = await runScenario(report, 'memory (synthetic)', () =>
      syntheticMemory(
        { sizes: [10_000, config.memory.syntheticObjects, config.memory.largeObjects], objectsPerOwner: config.memory.objectsPerOwner },
        log,
      ),
    );
    if (config.memory.realObjects > 0) {
      log(`memory: ${config.memory.realObjects} real objects`);
      report.realMemory = await runScenario(report, 'memory (real apiserver)', () =>
        realMemory(config.memory.realObjects, config.memory.objectsPerOwner, log),
      );
    }
  }
  if (config.only.has('cascade')) report.equalQps = await runScenario(report, 'cascade at equal QPS', () => equalQpsCascade(config, log));
  if (config.only.has('policies'))
    report.policies = await runScenario(report, 'foreground and orphan cascades', () => policyCascades(config, log));
  if (config.only.has('unthrottled'))
    report.unthrottled = await runScenario(report, 'unthrottled cascade', () => unthrottledCascade(config, log));
  if (config.only.has('reconciler')) {
    log(
      `reconciler: one Bundle of ${config.reconciler.singleObjects} ConfigMaps; ${config.reconciler.bundles} Bundles x ${config.reconciler.objectsPerBundle} ConfigMaps`,
    );
    const single =
      config.reconciler.singleObjects > 0
        ? await runScenario(report, 'reconciler (one Bundle)', () => singleBundleBench(config, log))
        : undefined;
    const fleet =
      config.reconciler.bundles > 0 ? await runScenario(report, 'reconciler (many Bundles)', () => fleetBench(config, log)) : undefined;
    report.reconciler = { ...(single ? { single } : {}), ...(fleet ? { fleet } : {}) };
  }
  if (config.only.has('sharding')) {
    log(
      `sharding: ${config.sharding.bundles} Bundles x ${config.sharding.objectsPerBundle} ConfigMaps over one and two operator processes`,
    );
    report.sharding = await runScenario(report, 'sharding', () => shardingBench(config, log));
  }
  if (config.only.has('hostile')) {
    log('hostile: the event loop under hostile Bundles');
    report.hostileLoop = await runScenario(report, 'hostile (event loop)', () => hostileLoop(config, log));
    log(
      `hostile: the Bundle controller's heap beside ${config.hostile.unrelatedPerKind} unrelated Secrets and ${config.hostile.unrelatedPerKind} Pods`,
    );
    report.unrelatedHeap = await runScenario(report, 'hostile (heap)', () => unrelatedObjectsHeap(config, log));
  }
  if (config.only.has('expiry')) {
    log(`expiry: ${config.expiry.objects} countdowns of ${config.expiry.delaySeconds} s ending at once`);
    report.expiry = await runScenario(report, 'expiry', () => expiryBench(config, log));
  }
  const tookSeconds = (performance.now() - t0) / 1000;
  const markdown = render(report, started, tookSeconds);
  process.stdout.write(`\n${markdown}\n`);
  const results: BenchResults = {
    generatedAt: started.toISOString(),
    tookSeconds: Math.round(tookSeconds),
    quick: config.quick,
    machine: machineFacts(),
    versions: versions(),
    config: { ...config, only: [...config.only] },
    figures: collectFigures(report),
    failures: report.failures,
    note: null,
  };
  const json = serializeResults(results);
  const root = repoRoot();
  const pagePath = join(root, 'docs', 'benchmarks.md');
  const page = (notes: string | null) => pageWithSummary(markdown, renderSummary(results), notes);
  // A smoke run's numbers are not results, and a BENCH_ONLY run would drop the other sections: only a full run of
  // every scenario replaces the committed files. --out sends any run's files elsewhere.
  const complete = BENCH_SCENARIOS.every((s) => config.only.has(s));
  if (config.outDir) {
    mkdirSync(config.outDir, { recursive: true });
    writeFileSync(join(config.outDir, 'benchmarks.md'), page(null));
    writeFileSync(join(config.outDir, 'results.json'), json);
    log(`wrote benchmarks.md and results.json in ${config.outDir}`);
  } else if (!config.quick && complete) {
    const notes = notesOf(readFileSync(pagePath, 'utf8'));
    writeFileSync(pagePath, page(notes));
    writeFileSync(join(root, 'bench', 'results.json'), json);
    log(
      `wrote docs/benchmarks.md (summary from the results; ${notes === null ? 'no hand-written notes found to keep' : 'its hand-written notes kept'}) and bench/results.json`,
    );
  } else if (!config.quick) {
    log('BENCH_ONLY ran some scenarios only: docs/benchmarks.md and bench/results.json are left as they are');
  }
  return report.failures.length > 0 ? 1 : 0;
}

const isExposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
const exit = (code: number) => {
  process.exitCode = code;
};
if (!isExposed) {
  reexecWithExposeGc().then(exit, (err: unknown) => {
    log(`could not re-execute with --expose-gc: ${String(err)}`);
    exit(1);
  });
} else {
  const onSignal = (signal: NodeJS.Signals) => () => {
    log(`${signal}: stopping control planes`);
    stopAllControlPlanes();
    process.exit(130);
  };
  process.on('SIGINT', onSignal('SIGINT'));
  process.on('SIGTERM', onSignal('SIGTERM'));
  process.on('exit', stopAllControlPlanes);
  main().then(
    (code) => {
      exit(code);
      // Keep-alive sockets and informer timers must not hold the process open.
      process.exit(code);
    },
    (err: unknown) => {
      log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      stopAllControlPlanes();
      process.exit(1);
    },
  );
}
