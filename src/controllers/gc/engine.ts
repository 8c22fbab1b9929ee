/**
 * The garbage collector's engine: the graph and its single writer, the
 * attempt-to-delete and attempt-to-orphan queues, and the workers that
 * fetch facts, call the pure decisions in core/gc, and carry them out.
 * Informers and discovery are wired in collector.ts; tests drive the engine
 * directly (push changes, drain the writer, process one queue item).
 *
 * Requests per collected object, on a cascade: the dependent is not read
 * first (the graph has its owner references and resourceVersion; the DELETE
 * carries both as preconditions and only a conflict causes a re-read), and
 * the owner is verified once for all its dependents (absent-owner cache,
 * shared lookups). So one DELETE per object, where upstream spends a GET and
 * a DELETE.
 */
import { Finalizers } from '../../api/names.js';
import { KubeApiError, errorMessage } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import type { Clock } from '../../kube/clock.js';
import { ExponentialBackoffRateLimiter, MaxOfRateLimiter, TokenBucketRateLimiter } from '../../runtime/ratelimiter.js';
import { WorkQueue } from '../../runtime/workqueue.js';
import { runWorkers, type WorkResult } from '../../runtime/workers.js';
import { applyEvent, foregroundWaitsAtStart } from '../../core/gc/builder.js';
import type { InvalidNamespaceReport } from '../../core/gc/graph-change.js';
import { decideAttemptToOrphan, decideDeletingDependents, deletingDependentsFacts, planAttemptToDelete } from '../../core/gc/decide.js';
import { blockerNames, foregroundCycleBrokenEvent, ownerRefInvalidNamespaceEvent } from '../../core/gc/events.js';
import { GcEvents } from './gc-events.js';
import { Graph } from '../../core/gc/graph.js';
import { NodeFlags, type GraphNode } from '../../core/gc/graph-node.js';
import { formatIdentity, identityOf, type Identity } from '../../core/gc/graph-identity.js';
import { inModeScope, inRestriction, type GcMode, type GcScopeRestriction } from '../../core/gc/scope.js';
import { barrierRank, type SyncBarrier } from '../../core/gc/sync-barrier.js';
import { noopGcMetrics, type GcMetrics } from './metrics.js';
import { OwnerVerifier, type ResourceResolver } from './owner-verifier.js';
import { WorkerBarrier } from './worker-barrier.js';
import { GraphWriter, type GraphChange } from './graph-writer.js';
import { releaseDependents, removeFinalizer, type GcApi } from './writes.js';
import { attemptBeforeOrphaning, decideAndAct, snapshotOfNode, verifyVirtual, type AttemptContext } from './attempt-to-delete.js';
import type { GcLog } from './gc-log.js';

export type { GcApi } from './writes.js';
export type { GcLog, GcLogLevel } from './gc-log.js';

export interface GcEngineOptions {
  mode: Exclude<GcMode, 'off'>;
  clock: Clock;
  /** Foreground cycles: an owner waits this long per dependent (direct and indirect) before its finalizer is removed. */
  cycleTimeoutPerDependentMs?: number;
  absentOwnerCacheSize?: number;
  /** How long a verified owner state may be reused for other dependents (graph events invalidate it sooner). */
  ownerStateTtlMs?: number;
  /** Acting only on part of the cluster (tests on a shared apiserver). The graph still sees everything. */
  restrictTo?: GcScopeRestriction;
  metrics?: GcMetrics;
  log?: GcLog;
  /** Name of this replica on events. */
  reportingInstance?: string;
  /** Longest per-item retry backoff. */
  maxRetryDelayMs?: number;
  /** How often a running cascade's GarbageCollected Event is brought up to date (default 2 s). */
  cascadeEventIntervalMs?: number;
}

export class GcEngine {
  readonly graph = new Graph();
  readonly attemptToDelete: WorkQueue<string>;
  readonly attemptToOrphan: WorkQueue<string>;
  readonly verifier: OwnerVerifier;
  private readonly metrics: GcMetrics;
  private readonly log: GcLog;
  private readonly cycleTimeoutPerDependentMs: number;

  private readonly writer: GraphWriter;
  private stopped = false;
  private running: Promise<unknown> | undefined;
  private readonly events: GcEvents;
  private readonly barrier: WorkerBarrier;
  private readonly attempt: AttemptContext;
  /** Numbers setSyncBarrier calls: a queued barrier superseded by a later call is dropped. */
  private barrierSeq = 0;
  /** Whether the first complete graph has been swept for foreground waits (foregroundWaitsAtStart). */
  private startSwept = false;

  constructor(
    private readonly api: GcApi,
    private readonly resolver: ResourceResolver,
    private readonly options: GcEngineOptions,
  ) {
    this.metrics = options.metrics ?? noopGcMetrics;
    this.log = options.log ?? (() => {});
    this.cycleTimeoutPerDependentMs = options.cycleTimeoutPerDependentMs ?? 30_000;
    this.writer = new GraphWriter({
      apply: (change) => this.apply(change),
      depth: (n) => this.metrics.queueDepth('graphChanges', n),
      applied: () => this.metrics.graphSize(this.graph.size),
    });
    const queue = (name: 'attemptToDelete' | 'attemptToOrphan') =>
      new WorkQueue<string>({
        clock: options.clock,
        rateLimiter: new MaxOfRateLimiter<string>(
          new ExponentialBackoffRateLimiter<string>({ baseDelayMs: 5, maxDelayMs: options.maxRetryDelayMs ?? 60_000 }),
          new TokenBucketRateLimiter<string>(options.clock, {}),
        ),
        metrics: this.metrics.workQueue?.(name) ?? {
          depth: (n) => this.metrics.queueDepth(name, n),
          added: () => {},
          queueLatency: () => {},
          workDuration: () => {},
          retried: () => {},
        },
      });
    this.attemptToDelete = queue('attemptToDelete');
    this.attemptToOrphan = queue('attemptToOrphan');
    this.barrier = new WorkerBarrier(
      (queue, uid) => this[queue].add(uid),
      (level, message) => this.log(level, message),
    );
    this.verifier = new OwnerVerifier(api, resolver, options.clock, {
      absentCacheSize: options.absentOwnerCacheSize ?? 2_000,
      presentTtlMs: options.ownerStateTtlMs ?? 2_000,
    });
    this.events = new GcEvents(
      api,
      this.graph,
      options.clock,
      options.reportingInstance ?? 'bundlesmith',
      this.metrics,
      this.log,
      options.cascadeEventIntervalMs ?? 2_000,
    );
    this.attempt = {
      graph: this.graph,
      api,
      resolver,
      verifier: this.verifier,
      metrics: this.metrics,
      debug: (message, fields) => this.log('debug', message, fields),
      graphComplete: () => this.barrier.current().phase === 'complete',
      virtualDelete: (identity) => this.virtualDelete(identity),
      collected: (identity, propagation, causes) => this.events.collected(identity, propagation, causes),
    };
  }

  // ---- the graph writer -------------------------------------------------

  /**
   * Informer side: an add or update, or an object listed. Only queues the
   * change (no work in handlers). `source` names the informer (a small
   * positive number; 0: none), for `listed`.
   */
  observed(object: KubeObject, source = 0): void {
    this.writer.push({ kind: 'observed', object, source });
  }

  /** Informer side: `source`'s list is complete and held `uids`; the graph drops what else that source observed. */
  listed(source: number, uids: ReadonlySet<string>): void {
    this.writer.push({ kind: 'listed', source, uids });
  }

  /** Informer side: a delete. */
  deleted(object: KubeObject): void {
    this.writer.push({ kind: 'deleted', object });
  }

  /** Worker side: nothing with this identity exists (verified live). */
  virtualDelete(identity: Identity): void {
    this.writer.push({ kind: 'virtual-delete', identity });
  }

  /**
   * The collector's view of its informers changed. A stricter barrier applies
   * at once; a more open one goes through the writer, after the informer
   * events pushed before it, so that no worker acts on a graph that has not
   * applied the lists the barrier counts as synced.
   */
  setSyncBarrier(barrier: SyncBarrier): void {
    const seq = ++this.barrierSeq;
    if (barrierRank(barrier) < barrierRank(this.barrier.current())) this.barrier.set(barrier);
    else this.writer.push({ kind: 'barrier', barrier, seq });
  }

  syncBarrier(): SyncBarrier {
    return this.barrier.current();
  }

  /** Items set aside until the graph is complete (for tests). */
  deferredItems(): { attemptToDelete: string[]; attemptToOrphan: string[] } {
    return this.barrier.deferredItems();
  }

  pendingChanges(): number {
    return this.writer.pending();
  }

  /** The writer's step: applies every pending change, in order. */
  drainChanges(): number {
    return this.writer.drain();
  }

  /** What one change does: the only code that mutates the graph. */
  private apply(change: GraphChange): void {
    if (change.kind === 'barrier') {
      // A later call (a stricter barrier applied at once, say) wins over this one.
      if (change.seq !== this.barrierSeq) return;
      this.barrier.set(change.barrier);
      if (change.barrier.phase === 'complete' && !this.startSwept) {
        // Once, at start: later transitions into foreground deletion queue their dependents as they happen.
        this.startSwept = true;
        for (const uid of foregroundWaitsAtStart(this.graph)) this.attemptToDelete.add(uid);
      }
      return;
    }
    const at = this.options.clock.now();
    const fx =
      change.kind === 'virtual-delete'
        ? applyEvent(this.graph, { type: 'virtual-delete', identity: change.identity, at })
        : change.kind === 'deleted'
          ? applyEvent(this.graph, { type: 'deleted', object: change.object, at })
          : change.kind === 'listed'
            ? applyEvent(this.graph, { type: 'listed', source: change.source, uids: change.uids, at })
            : applyEvent(this.graph, {
                type: 'observed',
                object: change.object,
                tagged: this.tagged(change.object),
                source: change.source,
                at,
              });
    for (const uid of fx.touched) this.verifier.invalidate(uid);
    for (const id of fx.absentOwners) {
      // Never an absence under namespace '' for a kind known to be namespaced: it would stand for every namespace.
      if (id.namespace === '' && this.resolver.lookup?.(id.apiVersion, id.kind)?.namespaced) continue;
      this.verifier.markAbsent(id);
    }
    for (const uid of fx.attemptToDelete) this.attemptToDelete.add(uid);
    for (const uid of fx.attemptToDeleteRateLimited) this.attemptToDelete.addRateLimited(uid);
    for (const uid of fx.attemptToOrphan) this.attemptToOrphan.add(uid);
    for (const report of fx.invalidNamespaceRefs) this.reportInvalidNamespace(report);
  }

  // ---- lifecycle -----------------------------------------------------------

  /** Starts the writer and the workers (stop() ends them). */
  run(workers: number, orphanWorkers: number): void {
    if (this.running) return;
    const onError = (queue: string) => (key: string, err: unknown) => {
      const where = err instanceof KubeApiError ? ` (${err.verb} ${err.path}: ${err.code} ${err.reason})` : '';
      this.log('warn', `${queue} ${key} failed: ${errorMessage(err)}${where}`);
    };
    this.running = Promise.all([
      this.writer.run(),
      runWorkers(this.attemptToDelete, workers, (uid) => this.processAttemptToDelete(uid), onError('attempt-to-delete')),
      runWorkers(this.attemptToOrphan, orphanWorkers, (uid) => this.processAttemptToOrphan(uid), onError('attempt-to-orphan')),
    ]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.writer.stop();
    this.barrier.release();
    this.attemptToDelete.shutDown();
    this.attemptToOrphan.shutDown();
    await this.running;
    await this.events.stop();
  }

  // ---- scope ---------------------------------------------------------------

  private tagged(obj: KubeObject): boolean {
    return this.options.restrictTo !== undefined && inRestriction(this.options.restrictTo, obj);
  }

  /** Whether the collector may change this object (mode, and the test restriction). */
  acts(node: GraphNode): boolean {
    if (this.options.restrictTo && !node.has(NodeFlags.tagged)) return false;
    return inModeScope(this.options.mode, this.graph, node);
  }

  // ---- attempt to delete ----------------------------------------------------

  async processAttemptToDelete(uid: string): Promise<WorkResult> {
    await this.barrier.workersMayRun();
    if (this.stopped) return 'forget';
    const node = this.graph.get(uid);
    const plan = planAttemptToDelete(node);
    if (!node || plan.kind === 'skip') return 'forget';
    if (plan.kind === 'verify-virtual') return verifyVirtual(this.attempt, node);
    if (!this.acts(node)) return 'forget';
    if (plan.kind === 'deleting-dependents') return this.processDeletingDependents(node);
    return decideAndAct(this.attempt, snapshotOfNode(node), false);
  }

  private async processDeletingDependents(owner: GraphNode): Promise<WorkResult> {
    const facts = deletingDependentsFacts(this.graph, owner, this.options.clock.now(), this.cycleTimeoutPerDependentMs);
    const decision = decideDeletingDependents(facts);
    if (decision.kind === 'wait') {
      for (const uid of decision.enqueue) this.attemptToDelete.add(uid);
      return decision.recheckAfterMs !== undefined ? { requeueAfterMs: decision.recheckAfterMs } : 'forget';
    }
    // "No blocking dependent left" is only true of a graph that has seen every resource.
    if (!this.barrier.allowedNow('finish-foreground', owner.uid, 'attemptToDelete')) return 'forget';
    const id = identityOf(owner);
    const rt = await this.resolver.resolve(id.apiVersion, id.kind);
    if (!rt) return 'requeue';
    const removed = await removeFinalizer(this.api, this.metrics, rt, id, decision.finalizer);
    if (removed && decision.reason === 'cycle-timeout') {
      this.events.emit(
        id,
        foregroundCycleBrokenEvent({
          ...decision,
          transitiveDependents: facts.transitiveDependents,
          blockers: blockerNames(this.graph, decision.blockers),
        }),
      );
    }
    return 'forget';
  }

  // ---- attempt to orphan ---------------------------------------------------

  async processAttemptToOrphan(uid: string): Promise<WorkResult> {
    await this.barrier.workersMayRun();
    if (this.stopped) return 'forget';
    const owner = this.graph.get(uid);
    const decision = decideAttemptToOrphan(owner);
    if (!owner || decision.kind === 'forget' || !this.acts(owner)) return 'forget';
    // The dependents to orphan are the graph's: unlisted ones would keep a reference to an owner that then goes.
    if (!this.barrier.allowedNow('orphan-dependents', owner.uid, 'attemptToOrphan')) return 'forget';
    const id = identityOf(owner);
    const dependents = decision.dependents.map((uid) => this.graph.get(uid)).filter((d): d is GraphNode => d !== undefined && !d.virtual);
    await attemptBeforeOrphaning(this.attempt, dependents, (d) => this.acts(d));
    const failures = await releaseDependents(this.api, this.resolver, this.metrics, dependents, id.uid);
    for (const err of failures) this.log('warn', `orphaning a dependent of ${formatIdentity(id)} failed: ${errorMessage(err)}`);
    if (failures.length > 0) return 'requeue';
    const rt = await this.resolver.resolve(id.apiVersion, id.kind);
    if (rt) await removeFinalizer(this.api, this.metrics, rt, id, Finalizers.orphan);
    return rt ? 'forget' : 'requeue';
  }

  // ---- events ----------------------------------------------------------------

  private reportInvalidNamespace(report: InvalidNamespaceReport): void {
    const node = this.graph.get(report.dependent.uid);
    if (node && this.options.restrictTo && !node.has(NodeFlags.tagged)) return;
    this.events.emit(report.dependent, ownerRefInvalidNamespaceEvent(report));
  }

  /** Events still being sent, and cascades not yet said (tests wait for them). */
  async flushEvents(): Promise<void> {
    await this.events.flush();
  }
}
