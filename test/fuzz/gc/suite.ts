/**
 * Differential fuzzing of our garbage collector against
 * kube-controller-manager's (issue 9).
 *
 * Two control planes: "ours" runs the operator as a real process
 * (`node dist/src/main.js --gc=cluster`, SIGKILLed and restarted by the
 * plan), "reference" runs kube-controller-manager with only its garbage
 * collector (SIGKILLed and restarted the same way). Each seed generates a
 * plan (plan.ts: several small ownership graphs over ConfigMaps, Secrets,
 * Widgets (CRD), ClusterRoles and Realms (cluster-scoped CRD), sometimes a
 * CRD created mid-run; multiple owners, blockOwnerDeletion, foreign
 * finalizers, cycles, cross-namespace, cluster-to-namespaced and wrong-UID
 * references, owners recreated under the same name; then groups of actions:
 * background / foreground / orphan deletes, reference edits, finalizer
 * releases, collector kills mid-cascade, and actions issued while both
 * collectors are down), executes it step by step on both clusters at once
 * in identical fresh namespaces, waits for quiescence and judges
 * (judge.ts): the same end state per logical object, and never an object
 * deleted by ours that the reference kept.
 *
 * Objects the reference keeps with a deletionTimestamp: compared like any
 * other state (ours must keep them, being deleted, with the same
 * finalizers), except that ours may have finished deleting an object the
 * reference keeps in foreground deletion on a cycle of blocking references
 * (our collector breaks such cycles after a timeout; docs/garbage-collector.md, "The garbage
 * collector"): reported as tolerated in the summary, not as a divergence.
 * Two more differences that kube-controller-manager's own processing order
 * decides are tolerated the same way (judge.ts explains both): references
 * that hold no existing owner on an object both are deleting, and the
 * non-blocking dependents of an owner already waiting in foreground
 * deletion when the collectors start (ours attempts them all; the reference
 * only those its informers handed over before the owner).
 *
 * Interleavings explored: actions on distinct ownership components back to
 * back while both collectors run (with a crash and restart between two of
 * them), any actions while both are down (they see the result only when
 * they restart, having to list before acting), creation of objects whose
 * owners are already gone, and a new CRD's objects once both watch it.
 * Not explored, because the reference itself would be nondeterministic: an
 * action on objects a running collector is still working on (every group
 * ends with both clusters quiet).
 */
import { request } from 'node:http';
import { freePort } from '../../../hack/ports.js';
import { startControllerManager, stopControllerManager } from '../../../hack/controlplane.js';
import { applyCrd } from '../../../hack/crd-install.js';
import { createNamespace, grantControllerManagerGcRole, startBenchCluster, type BenchCluster } from '../../../bench/cluster.js';
import { installCrd } from '../../../src/kube/crds.js';
import { startOperatorProcess, type OperatorProcess } from '../../integration/operator.js';
import type { FuzzSuite, SeedResult, SuiteContext } from '../suite.js';
import { FINAL_QUIET_MS, PlanExecutor, fuzzCrd, probeCollector, waitUntil, type CollectorControl, type FuzzCluster } from './executor.js';
import { describeStates, judge, relatedIds, replay } from './judge.js';
import { TEST_GROUP, generatePlan, summarize, type GenerateOptions } from './plan.js';
import { COLLECTOR_USER, CollectorRbac } from './rbac.js';

const PROBE_NAMESPACE = 'gcfuzz-probes';

function healthy(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? true : undefined);
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Our collector: the operator as a child process, so a kill is a real SIGKILL. */
class OperatorCollector implements CollectorControl {
  private process: OperatorProcess | undefined;
  readonly logFiles: string[] = [];

  constructor(private readonly kubeconfig: string) {}

  async start(): Promise<void> {
    const port = await freePort();
    // As a user whose rights the rbac dimension narrows (rbac.ts), not as the admin of the kubeconfig.
    const proc = startOperatorProcess(
      ['--gc=cluster', '--health-addr', `127.0.0.1:${port}`, '--log-level', 'debug', '--impersonate', COLLECTOR_USER],
      {},
      this.kubeconfig,
    );
    this.process = proc;
    this.logFiles.push(proc.logFile);
    await waitUntil('our operator process to answer /healthz', 30_000, async () => {
      if (proc.child.exitCode !== null) throw new Error(`our operator exited with ${proc.child.exitCode} at start (log: ${proc.logFile})`);
      return await healthy(port);
    });
  }

  async kill(): Promise<void> {
    const proc = this.process;
    this.process = undefined;
    await proc?.kill();
  }

  running(): boolean {
    return this.process !== undefined && this.process.child.exitCode === null;
  }

  /** Synchronous, for exit handlers. */
  killNow(): void {
    this.process?.child.kill('SIGKILL');
    this.process = undefined;
  }

  describe(): string {
    return `operator logs: ${this.logFiles.slice(-3).join(', ')}`;
  }
}

class ControllerManagerCollector implements CollectorControl {
  constructor(private readonly cluster: BenchCluster) {}
  kill(): Promise<void> {
    stopControllerManager(this.cluster.state);
    return Promise.resolve();
  }
  async start(): Promise<void> {
    await startControllerManager(this.cluster.state);
  }
  running(): boolean {
    return this.cluster.state.pids['kube-controller-manager'] !== undefined;
  }
  describe(): string {
    return `kube-controller-manager log: ${this.cluster.state.dir}/kube-controller-manager.log`;
  }
}

export type GcFuzzOptions = GenerateOptions;

export class GcFuzzSuite implements FuzzSuite {
  readonly name = 'gc' as const;
  private clusters: BenchCluster[] = [];
  private ours: FuzzCluster | undefined;
  private reference: FuzzCluster | undefined;
  private operator: OperatorCollector | undefined;
  private log: (line: string) => void = () => undefined;
  private readonly killOnExit = () => this.operator?.killNow();

  constructor(private readonly options: GcFuzzOptions = {}) {}

  async setup(ctx: SuiteContext): Promise<void> {
    this.log = (line) => ctx.log(line);
    process.on('exit', this.killOnExit);
    this.log('gc: starting two control planes (ours, and kube-controller-manager as the reference)');
    const [oursCluster, refCluster] = await Promise.all([startBenchCluster({}), startBenchCluster({ withGarbageCollector: true })]);
    this.clusters = [oursCluster, refCluster];
    await grantControllerManagerGcRole(refCluster);
    for (const c of this.clusters) {
      // The operator needs the Bundle CRD to start; the reference gets it too, so both serve the same kinds.
      await applyCrd(c.state.kubeconfig);
      await installCrd(c.admin, fuzzCrd('Widget', 'widgets'));
      await installCrd(c.admin, fuzzCrd('Realm', 'realms', 'Cluster'));
      await createNamespace(c, PROBE_NAMESPACE);
      c.discovery.invalidate();
    }
    this.operator = new OperatorCollector(oursCluster.state.kubeconfig);
    const rbac = new CollectorRbac(oursCluster.admin);
    await rbac.grant();
    this.ours = {
      label: 'ours',
      client: oursCluster.admin,
      discovery: oursCluster.discovery,
      collector: this.operator,
      probeNamespace: PROBE_NAMESPACE,
      rbac,
    };
    this.reference = {
      label: 'reference',
      client: refCluster.admin,
      discovery: refCluster.discovery,
      collector: new ControllerManagerCollector(refCluster),
      probeNamespace: PROBE_NAMESPACE,
    };
    await this.operator.start();
    this.log('gc: waiting until both collectors act on every kind (the reference re-discovers CRDs every 30 s)');
    await Promise.all(
      [this.ours, this.reference].flatMap((c) =>
        (['v1/ConfigMap', `${TEST_GROUP}/v1/Widget`, `${TEST_GROUP}/v1/Realm`] as const).map(async (gvk) => {
          const slash = gvk.lastIndexOf('/');
          const rt = await c.discovery.resolve(gvk.slice(0, slash), gvk.slice(slash + 1));
          if (!rt) throw new Error(`${c.label} does not serve ${gvk}`);
          await probeCollector(c, rt);
        }),
      ),
    );
    this.log('gc: ready');
  }

  /** `options` override the suite's for this seed (the CI runs old and widened plans on one pair of control planes). */
  async runSeed(seed: number, options: GcFuzzOptions = {}): Promise<SeedResult> {
    const ours = this.ours;
    const reference = this.reference;
    if (!ours || !reference) throw new Error('the gc suite was not set up');
    const plan = generatePlan(seed, { ...this.options, ...options });
    const started = Date.now();
    // Every right, and the seed's gadget resource named (a failed seed may have left a revocation).
    await ours.rbac?.grant(plan.gadget?.plural);
    const executors = [new PlanExecutor(ours, plan), new PlanExecutor(reference, plan)] as const;
    await Promise.all(executors.map((e) => e.prepare()));
    const [oursExec, refExec] = executors;
    const end = (e: PlanExecutor, snapshot = e.lastSnapshot) => ({
      snapshot,
      uids: e.uids,
      notes: e.notes,
      foregroundDependentsAtStart: e.foregroundDependentsAtStart,
      foregroundOwnersAtStart: e.foregroundOwnersAtStart,
      orphanRaceDependentsAtStart: e.orphanRaceDependentsAtStart,
    });
    // Judged at every settle, not only at the end: a wrongful delete that a
    // later step would hide (an owner deleted too early whose held
    // dependents are released afterwards) is caught where it happens.
    const found = new Map<string, { step: number; line: string; wrongfulDelete: boolean }>();
    const tolerated = new Set<string>();
    const states: string[] = [];
    const record = (step: number) => {
      const [o, r] = [end(oursExec), end(refExec)];
      const oldVersionUnserved = plan.steps.slice(0, step).some((s) => s.op === 'crdVersion' && s.stage === 'unserve-old');
      const verdict = judge(plan, o, r, { oldVersionUnserved });
      // While our collector lacks rights (rbac) it may lag: only a wrongful delete counts then.
      const lastRbac = plan.steps.slice(0, step).findLast((s) => s.op === 'rbac');
      const lacking = lastRbac?.op === 'rbac' && lastRbac.revoke !== undefined;
      const fresh = verdict.divergences.filter((d) => !found.has(d.id) && (!lacking || d.wrongfulDelete));
      for (const d of fresh) found.set(d.id, { step, line: d.line, wrongfulDelete: d.wrongfulDelete });
      for (const t of verdict.tolerated) tolerated.add(t);
      if (fresh.length > 0)
        states.push(
          `state after step ${step}:`,
          ...describeStates(
            plan,
            relatedIds(
              plan,
              fresh.map((d) => d.id),
            ),
            o,
            r,
          ).map((l) => `  ${l}`),
        );
    };
    for (const [i, step] of plan.steps.entries()) {
      try {
        // The plan ends with a settle: that one is the judge's, with the longer quiet period.
        const last = i === plan.steps.length - 1 && step.op === 'settle';
        await Promise.all(executors.map((e) => (last ? e.settle(FINAL_QUIET_MS) : e.run(step))));
      } catch (err) {
        throw new Error(`step ${i + 1} (${step.op}) of seed ${seed} failed: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      if (step.op === 'settle') record(i + 1);
    }
    if (plan.steps.at(-1)?.op !== 'settle') {
      await Promise.all(executors.map((e) => e.settle(FINAL_QUIET_MS)));
      record(plan.steps.length);
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    const notes = [...oursExec.notes.map((n) => `ours: ${n}`), ...refExec.notes.map((n) => `reference: ${n}`)];
    const summary = [
      summarize(plan),
      `${seconds} s`,
      ...(tolerated.size > 0 ? [`tolerated: ${[...tolerated].join('; ')}`] : []),
      ...(notes.length > 0 && found.size === 0 ? [`notes: ${notes.join('; ')}`] : []),
    ].join(', ');
    if (found.size === 0) return { suite: this.name, seed, divergences: [], summary };
    const divergences = [...found.values()].sort((x, y) => Number(y.wrongfulDelete) - Number(x.wrongfulDelete) || x.step - y.step);
    const lastStep = Math.max(...divergences.map((d) => d.step));
    return {
      suite: this.name,
      seed,
      divergences: divergences.map((d) => `after step ${d.step}: ${d.line}`),
      summary,
      replay: [
        replay(plan, [...found.keys()], lastStep),
        ...states,
        ...notes.map((n) => `note: ${n}`),
        ours.collector.describe(),
        reference.collector.describe(),
      ].join('\n'),
    };
  }

  async teardown(): Promise<void> {
    await this.operator?.kill();
    process.off('exit', this.killOnExit);
    for (const c of this.clusters) c.stop();
    this.clusters = [];
  }
}
