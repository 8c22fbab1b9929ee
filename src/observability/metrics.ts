/**
 * Prometheus metrics (prom-client). One registry per operator instance (no
 * module-level singletons, so tests can run several). Labels are kept to low
 * cardinality: result, queue, kind, condition; never object names.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { WorkQueueMetrics } from '../runtime/workqueue.js';

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly reconcileDuration: Histogram<'controller'>;
  readonly queueDepth: Gauge<'queue'>;
  readonly queueAdds: Counter<'queue'>;
  readonly queueLatency: Histogram<'queue'>;
  readonly queueWorkDuration: Histogram<'queue'>;
  readonly queueRetries: Counter<'queue'>;
  readonly bundlesByCondition: Gauge<'condition' | 'status'>;
  readonly pendingDeletions: Gauge;
  readonly awaitingApproval: Gauge;
  readonly gcGraphNodes: Gauge;
  readonly gcActions: Counter<'action' | 'kind' | 'result'>;
  readonly bundleDeletesTotal: Counter<'kind' | 'reason'>;
  readonly gcDiscoveryErrors: Counter;
  readonly informerRestarts: Counter<'resource'>;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    this.reconciles = new Counter({ name: 'bundlesmith_reconcile_total', help: 'Reconciles by controller and result', labelNames: ['controller', 'result'], registers });
    this.reconcileDuration = new Histogram({ name: 'bundlesmith_reconcile_duration_seconds', help: 'Reconcile duration', labelNames: ['controller'], registers, buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });
    this.queueDepth = new Gauge({ name: 'bundlesmith_workqueue_depth', help: 'Keys waiting in a work queue', labelNames: ['queue'], registers });
    this.queueAdds = new Counter({ name: 'bundlesmith_workqueue_adds_total', help: 'Keys added to a work queue', labelNames: ['queue'], registers });
    this.queueLatency = new Histogram({ name: 'bundlesmith_workqueue_queue_duration_seconds', help: 'Time a key waits before a worker takes it', labelNames: ['queue'], registers, buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60] });
    this.queueWorkDuration = new Histogram({ name: 'bundlesmith_workqueue_work_duration_seconds', help: 'Time a worker holds a key', labelNames: ['queue'], registers, buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60] });
    this.queueRetries = new Counter({ name: 'bundlesmith_workqueue_retries_total', help: 'Rate-limited re-adds', labelNames: ['queue'], registers });
    this.bundlesByCondition = new Gauge({ name: 'bundlesmith_bundles', help: 'Bundles by condition type and status', labelNames: ['condition', 'status'], registers });
    this.pendingDeletions = new Gauge({ name: 'bundlesmith_pending_deletions', help: 'Objects that left their Bundle and wait for their deletion (delay, approval, Bundle readiness)', registers });
    this.awaitingApproval = new Gauge({ name: 'bundlesmith_deletions_awaiting_approval', help: 'Objects due for deletion that wait for an approval (deletionPolicy Approve)', registers });
    this.gcGraphNodes = new Gauge({ name: 'bundlesmith_gc_graph_nodes', help: 'Objects tracked by the garbage collector graph', registers });
    this.gcActions = new Counter({ name: 'bundlesmith_gc_actions_total', help: 'Garbage collector deletes, orphanings and errors', labelNames: ['action', 'kind', 'result'], registers });
    this.bundleDeletesTotal = new Counter({ name: 'bundlesmith_bundle_deletes_total', help: 'Objects the Bundle controller deleted from a Bundle pass, by kind and event reason (Pruned, DeletedAfterDelay)', labelNames: ['kind', 'reason'], registers });
    this.gcDiscoveryErrors = new Counter({ name: 'bundlesmith_gc_discovery_errors_total', help: 'Failed discovery syncs of the garbage collector', registers });
    this.informerRestarts = new Counter({ name: 'bundlesmith_informer_restarts_total', help: 'Informer relists after errors', labelNames: ['resource'], registers });
  }

  /** The Bundle controller's deletes, counted by kind and reason. */
  bundleDeletes(): { deleted(kind: string, reason: string): void } {
    return { deleted: (kind, reason) => this.bundleDeletesTotal.inc({ kind, reason }) };
  }

  /** Work queue observations for one named queue. */
  queue(name: string): WorkQueueMetrics {
    return {
      depth: (v) => this.queueDepth.set({ queue: name }, v),
      added: () => this.queueAdds.inc({ queue: name }),
      queueLatency: (s) => this.queueLatency.observe({ queue: name }, s),
      workDuration: (s) => this.queueWorkDuration.observe({ queue: name }, s),
      retried: () => this.queueRetries.inc({ queue: name }),
    };
  }
}
