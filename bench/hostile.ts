/**
 * Issue 12's denial-of-service and memory figures.
 *
 * Event loop: hostile Bundles through the Bundle controller's own pure
 * steps, in this process, no control plane: the watch event's JSON decoded,
 * the informer handler's wake (listedObjects), claimsByObject (which every
 * other pass in the namespace and the sweeper run over stored Bundles,
 * parsed or not), the schema parse, and for a Bundle that parses,
 * buildPlanInput + planBundle (validation and ordering inside) and the
 * status the pass would write. Each step is a task of its own (the
 * controller awaits between them), so the longest single step is the
 * longest time the event loop is held; monitorEventLoopDelay watches the
 * same from the outside. Two more cases hand the over-bound specs straight
 * to validation, ordering, planning and status, as if the schema's bound
 * were gone (a what-if), and the wide one is also timed at the bound and at
 * half its size, to show how each step grows.
 *
 * Heap: the operator on a real apiserver (cluster-wide, no garbage
 * collector), one Bundle listing a Secret and a Pod, then many unrelated
 * Secrets and Pods created in its namespace and others; heap after forced
 * GCs before and after. For scale, full-object informers without the
 * managed-label selector (what the controller kept before issue 12) are
 * then started on the same cluster and measured the same way.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { applyCrd } from '../hack/crd-install.js';
import { BundleSchema, formatIssues } from '../src/api/bundle.js';
import { MAX_RESOURCES } from '../src/api/resource.js';
import { BUNDLE_RESOURCE_TYPE } from '../src/kube/bundle-resource.js';
import { BundleConditionTypes, Reasons } from '../src/api/names.js';
import { findConditionByType } from '../src/core/bundle/conditions.js';
import { errorStatus } from '../src/core/bundle/exit-status.js';
import { buildGraph, levels, topologicalOrder } from '../src/core/bundle/graph.js';
import type { KindTable } from '../src/core/bundle/kinds.js';
import { listingsByObject, listedObjects } from '../src/core/bundle/ownership.js';
import { buildPlanInput, type BundleToPlan } from '../src/core/bundle/plan-input.js';
import { planBundle, type BundlePlan } from '../src/core/bundle/plan.js';
import { buildBundleStatus } from '../src/core/bundle/status.js';
import { validateBundle } from '../src/core/bundle/validate.js';
import type { KubeClient } from '../src/kube/client.js';
import type { KubeObject, ResourceType } from '../src/kube/types.js';
import { silentLogger } from '../src/observability/logger.js';
import { systemClock } from '../src/kube/clock.js';
import { SupervisedInformer } from '../src/runtime/informer.js';
import { Operator } from '../src/operator.js';
import { createNamespace, forEachConcurrently, sleep, startBenchCluster, type BenchCluster } from './cluster.js';
import type { BenchConfig } from './config.js';
import { settledHeap } from './memory.js';
import { isReady } from './reconciler.js';

// ---------------------------------------------------------------------------
// Event loop under a hostile Bundle
// ---------------------------------------------------------------------------

export interface LoopStep {
  name: string;
  ms: number;
}

export interface LoopRun {
  totalMs: number;
  longest: LoopStep;
  steps: LoopStep[];
  /** monitorEventLoopDelay's max over the run (1 ms resolution). */
  loopDelayMaxMs: number;
}

export interface LoopCase {
  title: string;
  /** The Bundle's size as the watch delivers it. */
  jsonBytes: number;
  /** 'controller': the controller's steps from the watch event on; 'unbounded': validation and ordering handed the spec directly. */
  path: 'controller' | 'unbounded';
  runs: LoopRun[];
  /** What the pass would say: the Error condition's message (shortened), or what it plans. */
  outcome: string;
}

const NAMESPACE = 'bench-hostile';
const KINDS: KindTable = new Map([['v1/ConfigMap', { namespaced: true, plural: 'configmaps' }]]);

type Raw = Record<string, unknown>;
const cm = (name: string, extra: Raw = {}): Raw => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { a: 'b' },
  ...extra,
});

/** A Bundle as the API serves it: stored under an older CRD without bounds, our finalizer on, no status yet. */
function storedBundle(name: string, resources: Raw[]): Raw {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: `0000-${name}`,
      generation: 1,
      resourceVersion: '1000',
      creationTimestamp: '2026-11-01T10:00:00Z',
      finalizers: ['smith.atlassian.com/deleteResources'],
    },
    spec: { resources },
  };
}

function nested(depth: number): Raw {
  let v: Raw = { leaf: 'x' };
  for (let i = 1; i < depth; i++) v = { n: v };
  return v;
}

interface HostileInput {
  title: string;
  /** Built when its case runs, so the other cases' inputs are not in the heap the collector walks meanwhile. */
  bundle: () => Raw;
}

function hostileInputs(h: BenchConfig['hostile']): HostileInput[] {
  return [
    {
      title: `${h.resources.toLocaleString('en-US')} ConfigMaps`,
      bundle: () =>
        storedBundle(
          'wide',
          Array.from({ length: h.resources }, (_, i) => ({ name: `r${i}`, spec: { object: cm(`wide-${i}`) } })),
        ),
    },
    {
      title: `a ${h.chain.toLocaleString('en-US')}-long reference chain`,
      bundle: () =>
        storedBundle(
          'chain',
          Array.from({ length: h.chain }, (_, i) => ({
            name: `c${i}`,
            ...(i > 0 ? { references: [{ resource: `c${i - 1}` }] } : {}),
            spec: { object: cm(`chain-${i}`) },
          })),
        ),
    },
    {
      title: `an object nested ${h.depth.toLocaleString('en-US')} levels`,
      bundle: () =>
        storedBundle('deep', [
          { name: 'ok', spec: { object: cm('deep-ok') } },
          { name: 'deep', spec: { object: cm('deep', { spec: nested(h.depth) }) } },
        ]),
    },
    {
      title: `a ${mib(h.stringBytes)} string (ConfigMap data)`,
      bundle: () => storedBundle('long', [{ name: 'long', spec: { object: cm('long', { data: { big: 'x'.repeat(h.stringBytes) } }) } }]),
    },
  ];
}

function mib(bytes: number): string {
  return bytes >= 2 ** 20 && bytes % 2 ** 20 === 0 ? `${bytes / 2 ** 20} MiB` : `${bytes.toLocaleString('en-US')}-byte`;
}

function shorten(text: string, max = 140): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One task of the pass: a task boundary first (the controller awaits between steps), then the step, timed. */
async function step<T>(steps: LoopStep[], name: string, work: () => T): Promise<T> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  const started = performance.now();
  const out = work();
  steps.push({ name, ms: performance.now() - started });
  return out;
}

const NOW_ISO = '2026-11-01T10:00:00Z';
const NOW_MS = Date.parse(NOW_ISO);

function planOutcome(conditions: ReturnType<typeof buildBundleStatus>['conditions'], plan: BundlePlan): string {
  const error = findConditionByType(conditions, BundleConditionTypes.Error);
  if (error?.status === 'True') return `Error (${error.reason ?? ''}): ${error.message ?? ''}`;
  const count = (action: string) => plan.resources.filter((r) => r.action === action).length;
  const blocked = count('blocked');
  return `no issue: ${count('apply') + count('adopt')} to apply${blocked > 0 ? `, ${blocked} waiting for their dependencies` : ''}`;
}

/** The controller's steps for one Bundle, from the watch event's text to the status the pass would write. */
async function controllerPass(text: string, steps: LoopStep[]): Promise<string> {
  const event = await step(steps, 'watch event JSON.parse', () => JSON.parse(text) as { object: KubeObject });
  const cached = event.object;
  // The Bundle informer's handler wakes the Bundles listing the same objects (BundleController.start).
  await step(steps, 'informer handler (listedObjects)', () => listedObjects(cached).length);
  // Every other pass in the namespace (buildPlanInput's claims) and the released-object sweeper read the stored Bundles, parsed or not.
  await step(steps, "claimsByObject (a neighbour's pass, the sweeper)", () => listingsByObject([cached]).size);
  const parsed = await step(steps, 'schema parse (BundleSchema)', () => BundleSchema.safeParse(cached));
  if (!parsed.success) {
    return await step(steps, 'Error status', () => {
      const message = `invalid Bundle: ${formatIssues(parsed.error).join('; ')}`;
      const status = errorStatus({ metadata: cached.metadata, status: undefined }, Reasons.TerminalError, message, NOW_ISO);
      const error = findConditionByType(status.conditions, BundleConditionTypes.Error);
      return `Error (${error?.reason ?? ''}): ${error?.message ?? ''}`;
    });
  }
  const bundle = parsed.data;
  // gatherBundle's reads are I/O; nothing is live yet, as for a new Bundle.
  const plan = await step(steps, 'buildPlanInput + planBundle', () =>
    planBundle(
      buildPlanInput({ bundle, kinds: KINDS, crdReadiness: new Map(), objects: [], bundles: [bundle], now: NOW_MS, stampAt: NOW_MS }),
    ),
  );
  return await step(steps, 'buildBundleStatus', () => planOutcome(buildBundleStatus(plan, {}, bundle.status, NOW_ISO).conditions, plan));
}

/** Validation and ordering handed an over-bound spec directly (as if the schema had no bound). */
async function unboundedPass(bundle: BundleToPlan, steps: LoopStep[]): Promise<string> {
  const { spec } = bundle;
  const ref = { name: bundle.metadata.name, namespace: bundle.metadata.namespace };
  await step(steps, 'validateBundle', () => validateBundle(ref, spec, KINDS));
  await step(steps, 'topologicalOrder + levels', () => {
    const graph = buildGraph(
      spec.resources.map((r) => r.name),
      spec.resources.flatMap((r) => (r.references ?? []).map((x) => [r.name, x.resource] as const)),
    );
    return levels(graph).length + topologicalOrder(graph).length;
  });
  const plan = await step(steps, 'buildPlanInput + planBundle', () =>
    planBundle(
      buildPlanInput({ bundle, kinds: KINDS, crdReadiness: new Map(), objects: [], bundles: [bundle], now: NOW_MS, stampAt: NOW_MS }),
    ),
  );
  const first = await step(steps, 'buildBundleStatus', () => buildBundleStatus(plan, {}, undefined, NOW_ISO));
  // Every later pass builds the status over the one it wrote before.
  return await step(steps, 'buildBundleStatus over the previous status', () =>
    planOutcome(buildBundleStatus(plan, {}, first, NOW_ISO).conditions, plan),
  );
}

async function timed(pass: (steps: LoopStep[]) => Promise<string>): Promise<{ run: LoopRun; outcome: string }> {
  // Start from a collected heap: a collection the pass's own garbage triggers counts, the previous case's does not.
  (globalThis as { gc?: () => void }).gc?.();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const steps: LoopStep[] = [];
  histogram.enable();
  const outcome = await pass(steps);
  // One more turn so the monitor samples the delay the last step caused.
  await sleep(5);
  histogram.disable();
  const longest = steps.reduce((a, b) => (b.ms > a.ms ? b : a), { name: '-', ms: 0 });
  const totalMs = steps.reduce((sum, s) => sum + s.ms, 0);
  return { run: { totalMs, longest, steps, loopDelayMaxMs: histogram.count > 0 ? histogram.max / 1e6 : 0 }, outcome };
}

/** One step of the unbounded pass at half the size and at the full size (medians over the runs). */
export interface ScalingRow {
  name: string;
  /** At the schema's bound (MAX_RESOURCES). */
  boundMs: number;
  halfMs: number;
  fullMs: number;
}

export interface LoopResult {
  cases: LoopCase[];
  /** The wide Bundle past the bound at half and full size: how each step grows when the size doubles. */
  scaling: { bound: number; half: number; full: number; rows: ScalingRow[] };
}

function wideSpecBundle(resources: number): BundleToPlan {
  const raw = storedBundle(
    'wide',
    Array.from({ length: resources }, (_, i) => ({ name: `r${i}`, spec: { object: cm(`wide-${i}`) } })),
  );
  // The schema's output for these is the input itself (no defaults to fill, no unknown keys to strip).
  return JSON.parse(JSON.stringify(raw)) as BundleToPlan;
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

export async function hostileLoop(config: BenchConfig, log: (line: string) => void): Promise<LoopResult> {
  const h = config.hostile;
  const runs = h.runs;
  const inputs = hostileInputs(h);
  // Warm up: the same code paths on a small valid Bundle, so the first case does not pay for the JIT alone.
  for (let i = 0; i < 20; i++)
    await controllerPass(
      JSON.stringify({
        type: 'ADDED',
        object: storedBundle('warm', [
          { name: 'a', spec: { object: cm('warm-a') } },
          { name: 'b', references: [{ resource: 'a' }], spec: { object: cm('warm-b') } },
        ]),
      }),
      [],
    );

  const cases: LoopCase[] = [];
  for (const input of inputs) {
    // As the watch delivers it: one line of JSON per event.
    const text = JSON.stringify({ type: 'ADDED', object: input.bundle() });
    const result: LoopCase = { title: input.title, jsonBytes: Buffer.byteLength(text), path: 'controller', runs: [], outcome: '' };
    for (let r = 0; r < runs; r++) {
      const { run, outcome } = await timed((steps) => controllerPass(text, steps));
      result.runs.push(run);
      result.outcome = outcome;
      log(
        `  ${input.title}: ${run.totalMs.toFixed(0)} ms in all, longest block ${run.longest.ms.toFixed(1)} ms (${run.longest.name}); ${shorten(outcome, 100)}`,
      );
      log(`    ${run.steps.map((x) => `${x.name} ${x.ms.toFixed(1)}`).join(', ')}`);
    }
    cases.push(result);
  }
  // The two over-bound Bundles once more, past the schema: what validation and ordering alone cost at that size.
  for (const input of inputs.slice(0, 2)) {
    const text = JSON.stringify(input.bundle());
    // The schema's output for these is the input itself (no defaults to fill, no unknown keys to strip).
    const bundle = JSON.parse(text) as BundleToPlan;
    const result: LoopCase = {
      title: `${input.title}, past the schema's bound`,
      jsonBytes: Buffer.byteLength(text),
      path: 'unbounded',
      runs: [],
      outcome: '',
    };
    for (let r = 0; r < runs; r++) {
      const { run, outcome } = await timed((steps) => unboundedPass(bundle, steps));
      result.runs.push(run);
      result.outcome = outcome;
      log(
        `  ${result.title}: ${run.totalMs.toFixed(0)} ms in all, longest block ${run.longest.ms.toFixed(1)} ms (${run.longest.name}); ${shorten(outcome, 100)}`,
      );
      log(`    ${run.steps.map((x) => `${x.name} ${x.ms.toFixed(1)}`).join(', ')}`);
    }
    cases.push(result);
  }
  // How each step grows: the wide Bundle past the bound at half its size (the full size's runs are above).
  const half = Math.max(1, Math.floor(h.resources / 2));
  const halfBundle = wideSpecBundle(half);
  const boundBundle = wideSpecBundle(MAX_RESOURCES);
  const halfRuns: LoopRun[] = [];
  const boundRuns: LoopRun[] = [];
  for (let r = 0; r < runs; r++) {
    halfRuns.push((await timed((steps) => unboundedPass(halfBundle, steps))).run);
    boundRuns.push((await timed((steps) => unboundedPass(boundBundle, steps))).run);
  }
  const fullRuns = cases.find((c) => c.path === 'unbounded')?.runs ?? [];
  const names = fullRuns[0]?.steps.map((x) => x.name) ?? [];
  const stepMs = (runsOf: readonly LoopRun[], name: string) =>
    medianOf(runsOf.map((run) => run.steps.find((x) => x.name === name)?.ms ?? NaN));
  const rows = names.map((name) => ({
    name,
    boundMs: stepMs(boundRuns, name),
    halfMs: stepMs(halfRuns, name),
    fullMs: stepMs(fullRuns, name),
  }));
  for (const row of rows)
    log(
      `  ${row.name}: ${row.boundMs.toFixed(1)} ms at ${MAX_RESOURCES}, ${row.halfMs.toFixed(1)} ms at ${half}, ${row.fullMs.toFixed(1)} ms at ${h.resources} (x${(row.fullMs / row.halfMs).toFixed(1)})`,
    );
  return { cases, scaling: { bound: MAX_RESOURCES, half, full: h.resources, rows } };
}

export const LOOP_HEADER = [
  'hostile Bundle',
  'path',
  'JSON size',
  'total (ms)',
  'longest block (ms)',
  'step holding it',
  'loop delay max (ms)',
  'outcome',
];

export function loopRows(cases: readonly LoopCase[]): string[][] {
  return cases.map((c) => {
    const worst = c.runs.reduce((a, b) => (b.longest.ms > a.longest.ms ? b : a));
    return [
      c.title,
      c.path === 'controller' ? "the controller's steps" : 'what-if: the spec straight to validation and planning',
      `${(c.jsonBytes / 2 ** 20).toFixed(2)} MiB`,
      c.runs.map((r) => r.totalMs.toFixed(1)).join(' / '),
      c.runs.map((r) => r.longest.ms.toFixed(1)).join(' / '),
      worst.longest.name,
      c.runs.map((r) => r.loopDelayMaxMs.toFixed(1)).join(' / '),
      shorten(c.outcome),
    ];
  });
}

// ---------------------------------------------------------------------------
// Bundle controller heap with unrelated objects
// ---------------------------------------------------------------------------

export interface UnrelatedHeapResult {
  /** Unrelated Secrets, and as many Pods. */
  perKind: number;
  namespaces: number;
  createSeconds: number;
  beforeBytes: number;
  afterBytes: number;
  /** The part of the growth in the spaces that hold data (new, old, large-object), not compiled code (the bench's own JIT). */
  dataGrowthBytes: number;
  /** Objects in the Bundle controller's caches after the unrelated objects exist. */
  cachedObjects: number;
  /** The Bundle Ready=True at its generation, after an edit made once the unrelated objects existed. */
  bundleReady: boolean;
  /** For scale: heap growth when full-object informers without the label selector hold the same cluster's Secrets and Pods. */
  unselected?: { bytes: number; objects: number };
}

const WHO = 'bench.bundlesmith.dev/unrelated';

/** A few hundred bytes of data, as a small application's credentials are. */
function unrelatedSecret(namespace: string, i: number): Raw {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `unrelated-${i}`, namespace, labels: { app: `service-${i % 50}`, [WHO]: 'true' } },
    type: 'Opaque',
    stringData: {
      username: `svc-${i}`,
      password: randomBytes(24).toString('base64'),
      'config.json': JSON.stringify({
        endpoint: `https://service-${i % 50}.example.internal:8443`,
        timeoutSeconds: 30,
        retries: 3,
        token: randomBytes(48).toString('hex'),
      }),
    },
  };
}

/** A Pod as a Deployment would stamp it, without the owner: no node runs it, the apiserver stores it Pending. */
function unrelatedPod(namespace: string, i: number): Raw {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `unrelated-${i}`,
      namespace,
      labels: { app: `service-${i % 50}`, 'pod-template-hash': 'abc123', [WHO]: 'true' },
      annotations: { 'example.com/revision': String(i % 7) },
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: `registry.example.internal/service-${i % 50}:1.${i % 10}.0`,
          args: ['--listen=:8080', '--log-format=json'],
          env: [
            { name: 'SERVICE_INDEX', value: String(i) },
            { name: 'REGION', value: 'eu-west-1' },
          ],
          ports: [{ name: 'http', containerPort: 8080 }],
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        },
      ],
    },
  };
}

function guardedBundle(namespace: string, round: number): Raw {
  const annotations = { 'bench.bundlesmith.dev/round': String(round) };
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'guarded', namespace },
    spec: {
      resources: [
        {
          name: 'credentials',
          spec: {
            object: {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'app-credentials', annotations },
              stringData: { password: 'not-a-real-one' },
            },
          },
        },
        {
          name: 'app',
          references: [{ resource: 'credentials' }],
          spec: {
            object: {
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: 'app', annotations },
              spec: { containers: [{ name: 'app', image: 'registry.example.internal/app:1.0.0' }] },
            },
          },
        },
      ],
    },
  };
}

async function resolve(cluster: BenchCluster, apiVersion: string, kind: string): Promise<ResourceType> {
  const rt = await cluster.discovery.resolve(apiVersion, kind);
  if (!rt) throw new Error(`the apiserver does not serve ${apiVersion} ${kind}`);
  return rt;
}

async function waitForBundleReady(cluster: BenchCluster, namespace: string, generation: number, timeoutMs: number): Promise<KubeObject> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const b = await cluster.admin.get(BUNDLE_RESOURCE_TYPE, namespace, 'guarded');
    if ((b.metadata.generation ?? 0) >= generation && isReady(b)) return b;
    if (Date.now() > deadline)
      throw new Error(
        `Bundle ${namespace}/guarded not Ready at generation ${generation} within ${timeoutMs / 1000} s: ${JSON.stringify((b.status as { conditions?: unknown } | undefined)?.conditions ?? [])}`,
      );
    await sleep(50);
  }
}

/** Spaces holding JavaScript objects; the others hold bytecode and compiled code (code, trusted) or V8's own (read-only). */
const DATA_SPACES = new Set(['new_space', 'old_space', 'large_object_space', 'new_large_object_space']);

function heapSpaces(): Map<string, number> {
  return new Map(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
}

/** Which heap spaces grew, for the log (code space growing is the bench's own JIT, not data). */
function spaceGrowth(before: Map<string, number>, after: Map<string, number>): string {
  return (
    [...after]
      .map(([name, used]) => [name, used - (before.get(name) ?? 0)] as const)
      .filter(([, d]) => Math.abs(d) >= 64 * 1024)
      .map(([name, d]) => `${name} ${d >= 0 ? '+' : ''}${(d / 1024).toFixed(0)} KiB`)
      .join(', ') || 'no space moved 64 KiB'
  );
}

/** Lower of two settled samples a second apart (GC timing only ever adds upwards). */
async function lowHeap(): Promise<number> {
  const first = await settledHeap();
  await sleep(1_000);
  return Math.min(first, await settledHeap());
}

export async function unrelatedObjectsHeap(config: BenchConfig, log: (line: string) => void): Promise<UnrelatedHeapResult> {
  const { unrelatedPerKind: perKind, namespaces: nsCount } = config.hostile;
  const cluster = await startBenchCluster();
  let operator: Operator | undefined;
  let client: KubeClient | undefined;
  const informers: SupervisedInformer[] = [];
  try {
    await applyCrd(cluster.state.kubeconfig);
    const secrets = await resolve(cluster, 'v1', 'Secret');
    const pods = await resolve(cluster, 'v1', 'Pod');
    const serviceAccounts = await resolve(cluster, 'v1', 'ServiceAccount');
    // No kube-controller-manager here: nobody creates the `default` ServiceAccount the ServiceAccount admission plugin wants for a Pod.
    const namespaces: string[] = [];
    for (let i = 0; i < nsCount; i++) {
      const ns = await createNamespace(cluster, i === 0 ? 'bench-guarded' : `bench-unrelated-${i}`);
      await cluster.admin.create(serviceAccounts, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'default', namespace: ns },
      });
      namespaces.push(ns);
    }
    const home = namespaces[0] ?? 'bench-guarded';

    client = await cluster.client({ maxSockets: Infinity });
    // Cluster-wide (no --namespace): the case the issue measured, every namespace's Secrets and Pods in reach.
    operator = new Operator({
      client,
      clock: systemClock,
      logger: silentLogger(),
      workers: config.reconciler.workers,
      releaseKey: randomBytes(32),
      releaseKeySecret: { namespace: 'default', name: 'bundlesmith-release-key' },
    });
    await operator.start();
    while (!operator.ready()) await sleep(20);
    await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, guardedBundle(home, 1), { fieldManager: 'bench', force: true });
    await waitForBundleReady(cluster, home, 1, 60_000);
    log(`  Bundle ${home}/guarded (one Secret, one Pod) Ready; ${operator.bundles.objects.size()} object(s) cached`);
    await sleep(2_000);
    const beforeBytes = await lowHeap();
    const spacesBefore = heapSpaces();

    // The unrelated objects come through a client of their own, closed before the second sample: its sockets and
    // TLS buffers are the bench's, not the operator's.
    const creator = await cluster.client({ maxSockets: 32 });
    const started = performance.now();
    try {
      for (const [rt, make] of [
        [secrets, unrelatedSecret],
        [pods, unrelatedPod],
      ] as const) {
        await forEachConcurrently(perKind, 32, async (i) => {
          await creator.create(rt, make(namespaces[i % namespaces.length] ?? home, i));
        });
        log(`  ${perKind} unrelated ${rt.plural} created over ${namespaces.length} namespaces`);
      }
    } finally {
      creator.close();
    }
    const createSeconds = (performance.now() - started) / 1000;

    // An edit of both listed objects after the last unrelated one: Ready at the new generation means both
    // watches have delivered events newer than every unrelated creation (each watch is ordered).
    const edited = await cluster.admin.apply(BUNDLE_RESOURCE_TYPE, guardedBundle(home, 2), { fieldManager: 'bench', force: true });
    const generation = edited.metadata.generation ?? 2;
    await waitForBundleReady(cluster, home, generation, 120_000);
    const cachedPod = operator.bundles.objects.get(pods, home, 'app');
    const bundleReady =
      isReady(await cluster.admin.get(BUNDLE_RESOURCE_TYPE, home, 'guarded')) &&
      cachedPod?.metadata.annotations?.['bench.bundlesmith.dev/round'] === '2';
    await sleep(1_000);
    const afterBytes = await lowHeap();
    const spacesAfter = heapSpaces();
    const dataGrowthBytes = [...DATA_SPACES].reduce((sum, name) => sum + (spacesAfter.get(name) ?? 0) - (spacesBefore.get(name) ?? 0), 0);
    log(`  heap spaces: ${spaceGrowth(spacesBefore, spacesAfter)}`);
    const cachedObjects = operator.bundles.objects.size();
    const result: UnrelatedHeapResult = {
      perKind,
      namespaces: namespaces.length,
      createSeconds,
      beforeBytes,
      afterBytes,
      dataGrowthBytes,
      cachedObjects,
      bundleReady,
    };
    log(
      `  heap ${(beforeBytes / 2 ** 20).toFixed(1)} -> ${(afterBytes / 2 ** 20).toFixed(1)} MiB over ${2 * perKind} unrelated objects (${((afterBytes - beforeBytes) / (2 * perKind)).toFixed(1)} bytes each); ${cachedObjects} cached; Ready: ${bundleReady}`,
    );

    // For scale: what informers without the selector (the controller before issue 12) hold of the same cluster.
    for (const rt of [secrets, pods]) informers.push(new SupervisedInformer(client, rt));
    for (const informer of informers) informer.start();
    await Promise.all(informers.map((i) => i.waitForSync()));
    const withUnselected = await lowHeap();
    result.unselected = { bytes: withUnselected - afterBytes, objects: informers.reduce((n, i) => n + i.list().length, 0) };
    log(
      `  for scale, unselected informers on secrets and pods: +${(result.unselected.bytes / 2 ** 20).toFixed(1)} MiB for ${result.unselected.objects} objects`,
    );
    return result;
  } finally {
    await Promise.all(informers.map((i) => i.stop()));
    await operator?.stop();
    client?.close();
    cluster.stop();
  }
}

export const HEAP_HEADER = [
  'what',
  'unrelated objects',
  'heap before (MiB)',
  'heap after (MiB)',
  'growth (MiB)',
  'of which data (MiB)',
  'bytes / unrelated object',
  'objects cached',
  'Bundle Ready after',
];

export function heapRows(r: UnrelatedHeapResult): string[][] {
  const total = 2 * r.perKind;
  const m = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const rows = [
    [
      'Bundle controller (operator in-process, cluster-wide, informers on the managed label)',
      `${r.perKind} Secrets + ${r.perKind} Pods`,
      m(r.beforeBytes),
      m(r.afterBytes),
      m(r.afterBytes - r.beforeBytes),
      m(r.dataGrowthBytes),
      ((r.afterBytes - r.beforeBytes) / total).toFixed(0),
      String(r.cachedObjects),
      String(r.bundleReady),
    ],
  ];
  if (r.unselected) {
    rows.push([
      'for scale: the same cluster through full-object informers without the selector (as before issue 12)',
      `${r.unselected.objects} Secrets and Pods held`,
      m(r.afterBytes),
      m(r.afterBytes + r.unselected.bytes),
      m(r.unselected.bytes),
      '-',
      (r.unselected.bytes / Math.max(1, r.unselected.objects)).toFixed(0),
      String(r.unselected.objects),
      '-',
    ]);
  }
  return rows;
}
