/**
 * The garbage collector as the operator runs it: discovery of every
 * resource it can list, watch and delete (CRDs included, events excluded),
 * one metadata-only informer per resource feeding the engine's graph writer,
 * re-discovery every 30 s and whenever a CRD is added, changed or removed.
 */
import { KubeClient } from '../../kube/client.js';
import { Discovery, preferredVersions } from '../../kube/discovery.js';
import { errorMessage } from '../../kube/errors.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { systemClock, type Cancel, type Clock } from '../../kube/clock.js';
import { SupervisedInformer } from '../../runtime/informer.js';
import { decideSyncBarrier } from '../../core/gc/sync-barrier.js';
import { GcEngine, type GcApi, type GcLog } from './engine.js';
import { noopGcMetrics, type GcMetrics } from './metrics.js';
import { neverCollected, type GcMode, type GcScopeRestriction } from '../../core/gc/scope.js';

export interface GarbageCollectorOptions {
  /** `--gc`: every resource (default), only Bundle-owned chains, or nothing. */
  mode?: GcMode;
  /** Attempt-to-delete workers (default 10). */
  workers?: number;
  /** Attempt-to-orphan workers (default: as many as workers). */
  orphanWorkers?: number;
  clock?: Clock;
  /**
   * Tests on a shared apiserver: act only on objects in these namespaces
   * (plus cluster-scoped objects carrying `clusterScopedLabel`). The graph
   * still covers the cluster.
   */
  namespaces?: readonly string[];
  clusterScopedLabel?: string;
  /** Foreground cycles: wait this long per dependent before removing an owner's foregroundDeletion finalizer (default 30 s). */
  cycleTimeoutPerDependentMs?: number;
  /**
   * How long an informer that has not listed yet holds the workers (default
   * 30 s). After it, workers run, but no foreground or orphan deletion is
   * completed until every informer has listed (see core/gc/sync-barrier.ts).
   */
  syncHoldMs?: number;
  /** Re-discovery interval (default 30 s). */
  discoveryIntervalMs?: number;
  absentOwnerCacheSize?: number;
  metrics?: GcMetrics;
  log?: GcLog;
  reportingInstance?: string;
  /** Shared discovery (default: the collector makes its own). */
  discovery?: Discovery;
  /** A client of its own for events, on its own connections (default: the collector's client). */
  eventClient?: KubeClient;
}

/**
 * What to watch: the preferred version of each group/resource, when it
 * supports list, watch and delete.
 */
export function collectableResources(all: readonly ResourceType[]): ResourceType[] {
  return preferredVersions(all).filter(
    (rt) =>
      !neverCollected(rt.group, rt.kind) && !rt.plural.includes('/') && ['list', 'watch', 'delete'].every((v) => rt.verbs.includes(v)),
  );
}

function resourceKey(rt: ResourceType): string {
  return `${rt.group}/${rt.version}/${rt.plural}`;
}

export class GarbageCollector {
  readonly engine: GcEngine;
  private readonly discovery: Discovery;
  private readonly clock: Clock;
  private readonly metrics: GcMetrics;
  private readonly log: GcLog;
  private readonly informers = new Map<string, SupervisedInformer>();
  /** A graph source number per group/resource (kept across versions and restarts, so a relist finds what its predecessor observed). */
  private readonly sources = new Map<string, number>();
  /** When each informer was started: the sync barrier's bound runs from there. */
  private readonly informerStartedAt = new Map<string, number>();
  private cancelBarrierRecheck: Cancel | undefined;
  private started = false;
  private stopping = false;
  private discovered = false;
  private cancelResync: Cancel | undefined;
  private cancelSoon: Cancel | undefined;
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly options: GarbageCollectorOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.metrics = options.metrics ?? noopGcMetrics;
    this.log = options.log ?? (() => {});
    this.discovery = options.discovery ?? new Discovery(client);
    const restrictTo: GcScopeRestriction | undefined = options.namespaces
      ? {
          namespaces: options.namespaces,
          ...(options.clusterScopedLabel !== undefined ? { clusterScopedLabel: options.clusterScopedLabel } : {}),
        }
      : undefined;
    // Events go through their own client when given one: their own
    // connections, so a slow event write never holds a socket a delete
    // waits for. The operator's clients share one request budget
    // (process-clients.ts), so events are counted in --qps all the same.
    const events = options.eventClient;
    const api: GcApi = events
      ? {
          tryGet: (...a) => client.tryGet(...a),
          patch: (...a) => client.patch(...a),
          delete: (...a) => client.delete(...a),
          createEvent: (input) => events.createEvent(input),
          updateEventSeries: (...a) => events.updateEventSeries(...a),
        }
      : client;
    this.engine = new GcEngine(api, this.discovery, {
      mode: options.mode === 'bundles' ? 'bundles' : 'cluster',
      clock: this.clock,
      metrics: this.metrics,
      log: this.log,
      ...(restrictTo ? { restrictTo } : {}),
      ...(options.cycleTimeoutPerDependentMs !== undefined ? { cycleTimeoutPerDependentMs: options.cycleTimeoutPerDependentMs } : {}),
      ...(options.absentOwnerCacheSize !== undefined ? { absentOwnerCacheSize: options.absentOwnerCacheSize } : {}),
      ...(options.reportingInstance !== undefined ? { reportingInstance: options.reportingInstance } : {}),
    });
    // Nothing is decided before discovery and the informers' first lists.
    this.engine.setSyncBarrier({ phase: 'held', waitingFor: ['discovery'] });
  }

  /**
   * Discovers, starts the informers and the workers. Resolves after the
   * first discovery (not the informers' sync); the workers take no item
   * before the informers have listed (see updateSyncBarrier).
   */
  async start(): Promise<void> {
    if (this.started || this.options.mode === 'off') return;
    this.started = true;
    const workers = this.options.workers ?? 10;
    this.engine.run(workers, this.options.orphanWorkers ?? workers);
    await this.syncResources();
    this.scheduleResync();
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopping) return;
    this.stopping = true;
    this.cancelResync?.();
    this.cancelSoon?.();
    this.cancelBarrierRecheck?.();
    await this.syncing;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    this.informers.clear();
    await this.engine.stop();
  }

  /**
   * Discovery ran and every informer has listed once, or is failing (an
   * aggregated API whose backend is down, a resource RBAC forbids): like
   * upstream's collector after its sync timeout, those must not keep the
   * operator unready forever; they keep retrying, and the graph fills in
   * when they sync.
   */
  hasSynced(): boolean {
    return this.discovered && [...this.informers.values()].every((i) => i.hasSynced() || i.health().lastError !== undefined);
  }

  /** Resolves once hasSynced() (or the collector stops). */
  async waitForSync(): Promise<void> {
    while (!this.discovered && !this.stopping) await new Promise((r) => setTimeout(r, 50));
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync()));
  }

  graphSize(): number {
    return this.engine.graph.size;
  }

  /** Resources currently watched (for health and tests). */
  watchedResources(): ResourceType[] {
    return [...this.informers.values()].map((i) => i.resource);
  }

  private scheduleResync(): void {
    if (this.stopping) return;
    this.cancelResync = this.clock.setTimeout(() => {
      void this.syncResources().finally(() => this.scheduleResync());
    }, this.options.discoveryIntervalMs ?? 30_000);
  }

  /** A CRD changed: re-discover soon (coalescing bursts of CRD events). */
  private resyncSoon(): void {
    if (this.stopping || this.cancelSoon) return;
    this.cancelSoon = this.clock.setTimeout(() => {
      this.cancelSoon = undefined;
      void this.syncResources();
    }, 500);
  }

  private syncResources(): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = this.doSyncResources().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async doSyncResources(): Promise<void> {
    if (this.stopping) return;
    try {
      await this.discovery.refresh();
    } catch (err) {
      this.metrics.discoverySyncError();
      this.log('warn', `garbage collector discovery failed: ${errorMessage(err)}`);
      return;
    }
    const failed = this.discovery.failedGroupVersions();
    if (failed.length > 0) {
      // Partial discovery (an aggregated API down): serve the rest; the informers of the failed group versions carry on.
      this.metrics.discoverySyncError();
      this.log('warn', `garbage collector discovery: ${failed.join(', ')} not discoverable now; keeping what was known of them`);
    }
    const wanted = new Map(collectableResources(this.discovery.resources()).map((rt) => [resourceKey(rt), rt]));
    for (const [key, informer] of this.informers) {
      if (wanted.has(key)) continue;
      this.informers.delete(key);
      this.informerStartedAt.delete(key);
      await informer.stop();
      this.log('info', `garbage collector stopped watching ${key}`);
    }
    for (const [key, rt] of wanted) {
      if (this.informers.has(key) || this.stopping) continue;
      const informer = this.startInformer(rt);
      this.informers.set(key, informer);
      this.informerStartedAt.set(key, this.clock.now());
      void informer.waitForSync().then(() => this.updateSyncBarrier());
    }
    this.discovered = true;
    this.updateSyncBarrier();
  }

  /**
   * Recomputes the workers' barrier from the informers' sync state (the rule is
   * decideSyncBarrier's). New informers hold the workers at once; the barrier
   * opens once they list, or once their bound passes (then only partially).
   */
  private updateSyncBarrier(): void {
    if (this.stopping) return;
    const now = this.clock.now();
    const barrier = decideSyncBarrier({
      discovered: this.discovered,
      informers: [...this.informers].map(([key, i]) => ({
        resource: key,
        synced: i.hasSynced(),
        waitingSince: this.informerStartedAt.get(key) ?? now,
      })),
      now,
      holdBoundMs: this.options.syncHoldMs ?? 30_000,
    });
    this.engine.setSyncBarrier(barrier);
    this.cancelBarrierRecheck?.();
    this.cancelBarrierRecheck = undefined;
    if (barrier.phase === 'held' && barrier.recheckAfterMs !== undefined) {
      this.cancelBarrierRecheck = this.clock.setTimeout(() => {
        this.cancelBarrierRecheck = undefined;
        this.updateSyncBarrier();
      }, barrier.recheckAfterMs);
    }
  }

  private startInformer(rt: ResourceType): SupervisedInformer {
    const isCrd = rt.group === 'apiextensions.k8s.io' && rt.plural === 'customresourcedefinitions';
    const sourceKey = `${rt.group}/${rt.plural}`;
    let source = this.sources.get(sourceKey);
    if (source === undefined) {
      source = this.sources.size + 1;
      this.sources.set(sourceKey, source);
    }
    const observedSource = source;
    // One informer per source at a time (a restarted one only after the old has stopped): a completed list
    // removes the nodes its source saw and the list lacks, so two informers of one source would drop each
    // other's objects, and with them owners the graph would then call absent.
    // The graph is the only index: the informer keeps no store, and each
    // list is diffed against the nodes this source observed (objects
    // deleted while its watch was down leave the graph then).
    const informer = new SupervisedInformer(this.client, rt, {
      metadataOnly: true,
      index: {
        observed: (obj: KubeObject) => {
          this.engine.observed(obj, observedSource);
          if (isCrd) this.resyncSoon();
        },
        deleted: (obj: KubeObject) => {
          this.engine.deleted(obj);
          if (isCrd) this.resyncSoon();
        },
        listed: (uids) => this.engine.listed(observedSource, uids),
      },
      onError: (err) => this.log('debug', `watch of ${rt.plural}.${rt.group} failed: ${errorMessage(err)}`),
    });
    informer.start();
    return informer;
  }
}
