/**
 * Model-based testing of the Bundle controller's deletions (issue 9): random
 * sequences of Bundle edits (add, remove, move between Bundles, change the
 * delay and the deletion policy (Orphan, Approve, deleteWhen BundleReady:
 * issue 16), spec.deletionDefaults, approvals written now or backdated, gate behind a dependency
 * that is not Ready, invalid specs and resources that fail to apply, delete
 * and re-apply Bundles) and SIGKILLs
 * of a real operator process (run with `--gc=cluster`), judged against model.ts: nothing deleted before the
 * earliest time the rules allow, nothing left after the latest plus a margin.
 *
 * Real time, short delays (1-5 s): the model's clock is this process's wall
 * clock; deletions are timed when the watch reports them (upper bounds on
 * the true time, so "deleted too early" is never a false alarm from latency).
 */
import { randomBytes } from 'node:crypto';
import { Annotations } from '../../../src/api/names.js';
import { Random } from '../random.js';
import type { FuzzSuite, SeedResult, SuiteContext } from '../suite.js';
import { DUE_MARGIN_MS, SoftDeleteModel, type Defaults, type Entry, type Propagation, type Rule, type Spoil } from './model.js';
import { describeStep, randomDefaults, StepGenerator, type Step, type WidenedWorld } from './steps.js';
import { FuzzCluster, isVersioned, ruleOf, SeedWorld, sleep, type Observation } from './world.js';
import {
  dimensionRandom,
  dimensionsText,
  drawDimensions,
  drawDrift,
  drawHoldBack,
  drawRbac,
  drawReplicas,
  driftRandom,
  holdBackRandom,
  Naming,
  NO_DIMENSIONS,
  rbacRandom,
  replicaRandom,
  approvalRandom,
  type SoftDeleteDimensions,
} from './dimensions.js';

export const BUNDLES = ['b1', 'b2'] as const;
export const CONFIG_MAPS = ['cm-0', 'cm-1', 'cm-2', 'cm-3'] as const;
/** With the crdVersions dimension, the last two are custom resources of the seed's versioned CRD. */
const WITH_VERSIONED = ['cm-0', 'cm-1', 'cr-2', 'cr-3'] as const;
export const gateOf = (bundle: string): string => `gate-${bundle}`;

/** How long the operator may take to observe a Bundle's new generation, or to let a deleted Bundle go. */
const OPERATOR_WAIT_MS = 30_000;
/** After the last countdown could have ended, keep watching this long: a stale countdown would fire in it. */
const TAIL_MS = 2_000;
/** A Bundle deletion made while the operator lacks rights may be held (its finalizer must not go without its work): its rights come back this long after. */
const RBAC_HOLD_MS = 5_000;
/** A hold-back holds at least its holdMs, and waits at most this much longer for the release record to show the listing. */
const SEEN_WAIT_MS = 10_000;
/** The rule annotations a held Bundle's manifest copies from the live object (so it declares nothing the model does not know). */
const DECLARED_RULES = [Annotations.deletionDelay, Annotations.deletionPolicy, Annotations.deleteWhen] as const;
function declaredOf(annotations: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(DECLARED_RULES.flatMap((k) => (annotations[k] !== undefined ? [[k, annotations[k]]] : [])));
}
/** SOFTDELETE_FUZZ_TRACE=1 prints every step and every watched appearance and deletion as they happen. */
const TRACE = process.env.SOFTDELETE_FUZZ_TRACE === '1';

interface ExecutedStep {
  index: number;
  at: number;
  text: string;
  touched: Set<string>;
  global: boolean;
}

interface Divergence {
  object?: string;
  message: string;
}

export interface SoftDeleteFuzzOptions {
  /**
   * Draw the widened dimensions of issue 23 (dimensions.ts); default true.
   * False runs each seed exactly as before the widening.
   */
  widen?: boolean;
}

export class SoftDeleteFuzzSuite implements FuzzSuite {
  readonly name = 'softdelete' as const;
  private cluster: FuzzCluster | undefined;
  private log: (line: string) => void = () => {};

  constructor(private readonly options: SoftDeleteFuzzOptions = {}) {}

  async setup(ctx: SuiteContext): Promise<void> {
    this.log = (line) => ctx.log(line);
    this.cluster = await FuzzCluster.start(ctx.kubeconfig);
  }

  async runSeed(seed: number): Promise<SeedResult> {
    if (!this.cluster) throw new Error('setup was not called');
    return await new SeedRun(this.cluster, seed, this.log, this.options.widen ?? true).run();
  }

  teardown(): Promise<void> {
    this.cluster?.stop();
    this.cluster = undefined;
    return Promise.resolve();
  }
}

class SeedRun {
  private readonly rnd: Random;
  private readonly model: SoftDeleteModel;
  private readonly generator: StepGenerator;
  private readonly world: SeedWorld;
  private readonly executed: ExecutedStep[] = [];
  private readonly divergences: Divergence[] = [];
  private readonly overdue = new Set<string>();
  /** Everything the watches reported, for the replay. */
  private readonly seen: Observation[] = [];
  private origin = Date.now();
  private kills = 0;
  /** Bundle deletions by propagation, for the summary line. */
  private readonly bundleDeletes: Record<Propagation, number> = { background: 0, foreground: 0, orphan: 0 };
  private judged = 0;
  /** Objects written with each deletion policy or gate (issue 16), and approvals written, for the summary line. */
  private readonly rulesWritten: Record<Rule, number> = { Delete: 0, Orphan: 0, Approve: 0, BundleReady: 0 };
  private approvals = 0;
  /** Bundle writes with spec.deletionDefaults. */
  private defaultsWritten = 0;
  /** The widened dimensions this seed drew, and their own random stream (schedule, names). */
  private readonly dims: SoftDeleteDimensions;
  /** Which approvals are dated a year ahead (dimensions.ts approvalRandom). */
  private readonly approvalRnd: Random;
  private readonly dimRnd: Random;
  private readonly bulk: string[];
  private stage: 'v1alpha1' | 'v1' | 'unserved' = 'v1alpha1';
  private handEdits = 0;
  /** Leaders paused past their Lease (replicas). */
  private pauses = 0;
  /** Bundle deletions held while their manifests named an unserved version (then moved to v1). */
  private heldByUnserved = 0;
  /** The rbac dimension: when the revocation in force was sent, how many were made, and Bundle deletions they held. */
  private revokedAt: number | undefined;
  private revocations = 0;
  private heldByRbac = 0;
  /** The Bundle conditions seen on deletions held by a revocation, for the summary. */
  private readonly heldReasons = new Set<string>();
  /** How long the operator may take to observe a generation or let a Bundle go (longer under a tight budget). */
  private readonly operatorWaitMs: number;
  /** hold-back steps that listed an object, and those whose listing the release record showed. */
  private heldBacks = 0;
  private heldSeen = 0;
  /** hold-back steps that found nothing to list (swept already, controlled, or another Bundle may hold it). */
  private heldSkipped = 0;

  constructor(
    cluster: FuzzCluster,
    private readonly seed: number,
    private readonly log: (line: string) => void,
    widen = true,
  ) {
    this.rnd = new Random(seed);
    this.dimRnd = dimensionRandom(seed);
    const replicaRnd = replicaRandom(seed);
    this.approvalRnd = approvalRandom(seed);
    // The rbac dimension and its schedule come from a stream of their own; 12 is the fewest planned steps a seed draws.
    const driftRnd = driftRandom(seed);
    // SOFTDELETE_FUZZ_DRIFT=0 runs a seed without its drift controls (its other draws and steps unchanged): is a divergence theirs?
    const withDrift = (d: SoftDeleteDimensions): SoftDeleteDimensions =>
      process.env.SOFTDELETE_FUZZ_DRIFT === '0' ? d : drawDrift(d, driftRnd);
    // The holdBack dimension, where its steps go and their fields: a stream of their own (dimensions.ts).
    const holdRnd = holdBackRandom(seed);
    this.dims = widen
      ? drawHoldBack(withDrift(drawRbac(drawReplicas(drawDimensions(this.dimRnd), replicaRnd), rbacRandom(seed), 12)), holdRnd)
      : NO_DIMENSIONS;
    const base: readonly string[] = this.dims.crdVersions ? WITH_VERSIONED : CONFIG_MAPS;
    const budget = this.dims.budget;
    this.bulk = budget ? Array.from({ length: budget.bulk }, (_, i) => `bulk-${String(i).padStart(3, '0')}`) : [];
    // Under a budget every pass over the bulk objects takes (objects / qps) seconds, a few times over.
    // Each bulk object costs a read and a write of its own on first apply, and more on later passes; the collector's start-up
    // (discovery, one list per kind: about 100 requests) draws on the same budget. Liveness bounds only: seeds 12100, 12106
    // and 12200 (qps 5-10, two replicas) observed a generation later than the earlier 3 x bulk / qps allowed.
    // A Bundle deletion releases each bulk object (a patch and its Event) and the sweeper deletes it (a list, a read, the
    // delete and its DeletedAfterDelay Event): 6 requests each (seed 19412 counted 5 and was 0.1 s past its bound). With two replicas the leader's Lease renewals (one PUT per retry period, lease / 7.5) come
    // out of the same budget first: at --qps 5 with a 4 s Lease, 1.9 of the 5 requests a second (seed 19023, the
    // operator's debug budget lines), so the budget left for the work is what the bound divides by.
    // Release records add to that: the finalizer's record of each release (1), the sweep's read of the record and its drop
    // (a read and a delete: 3 with the read before the DELETE), and a take-hold's end of a recorded release (a create that
    // finds the record, then a patch: 2): 10 requests per bulk object released, swept or taken hold of again (seed 21409:
    // 111 bulk objects at qps 10, released and adopted again, observed past the 6-per-object bound).
    const renewalsPerSecond = this.dims.replicas ? 7.5 / this.dims.replicas.leaseSeconds : 0;
    const slowMs = budget ? Math.ceil((10 * budget.bulk + 100) / (budget.qps - renewalsPerSecond)) * 1000 : 0;
    this.operatorWaitMs = OPERATOR_WAIT_MS + slowMs;
    this.model = new SoftDeleteModel(BUNDLES, [...base, ...this.bulk], gateOf, DUE_MARGIN_MS + slowMs);
    if (this.dims.crdVersions) this.model.markVersioned(base.filter(isVersioned));
    const widened: WidenedWorld = {
      dims: this.dims,
      isVersioned,
      bulk: this.bulk,
      stage: () => this.stage,
      pauseLeader: () => this.dims.replicas !== undefined && replicaRnd.chance(0.6),
      ...(this.dims.holdBack === true ? { holdRandom: holdRnd } : {}),
    };
    this.generator = new StepGenerator(this.rnd, this.model, base, gateOf, widened);
    const naming = new Naming(
      { bundles: BUNDLES, objects: [...base, ...this.bulk, ...BUNDLES.map(gateOf)] },
      this.dims.longNames,
      this.dimRnd,
    );
    // The namespace name is not drawn from the seed: a seed may run twice against one control plane.
    this.world = new SeedWorld(
      cluster,
      `sd-${seed}-${randomBytes(3).toString('hex')}`,
      this.dims,
      naming,
      this.dims.drift === true ? driftRnd : undefined,
    );
  }

  async run(): Promise<SeedResult> {
    const steps = this.rnd.int(12, 18);
    let failure: unknown;
    try {
      await this.world.start();
      this.origin = Date.now();
      this.model.operatorStarted(this.world.startOperator());
      const taken = new Set<string>();
      for (const b of BUNDLES) {
        const entries = this.generator.initialSpec(b, taken);
        // The bulk ConfigMaps (budget dimension): b1's, no delay, so a prune deletes them at once.
        if (b === 'b1') for (const object of this.bulk) entries.push({ object, kind: 'ConfigMap', delay: { kind: 'none' }, gated: false });
        for (const e of entries) taken.add(e.object);
        await this.execute({ kind: 'reapply', bundle: b, entries, spoil: 'none', defaults: randomDefaults(this.rnd) });
      }
      await this.execute({ kind: 'settle' });
      // Most seeds start with open gates, so gated objects exist (and hold references to their gate).
      for (const b of BUNDLES) if (this.rnd.chance(0.6)) await this.execute({ kind: 'gate', bundle: b, open: true });
      // The versioned CRD's upgrade happens at steps drawn from the dimensions' stream.
      const addV1At = this.dims.crdVersions ? this.dimRnd.int(0, 5) : -1;
      const unserveAt = this.dims.crdVersions ? addV1At + this.dimRnd.int(1, 5) : -1;
      for (let i = 0; i < steps; i++) {
        if (i === addV1At) await this.execute({ kind: 'crd-version', stage: 'add-v1' });
        if (i === unserveAt) await this.execute({ kind: 'crd-version', stage: 'unserve-old' });
        for (const r of this.dims.rbac?.revocations ?? []) {
          if (i === r.at + r.steps) {
            // Revoked for at least its drawn time (a step or two may take only milliseconds).
            if (this.revokedAt !== undefined) await sleep(Math.max(0, this.revokedAt + r.minMs - Date.now()));
            await this.execute({ kind: 'rbac-grant' });
          }
          if (i === r.at) await this.execute({ kind: 'rbac-revoke', what: r.what });
        }
        let planned = this.generator.next();
        // hold-back steps are inserted (holdBack's own stream): they do not count among the planned steps, so a seed runs
        // the steps it ran without them.
        while (planned.step.kind === 'hold-back') {
          await this.execute(planned.step);
          this.boundary();
          planned = this.generator.next();
        }
        await this.execute(planned.step);
        if (planned.settle) await this.execute({ kind: 'settle' });
        this.boundary();
      }
      if (this.dims.crdVersions && this.stage === 'v1') await this.execute({ kind: 'crd-version', stage: 'unserve-old' });
      if (this.world.rbacRevoked !== undefined) await this.execute({ kind: 'rbac-grant' });
      await this.finish();
    } catch (err) {
      failure = err;
      // Judge what the watches saw up to the failure: a wrongful delete before a stuck finalizer is still one.
      await sleep(500);
      try {
        this.boundary();
      } catch {
        // the watch failed: reported with the failure
      }
    } finally {
      await this.world.stop(this.divergences.length > 0 || failure !== undefined);
    }
    if (failure !== undefined) {
      const message = failure instanceof Error ? (failure.stack ?? failure.message) : JSON.stringify(failure);
      const found = this.divergences.map((d) => `divergence before that: ${d.message}\n`).join('');
      throw new Error(
        `${message}\n${found}steps so far (namespace ${this.world.namespace}):\n${this.replay(undefined)}\noperator logs: ${this.world.operatorLogs().join(' ')}`,
      );
    }
    const secs = ((Date.now() - this.origin) / 1000).toFixed(1);
    const d = this.bundleDeletes;
    const r = this.rulesWritten;
    const summary = `${dimensionsText(this.dims)}; ${this.executed.length} steps, ${this.kills} kills, ${this.handEdits} hand edits, ${this.pauses} leader pauses, ${this.heldByUnserved} deletions held on an unserved version, ${this.dims.holdBack === true ? `held-back listings ${this.heldBacks} (${this.heldSeen} seen), ${this.heldSkipped} hold-backs skipped, ` : ''}${this.dims.rbac ? `${this.revocations} RBAC revocations, ${this.heldByRbac} Bundle deletions held by one${this.heldReasons.size > 0 ? ` (${[...this.heldReasons].join('; ')})` : ''}, ${this.world.restarts} operator exits restarted, ` : ''}Bundle deletes bg/fg/orphan ${d.background}/${d.foreground}/${d.orphan}, entries written with Orphan/Approve/BundleReady ${r.Orphan}/${r.Approve}/${r.BundleReady}, ${this.approvals} approvals, ${this.defaultsWritten} writes with defaults, ${this.judged} deletions judged, ${secs} s, namespace ${this.world.namespace}`;
    this.log(`softdelete seed ${this.seed}: ${summary}`);
    return {
      suite: 'softdelete',
      seed: this.seed,
      divergences: this.divergences.map((d) => d.message),
      summary,
      ...(this.divergences.length > 0 ? { replay: this.replayAll() } : {}),
    };
  }

  private rel(t: number): string {
    return `+${((t - this.origin) / 1000).toFixed(2)}s`;
  }

  private record(step: Step, touched: Iterable<string>, at: number): void {
    this.executed.push({
      index: this.executed.length + 1,
      at,
      text: describeStep(step),
      touched: new Set(touched),
      global: step.kind === 'kill' || step.kind === 'crd-version' || step.kind === 'rbac-revoke' || step.kind === 'rbac-grant',
    });
  }

  private entriesOf(bundle: string): Entry[] {
    return this.model.bundle(bundle).entries.map((e) => ({ ...e }));
  }

  /** Applies a Bundle's new spec to the cluster and the model; returns what it touched. */
  private async write(
    bundle: string,
    entries: Entry[],
    spoil: Spoil = this.model.bundle(bundle).spoil,
    defaults: Defaults = this.model.bundle(bundle).defaults,
  ): Promise<string[]> {
    for (const e of entries) if (e.kind === 'ConfigMap') this.rulesWritten[e.rule ?? 'Delete']++;
    if (defaults.delay !== undefined || defaults.rule !== undefined) this.defaultsWritten++;
    const { sentAt, ackedAt } = await this.world.applyBundle(bundle, entries, spoil, defaults);
    return this.model.applyBundle(bundle, entries, spoil, sentAt, ackedAt, defaults);
  }

  private async execute(step: Step): Promise<void> {
    const at = Date.now();
    const touched = new Set<string>();
    const add = (names: Iterable<string>) => {
      for (const n of names) touched.add(n);
    };
    try {
      await this.executeStep(step, touched, add);
    } finally {
      // Recorded even when it threw (a Bundle that never went): the replay names it.
      if (step.kind !== 'sleep' && step.kind !== 'settle') this.record(step, touched, at);
      if (TRACE) this.log(`  [seed ${this.seed}] ${this.rel(at)} ${describeStep(step)}`);
    }
  }

  private async executeStep(step: Step, touched: Set<string>, add: (names: Iterable<string>) => void): Promise<void> {
    switch (step.kind) {
      case 'add': {
        add(
          await this.write(step.bundle, [
            ...this.entriesOf(step.bundle),
            {
              object: step.object,
              kind: 'ConfigMap',
              delay: step.delay,
              rule: step.rule,
              gated: step.gated,
              ...(step.legacy !== undefined ? { legacy: step.legacy } : {}),
            },
          ]),
        );
        touched.add(step.object);
        break;
      }
      case 'remove':
        add(
          await this.write(
            step.bundle,
            this.entriesOf(step.bundle).filter((e) => e.object !== step.object),
          ),
        );
        touched.add(step.object);
        break;
      case 'move': {
        const addTo = async () =>
          add(
            await this.write(step.to, [
              ...this.entriesOf(step.to),
              {
                object: step.object,
                kind: 'ConfigMap',
                delay: step.delay,
                rule: step.rule,
                gated: step.gated,
                ...(step.legacy !== undefined ? { legacy: step.legacy } : {}),
              },
            ]),
          );
        const removeFrom = async () =>
          add(
            await this.write(
              step.from,
              this.entriesOf(step.from).filter((e) => e.object !== step.object),
            ),
          );
        if (step.addFirst) {
          await addTo();
          await removeFrom();
        } else {
          await removeFrom();
          await addTo();
        }
        touched.add(step.object);
        break;
      }
      case 'set-delay':
        add(
          await this.write(
            step.bundle,
            this.entriesOf(step.bundle).map((e) => (e.object === step.object ? { ...e, delay: step.delay, rule: step.rule } : e)),
          ),
        );
        touched.add(step.object);
        break;
      case 'set-gated':
        add(
          await this.write(
            step.bundle,
            this.entriesOf(step.bundle).map((e) => (e.object === step.object ? { ...e, gated: step.gated } : e)),
          ),
        );
        touched.add(step.object);
        break;
      case 'gate': {
        // The operator creates the Gate; it may not be there yet (or at all, under an invalid spec): wait a little.
        const gate = gateOf(step.bundle);
        const sentAt = Date.now();
        const deadline = sentAt + 5_000;
        let done = await this.world.setGate(gate, step.open);
        while (!done && Date.now() < deadline) {
          await sleep(100);
          done = await this.world.setGate(gate, step.open);
        }
        // The intent goes into the model either way, so the generated steps do not depend on timing.
        this.model.setGateReady(step.bundle, step.open, sentAt, Date.now());
        // Every object of the Bundle: one gated later still depends on the Gate's state.
        add(this.model.bundle(step.bundle).entries.map((e) => e.object));
        touched.add(gate);
        break;
      }
      case 'delete-bundle': {
        this.bundleDeletes[step.propagation]++;
        const b = this.model.bundle(step.bundle);
        const unserved = this.model.listsUnserved(b);
        const entries = this.entriesOf(step.bundle);
        const { spoil, defaults } = b;
        const bundleUid = this.world.bundleUid(step.bundle);
        const { sentAt, ackedAt } = await this.world.deleteBundle(step.bundle, step.propagation);
        add(this.model.deleteBundle(step.bundle, sentAt, ackedAt, step.propagation));
        let deadline = Math.max(Date.now(), this.model.caughtUpBy()) + this.operatorWaitMs;
        let migrated = false;
        const heldFrom = Date.now();
        while (!(await this.world.bundleGone(step.bundle))) {
          if (this.world.rbacRevoked !== undefined && Date.now() > heldFrom + RBAC_HOLD_MS) {
            // Held while the operator lacks rights (allowed: its finalizer must not go without doing its work). Its
            // rights come back now, and the deletion must then finish within the usual wait plus its backoff.
            this.heldByRbac++;
            const trouble = await this.world.bundleTrouble(step.bundle);
            if (trouble !== '') this.heldReasons.add(trouble);
            await this.grantBack();
            deadline = this.model.caughtUpBy() + this.operatorWaitMs;
            continue;
          }
          if (Date.now() > deadline && unserved && !migrated) {
            // Holding a Bundle whose manifests name an unserved version is allowed (issue 23 asks for a Stalled
            // finalizer there); the user then moves the manifests on, and the deletion must finish.
            migrated = true;
            this.heldByUnserved++;
            await this.world
              .applyBundle(
                step.bundle,
                entries.map((e) => (e.legacy === true ? { ...e, legacy: false } : e)),
                spoil,
                defaults,
              )
              .catch(() => undefined);
            deadline = Date.now() + this.operatorWaitMs;
            continue;
          }
          if (Date.now() > deadline)
            throw new Error(
              `Bundle ${step.bundle} was still there ${(this.operatorWaitMs * (migrated ? 2 : 1)) / 1000} s after its delete (the finalizer never finished${migrated ? `, also ${this.operatorWaitMs / 1000} s after its manifests moved to v1` : ''}; ${await this.world.bundleHold(step.bundle)})`,
            );
          await sleep(100);
        }
        if (this.dims.rbac && bundleUid !== undefined) await this.checkReleased(step.bundle, bundleUid, [...this.model.objects.keys()]);
        break;
      }
      case 'approve': {
        const sentAt = Date.now();
        // One approval in five that is not backdated is dated a year ahead: it never counts.
        const ahead = !step.backdated && this.approvalRnd.chance(0.2);
        const time = step.backdated ? sentAt - 60_000 : ahead ? sentAt + 365 * 24 * 3_600_000 : sentAt;
        if (await this.world.approve(step.object, time)) {
          this.model.approve(step.object, time, sentAt, Date.now());
          this.approvals++;
        }
        touched.add(step.object);
        break;
      }
      case 'reapply':
        add(
          await this.write(
            step.bundle,
            step.entries.map((e) => ({ ...e })),
            step.spoil,
            step.defaults,
          ),
        );
        break;
      case 'set-defaults':
        add(await this.write(step.bundle, this.entriesOf(step.bundle), this.model.bundle(step.bundle).spoil, step.defaults));
        break;
      case 'spoil':
        add(await this.write(step.bundle, this.entriesOf(step.bundle), step.how));
        break;
      case 'repair':
        add(await this.write(step.bundle, this.entriesOf(step.bundle), 'none'));
        break;
      case 'kill':
        await sleep(step.afterMs);
        await this.world.killOperator();
        this.kills++;
        await sleep(step.downMs);
        // Killed, the leader left its Lease held: the restarted replicas lead only once it expires (seed 19412 was 0.2 s
        // past a bound that started at the restart).
        this.model.operatorStarted(this.world.startOperator() + (this.dims.replicas ? this.dims.replicas.leaseSeconds * 1000 : 0));
        break;
      case 'sleep':
        await sleep(step.ms);
        break;
      case 'settle':
        await this.settle();
        break;
      case 'hand-edit':
        for (const object of step.objects) {
          if (!(await this.world.handEdit(object, step.edit))) continue;
          this.handEdits++;
          touched.add(object);
          if (step.edit === 'drop-owner-refs') this.model.handDisowned(object);
          if (step.edit === 'add-foreign-owner') this.model.handForeignOwner(object);
          // Each may put a countdown off (a stamp that no longer counts starts again): only "not before" is judged.
          if (step.edit === 'replay-annotations' || step.edit === 'strip-release-proof' || step.edit === 'legacy-release')
            this.model.handReplayed(object);
        }
        break;
      case 'wipe-record':
        if (!(await this.world.wipeRecord(step.bundle, step.fields))) break;
        this.handEdits++;
        // The countdowns it records start again (later, never earlier): only "not before" is judged for them.
        for (const object of this.model.recordWiped(step.bundle)) touched.add(object);
        break;
      case 'drop-configmaps':
        add(
          await this.write(
            step.bundle,
            this.entriesOf(step.bundle).filter((e) => e.kind !== 'ConfigMap' || isVersioned(e.object)),
          ),
        );
        break;
      case 'crd-version':
        if (step.stage === 'add-v1') {
          await this.world.crdAddVersion();
          this.stage = 'v1';
        } else {
          const { sentAt, ackedAt } = await this.world.crdUnserveOld();
          this.stage = 'unserved';
          add(this.model.versionUnserved(sentAt, ackedAt));
        }
        break;
      case 'migrate':
        add(
          await this.write(
            step.bundle,
            this.entriesOf(step.bundle).map((e) => (e.legacy === true ? { ...e, legacy: false } : e)),
          ),
        );
        break;
      case 'rbac-revoke': {
        const { sentAt } = await this.world.revokeRbac(step.what);
        this.model.rightsRevoked(sentAt);
        this.revokedAt = sentAt;
        this.revocations++;
        break;
      }
      case 'rbac-grant':
        await this.grantBack();
        break;
      case 'hold-back':
        await this.holdBack(step, touched, add);
        break;
      case 'flap': {
        const before = this.entriesOf(step.bundle);
        const dropped = new Set(step.objects);
        add(
          await this.write(
            step.bundle,
            before.filter((e) => !dropped.has(e.object)),
          ),
        );
        // Half-way, the leader (pruning by now) freezes, as a VM or a node can.
        const paused = step.pauseLeader ? (await sleep(step.gapMs / 2), await this.world.pauseLeader()) : undefined;
        await sleep(step.pauseLeader ? step.gapMs / 2 : step.gapMs);
        // Put back as they were, unless the spec changed in between (it cannot: steps run one at a time).
        add(await this.write(step.bundle, before));
        if (paused && this.dims.replicas) {
          this.pauses++;
          // Past its Lease: the standby leads and reconciles; then the old leader wakes, and is killed 2 s later.
          await sleep(this.dims.replicas.leaseSeconds * 1000 + 2_000);
          await this.world.resumeThenKill(paused, 2_000);
          this.model.operatorStarted(Date.now());
        }
        break;
      }
    }
  }

  /**
   * The rbac dimension: a Bundle gone, what it released and must keep for
   * now no longer names it as an owner (else the collector would take it):
   * its finalizer did its work, whatever rights it lacked meanwhile.
   */
  private async checkReleased(bundle: string, uid: string, objects: readonly string[], anyRelease = false): Promise<void> {
    for (const o of objects.map((name) => this.model.object(name))) {
      // (An object with another owner may be left to the collector with that owner; a disowned one names nobody.)
      if (
        o.standing.kind !== 'released' ||
        (!anyRelease && o.standing.from !== bundle) ||
        !o.exists ||
        !o.uid ||
        o.foreignOwner === true ||
        o.mayBeUncontrolled === true
      )
        continue;
      const keepUntil = this.model.notBefore(o).at;
      if (keepUntil <= Date.now() + 1_000) continue;
      const live = await this.world.getObject(o.kind, o.name);
      if (!live || live.metadata.uid !== o.uid || live.metadata.deletionTimestamp !== undefined) continue;
      if (live.metadata.ownerReferences?.some((r) => r.uid === uid)) {
        this.divergences.push({
          object: o.name,
          message: `not released: Bundle ${bundle} (uid ${uid}) is gone but ${o.kind} ${o.name} (uid ${o.uid}), which must stay until ${Number.isFinite(keepUntil) ? this.rel(keepUntil) : 'further notice'} (${this.model.notBefore(o).why}), still names it as its owner (at ${this.rel(Date.now())}, RBAC ${this.world.rbacRevoked ?? 'whole'}): the finalizer went without releasing it`,
        });
      }
    }
  }

  /**
   * hold-back: a fresh Bundle that never takes hold lists a released
   * object, holds it `holdMs` (and until the release record shows the
   * listing, at most SEEN_WAIT_MS more), then is deleted or drops it. The
   * object must stay while listed; once the listing was seen, a new
   * countdown starts at the drop.
   */
  private async holdBack(
    step: Extract<Step, { kind: 'hold-back' }>,
    touched: Set<string>,
    add: (names: Iterable<string>) => void,
  ): Promise<void> {
    const o = this.model.object(step.object);
    const s = o.standing;
    // A release another live Bundle may still hold (relisted and dropped before a settle): that Bundle may control it.
    const skip = (why: string) => {
      this.heldSkipped++;
      if (TRACE) this.log(`  [seed ${this.seed}] hold-back of ${step.object} skipped: ${why}`);
    };
    if (s.kind !== 'released') return skip(`it is ${s.kind}`);
    if (s.mayBeHeldBy !== undefined && this.model.bundle(s.mayBeHeldBy).exists) return skip(`${s.mayBeHeldBy} may hold it`);
    const live = await this.world.releasedNow(step.object);
    // Swept already (or not what the model knows): nothing to list.
    if (!live || live.uid !== o.uid)
      return skip(live ? `another incarnation (${live.uid}, the model's ${o.uid ?? 'none'})` : 'gone, being deleted or controlled');
    touched.add(step.object);
    this.heldBacks++;
    if (step.before && (await this.world.handEdit(step.object, step.before))) {
      this.handEdits++;
      this.model.handReplayed(step.object);
    }
    // The record as it stands before the listing: a cancel already there is not this listing's.
    const before = await this.world.releaseRecord(live.uid);
    const listed = await this.world.applyHeld(step.holder, step.object, declaredOf(live.annotations), step.how);
    this.model.holdBack(step.object, step.holder, listed.sentAt, listed.ackedAt);
    if (step.kill) {
      await sleep(step.kill.afterMs);
      await this.world.killOperator();
      this.kills++;
      await sleep(step.kill.downMs);
      this.model.operatorStarted(this.world.startOperator() + (this.dims.replicas ? this.dims.replicas.leaseSeconds * 1000 : 0));
    }
    if (step.whileListed && (await this.world.handEdit(step.object, step.whileListed))) {
      this.handEdits++;
      this.model.handReplayed(step.object);
    }
    // Seen: the release record says the listing cancelled (or ended) the release. Hold at least holdMs; at most SEEN_WAIT_MS more.
    let seen = false;
    const until = listed.ackedAt + step.holdMs;
    while (!(seen && Date.now() >= until) && Date.now() < until + SEEN_WAIT_MS) {
      if (!seen) {
        const r = await this.world.releaseRecord(live.uid);
        const changed = r !== undefined && (before === undefined || before.state !== r.state || before.proof !== r.proof);
        seen = changed && (r.state === 'cancelled' || r.state === 'ended');
      }
      await sleep(200);
      this.boundary();
    }
    const dropped = await this.world.dropHeld(step.holder, step.object, step.how, step.drop);
    add(this.model.dropHold(step.object, step.holder, seen, dropped.sentAt, dropped.ackedAt));
    if (seen) this.heldSeen++;
    if (step.afterDrop) {
      await sleep(500);
      if (await this.world.handEdit(step.object, step.afterDrop)) {
        this.handEdits++;
        this.model.handReplayed(step.object);
      }
    }
    const holderUid = this.world.heldUid(step.holder);
    if (step.how === 'nobody') {
      if (await this.world.heldTookHold(step.holder, step.object))
        this.divergences.push({
          object: step.object,
          message: `${step.holder} (serviceAccountName nobody, uid ${holderUid ?? '?'}) took hold of ${step.object} (at ${this.rel(Date.now())})`,
        });
      // Its finalizer never finishes (it cannot list as nobody); it never held anything.
      else await this.world.freeHeld(step.holder);
    } else if (step.drop === 'delete') {
      // The operator's own finalizer must finish, as for delete-bundle.
      const deadline = Math.max(Date.now(), this.model.caughtUpBy()) + this.operatorWaitMs;
      const heldFrom = Date.now();
      while (!(await this.world.heldGone(step.holder))) {
        if (this.world.rbacRevoked !== undefined && Date.now() > heldFrom + RBAC_HOLD_MS) {
          // Held while the operator lacks rights: they come back now (as for delete-bundle), and then it is the usual wait.
          await this.grantBack();
          continue;
        }
        if (Date.now() > Math.max(deadline, this.model.caughtUpBy() + this.operatorWaitMs))
          throw new Error(
            `held Bundle ${step.holder} was still there ${this.operatorWaitMs / 1000} s after its delete (the finalizer never finished)`,
          );
        await sleep(100);
      }
      if (holderUid !== undefined) await this.checkReleased(step.holder, holderUid, [step.object], true);
    }
  }

  /**
   * Grants the operator its rights back (if a revocation is in force): from
   * then on it may take the revoked interval and half again (the backoff of
   * its failed passes and watches doubles while they fail) plus two seconds
   * to retry, before the usual margins.
   */
  private async grantBack(): Promise<void> {
    if (this.world.rbacRevoked === undefined) return;
    const { ackedAt } = await this.world.restoreRbac();
    const revokedMs = ackedAt - (this.revokedAt ?? ackedAt);
    this.model.rightsRestored(ackedAt, Math.ceil(1.5 * revokedMs) + 2_000);
    this.revokedAt = undefined;
  }

  /**
   * Waits until the operator has observed every live Bundle's generation,
   * then reads the objects: a live deletionDelay equal to what the only
   * Bundle listing it asks for settles which manifest was applied.
   */
  private async settle(): Promise<void> {
    // Without all its rights the operator may be unable to write status: a settle then waits a little and proves nothing.
    const revoked = this.world.rbacRevoked !== undefined;
    for (const b of this.model.bundles.values()) {
      if (!b.exists) continue;
      const deadline = revoked ? Date.now() + RBAC_HOLD_MS : Math.max(Date.now(), this.model.caughtUpBy()) + this.operatorWaitMs;
      while (!(await this.world.bundleObserved(b.name))) {
        if (revoked && Date.now() > deadline) return;
        if (Date.now() > deadline) {
          this.divergences.push({
            message: `Bundle ${b.name}: the operator did not observe its generation within ${this.operatorWaitMs / 1000} s (at ${this.rel(Date.now())})`,
          });
          return;
        }
        await sleep(100);
      }
    }
    // A status written while rights were missing (or before the operator's backoff since they came back) may be that
    // of a pass that could not act: the listings are not known to be seen.
    if (revoked || this.model.rightsInDoubt(Date.now())) return;
    this.model.listingsSeen(Date.now());
    for (const o of this.model.objects.values()) {
      if (!o.mayBeUncontrolled || o.standing.kind !== 'listed') continue;
      const live = await this.world.getObject(o.kind, o.name);
      if (live?.metadata.ownerReferences?.some((r) => r.controller === true)) this.model.confirmControlled(o.name);
    }
    for (const o of this.model.objects.values()) {
      if (o.kind !== 'ConfigMap' || o.standing.kind !== 'listed') continue;
      const live = await this.world.getObject('ConfigMap', o.name);
      if (live && live.metadata.deletionTimestamp === undefined)
        this.model.confirmDelay(o.name, live.metadata.annotations?.[Annotations.deletionDelay], ruleOf(live.metadata.annotations));
    }
  }

  /** Feeds what the watches saw into the model and judges every deletion; flags objects past their due time. */
  private boundary(): void {
    const failure = this.world.watchFailure();
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
    for (const o of this.world.observations.splice(0)) {
      this.seen.push(o);
      if (TRACE) this.log(`  [seed ${this.seed}] ${this.rel(o.at)} watch: ${o.object} ${o.type} (uid ${o.uid})`);
      if (o.type === 'created') {
        this.model.created(o.object, o.uid);
        continue;
      }
      this.judged++;
      const wrong = this.model.judge({ object: o.object, uid: o.uid, seenAt: o.at }, this.origin);
      if (wrong) this.divergences.push({ object: o.object, message: `deleted too early: ${wrong}` });
      this.model.deleted(o.object, o.uid, o.at);
    }
    const now = Date.now();
    for (const o of this.model.objects.values()) {
      if (!o.exists || !o.uid || this.overdue.has(o.uid)) continue;
      const due = this.model.dueBy(o);
      if (now <= due) continue;
      this.overdue.add(o.uid);
      this.divergences.push({
        object: o.name,
        message: `left too long: ${o.kind} ${o.name} (uid ${o.uid}) still there at ${this.rel(now)}, due by ${this.rel(due)} (${this.model.notBefore(o).why})`,
      });
    }
  }

  /** Runs past every countdown, waits for what must go, and checks that what must stay is the same object. */
  private async finish(): Promise<void> {
    const lastEnd = Math.max(...[...this.model.objects.values()].map((o) => o.lastCountdownEnd));
    const until = Math.min(Date.now() + 30_000, Math.max(Date.now(), lastEnd + TAIL_MS));
    while (Date.now() < until) {
      await sleep(200);
      this.boundary();
    }
    for (;;) {
      this.boundary();
      const waiting = [...this.model.objects.values()].filter(
        (o) => o.exists && o.uid && !this.overdue.has(o.uid) && Number.isFinite(this.model.dueBy(o)),
      );
      if (waiting.length === 0) break;
      await sleep(200);
    }
    for (const o of this.model.objects.values()) {
      if (this.model.notBefore(o).at !== Infinity || !o.exists || !o.uid) continue;
      const live = await this.world.getObject(o.kind, o.name);
      if (!live || live.metadata.uid !== o.uid || live.metadata.deletionTimestamp !== undefined) {
        this.divergences.push({
          object: o.name,
          message: `not kept: ${o.kind} ${o.name} (uid ${o.uid}) must stay (${this.model.notBefore(o).why}) but is ${live ? (live.metadata.uid !== o.uid ? `a new object (uid ${live.metadata.uid})` : 'being deleted') : 'gone'}`,
        });
      }
    }
    await this.checkCopies();
    this.boundary();
  }

  /**
   * A person's copies (copy-object) are theirs: each is still there, the
   * same object, not being deleted, with every reference the person kept
   * whose owner still exists; only kube-controller-manager may have
   * collected one whose every owner is gone.
   */
  private async checkCopies(): Promise<void> {
    for (const [name, copy] of this.world.copies) {
      const live = await this.world.getObject('ConfigMap', name);
      const owners = await Promise.all(
        copy.references.map(async (r) => ({ r, live: (await this.world.getObject('ConfigMap', r.name))?.metadata.uid === r.uid })),
      );
      const standing = owners.filter((o) => o.live).map((o) => o.r);
      const what = `${name} (a person's copy of ${copy.of}, uid ${copy.uid})`;
      if (!live || live.metadata.uid !== copy.uid || live.metadata.deletionTimestamp !== undefined) {
        if (copy.references.length > 0 && standing.length === 0) continue;
        this.divergences.push({
          object: copy.of,
          message: `not kept: ${what} is ${live ? (live.metadata.uid !== copy.uid ? `a new object (uid ${live.metadata.uid})` : 'being deleted') : 'gone'}${copy.references.length > 0 ? `; of its owners ${standing.length} still exist` : ''}`,
        });
        continue;
      }
      const lost = standing.filter((r) => !(live.metadata.ownerReferences ?? []).some((x) => x.uid === r.uid));
      if (lost.length > 0)
        this.divergences.push({
          object: copy.of,
          message: `${what} lost the person's references to ${lost.map((r) => `${r.kind} ${r.name}`).join(', ')}, which still exist`,
        });
    }
  }

  private replay(objects: ReadonlySet<string> | undefined): string {
    const lines = this.executed
      .filter((s) => objects === undefined || s.global || [...s.touched].some((t) => objects.has(t)))
      .map((s) => `#${s.index} ${this.rel(s.at)} ${s.text}`);
    return lines.join('\n');
  }

  /** The steps that touched a diverging object (and every operator kill), then the operator logs. */
  private replayAll(): string {
    const objects = new Set(this.divergences.flatMap((d) => (d.object ? [d.object] : [])));
    const scope = objects.size > 0 ? `steps touching ${[...objects].join(', ')} (and every kill)` : 'all steps';
    // What the watches saw of those objects, and every Gate deletion (a Gate is what gated objects reference).
    const all = this.seen
      .filter((o) => objects.has(o.object) || (o.type === 'deleted' && o.object.startsWith('gate-')))
      .map((o) => `${this.rel(o.at)} ${o.object} ${o.type} (uid ${o.uid})`);
    // Many diverging objects (the bulk ConfigMaps): the first and last lines are enough to read the timing.
    const watched = all.length > 40 ? [...all.slice(0, 10), `... ${all.length - 20} more ...`, ...all.slice(-10)] : all;
    return [
      `${scope}; seed start = +0.00s, namespace ${this.world.namespace}:`,
      this.replay(objects.size > 0 ? objects : undefined),
      'watched:',
      ...watched,
      `operator logs: ${this.world.operatorLogs().join(' ')}`,
    ].join('\n');
  }
}
