/**
 * Prometheus metrics (prom-client). One registry per operator instance (no
 * module-level singletons, so tests can run several). Labels are kept to low
 * cardinality: result, queue, kind, condition; never object names.
 *
 * Two families describe the same work: bundlesmith_* (the names this project
 * has always exported, kept as they are), and, where a metric means what
 * controller-runtime's and client-go's do, their names and labels
 * (controller_runtime_reconcile_*, workqueue_* with `controller` and `name`,
 * rest_client_requests_total, leader_election_master_status), so that the
 * dashboards and alerts written for controller-runtime operators work here.
 * The bundlesmith_* family is defined in bundlesmith-metrics.ts (the base
 * class); this file adds the controller-runtime and client-go families, the
 * Bundle age gauges and the observations that feed both families.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { WorkQueueMetrics } from '../runtime/workqueue.js';
import { BundlesmithMetrics } from './bundlesmith-metrics.js';

/** controller-runtime's reconcile_time_seconds buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5,
  4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: ExponentialBuckets(10e-9, 10, 12). */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_v, i) => Number((1e-8 * 10 ** i).toPrecision(1)));

/** What a reconcile ended with, in controller-runtime's words. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** The Bundle gauges computed when scraped (they age with the clock between passes). */
export interface BundleAges {
  /** Seconds since the Ready condition of the Bundle not Ready longest last changed; 0 when all are Ready. */
  notReadyOldestSeconds: number;
  /** Pending deletions past their deleteAfter, not counting those waiting for an approval. */
  overdueDeletions: number;
  /** Seconds the most overdue of them is past its deleteAfter; 0 when none. */
  overdueOldestSeconds: number;
}

/** A work queue's keys being processed, for the unfinished-work gauges. */
interface InFlight {
  starts: () => Iterable<number>;
  now: () => number;
}

export class OperatorMetrics extends BundlesmithMetrics {
  // controller-runtime's and client-go's families.
  readonly crReconcileTotal: Counter<'controller' | 'result'>;
  readonly crReconcileErrors: Counter<'controller'>;
  readonly crReconcileTime: Histogram<'controller'>;
  readonly wqDepth: Gauge<'controller' | 'name'>;
  readonly wqAdds: Counter<'controller' | 'name'>;
  readonly wqQueueDuration: Histogram<'controller' | 'name'>;
  readonly wqWorkDuration: Histogram<'controller' | 'name'>;
  readonly wqRetries: Counter<'controller' | 'name'>;
  readonly wqUnfinished: Gauge<'controller' | 'name'>;
  readonly wqLongestRunning: Gauge<'controller' | 'name'>;
  readonly restClientRequests: Counter<'code' | 'method' | 'host'>;

  readonly bundlesNotReadyOldest: Gauge;
  readonly deletionsOverdue: Gauge;
  readonly deletionsOverdueOldest: Gauge;

  private readonly inFlight = new Map<string, { labels: { controller: string; name: string }; probe: InFlight }>();
  private bundleAges: (() => BundleAges) | undefined;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    super(opts);
    const registers = [this.registry];
    this.crReconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.crReconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.crReconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      registers,
      buckets: RECONCILE_BUCKETS,
    });
    const wq = ['controller', 'name'] as const;
    this.wqDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: wq, registers });
    this.wqAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: wq,
      registers,
    });
    this.wqQueueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: wq,
      registers,
      buckets: WORKQUEUE_BUCKETS,
    });
    this.wqWorkDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: wq,
      registers,
      buckets: WORKQUEUE_BUCKETS,
    });
    this.wqRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: wq,
      registers,
    });
    const inFlight = this.inFlight;
    this.wqUnfinished = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: wq,
      registers,
      collect() {
        for (const { labels, probe } of inFlight.values()) {
          const now = probe.now();
          let total = 0;
          for (const start of probe.starts()) total += Math.max(0, now - start);
          this.set(labels, total / 1000);
        }
      },
    });
    this.wqLongestRunning = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: wq,
      registers,
      collect() {
        for (const { labels, probe } of inFlight.values()) {
          const now = probe.now();
          let longest = 0;
          for (const start of probe.starts()) longest = Math.max(longest, now - start);
          this.set(labels, longest / 1000);
        }
      },
    });
    this.restClientRequests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers,
    });

    const ages = (): BundleAges => this.bundleAges?.() ?? { notReadyOldestSeconds: 0, overdueDeletions: 0, overdueOldestSeconds: 0 };
    this.bundlesNotReadyOldest = new Gauge({
      name: 'bundlesmith_bundles_not_ready_oldest_seconds',
      help: 'Seconds since the Ready condition of the Bundle that has not been Ready longest last changed; 0 when every Bundle is Ready',
      registers,
      collect() {
        this.set(ages().notReadyOldestSeconds);
      },
    });
    this.deletionsOverdue = new Gauge({
      name: 'bundlesmith_deletions_overdue',
      help: 'Pending deletions past their deleteAfter (waiting for every resource of the Bundle to be Ready, or not yet carried out), not counting those waiting for an approval',
      registers,
      collect() {
        this.set(ages().overdueDeletions);
      },
    });
    this.deletionsOverdueOldest = new Gauge({
      name: 'bundlesmith_deletions_overdue_oldest_seconds',
      help: 'Seconds the most overdue pending deletion is past its deleteAfter (approvals not counted); 0 when none is overdue',
      registers,
      collect() {
        this.set(ages().overdueOldestSeconds);
      },
    });
  }

  /** The source of the Bundle age gauges (the Bundle controller's gauges). */
  observeBundleAges(source: () => BundleAges): void {
    this.bundleAges = source;
  }

  /** One reconcile of `controller`, in both families. */
  reconciled(controller: string, result: ReconcileResult, seconds: number): void {
    this.reconciles.inc({ controller, result: result === 'requeue' ? 'retry' : result === 'requeue_after' ? 'success' : result });
    this.reconcileDuration.observe({ controller }, seconds);
    this.crReconcileTotal.inc({ controller, result });
    if (result === 'error') this.crReconcileErrors.inc({ controller });
    this.crReconcileTime.observe({ controller }, seconds);
  }

  /** One request to the API server, as client-go counts it. */
  requestDone(request: { method: string; code: string; host: string }): void {
    this.restClientRequests.inc({ code: request.code, method: request.method, host: request.host });
  }

  /** The Bundle controller's deletes, counted by kind and reason. */
  bundleDeletes(): { deleted(kind: string, reason: string): void } {
    return { deleted: (kind, reason) => this.bundleDeletesTotal.inc({ kind, reason }) };
  }

  /**
   * Work queue observations for one named queue: bundlesmith_workqueue_*{queue}
   * and workqueue_*{controller, name} (controller: the controller the queue feeds).
   */
  queue(name: string, controller: string = name): WorkQueueMetrics {
    const labels = { controller, name };
    return {
      depth: (v) => {
        this.queueDepth.set({ queue: name }, v);
        this.wqDepth.set(labels, v);
      },
      added: () => {
        this.queueAdds.inc({ queue: name });
        this.wqAdds.inc(labels);
      },
      queueLatency: (s) => {
        this.queueLatency.observe({ queue: name }, s);
        this.wqQueueDuration.observe(labels, s);
      },
      workDuration: (s) => {
        this.queueWorkDuration.observe({ queue: name }, s);
        this.wqWorkDuration.observe(labels, s);
      },
      retried: () => {
        this.queueRetries.inc({ queue: name });
        this.wqRetries.inc(labels);
      },
      inFlight: (starts, now) => {
        this.inFlight.set(name, { labels, probe: { starts, now } });
        // Present from the start, as client-go's are.
        this.wqDepth.set(labels, 0);
        this.wqUnfinished.set(labels, 0);
        this.wqLongestRunning.set(labels, 0);
        this.wqAdds.inc(labels, 0);
        this.wqRetries.inc(labels, 0);
      },
    };
  }
}
