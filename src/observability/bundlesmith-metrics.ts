/**
 * The bundlesmith_* metric family: the names this project has always
 * exported, kept as they are (with client-go's leader_election_master_status,
 * registered beside the leader gauge). OperatorMetrics (metrics.ts) extends
 * it with controller-runtime's and client-go's families; separate so that
 * each file holds one family's definitions. Registered first, in this order,
 * so the scrape output keeps its order.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class BundlesmithMetrics {
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
  readonly resourcesDrifted: Gauge<'namespace' | 'bundle'>;
  readonly gcGraphNodes: Gauge;
  readonly gcActions: Counter<'action' | 'kind' | 'result'>;
  readonly bundleDeletesTotal: Counter<'kind' | 'reason'>;
  readonly gcDiscoveryErrors: Counter;
  readonly informerRestarts: Counter<'resource'>;
  /** 1 while this replica runs the controllers (holds the Lease, or leader election is off). */
  readonly leader: Gauge;
  /** client-go's leader_election_master_status{name}: 1 while this replica holds the named Lease. */
  readonly leaderElectionStatus: Gauge<'name'>;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    this.reconciles = new Counter({
      name: 'bundlesmith_reconcile_total',
      help: 'Reconciles by controller and result',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'bundlesmith_reconcile_duration_seconds',
      help: 'Reconcile duration',
      labelNames: ['controller'],
      registers,
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.queueDepth = new Gauge({
      name: 'bundlesmith_workqueue_depth',
      help: 'Keys waiting in a work queue',
      labelNames: ['queue'],
      registers,
    });
    this.queueAdds = new Counter({
      name: 'bundlesmith_workqueue_adds_total',
      help: 'Keys added to a work queue',
      labelNames: ['queue'],
      registers,
    });
    this.queueLatency = new Histogram({
      name: 'bundlesmith_workqueue_queue_duration_seconds',
      help: 'Time a key waits before a worker takes it',
      labelNames: ['queue'],
      registers,
      buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60],
    });
    this.queueWorkDuration = new Histogram({
      name: 'bundlesmith_workqueue_work_duration_seconds',
      help: 'Time a worker holds a key',
      labelNames: ['queue'],
      registers,
      buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60],
    });
    this.queueRetries = new Counter({
      name: 'bundlesmith_workqueue_retries_total',
      help: 'Rate-limited re-adds',
      labelNames: ['queue'],
      registers,
    });
    this.bundlesByCondition = new Gauge({
      name: 'bundlesmith_bundles',
      help: 'Bundles by condition type and status',
      labelNames: ['condition', 'status'],
      registers,
    });
    this.pendingDeletions = new Gauge({
      name: 'bundlesmith_pending_deletions',
      help: 'Objects that left their Bundle and wait for their deletion (delay, approval, Bundle readiness)',
      registers,
    });
    this.resourcesDrifted = new Gauge({
      name: 'bundlesmith_resources_drifted',
      help: 'Resources of a Bundle with drift: Warn whose live fields differ from the manifest (Drifted=True; not written)',
      labelNames: ['namespace', 'bundle'],
      registers,
    });
    this.awaitingApproval = new Gauge({
      name: 'bundlesmith_deletions_awaiting_approval',
      help: 'Objects due for deletion that wait for an approval (deletionPolicy Approve)',
      registers,
    });
    this.gcGraphNodes = new Gauge({
      name: 'bundlesmith_gc_graph_nodes',
      help: 'Objects tracked by the garbage collector graph',
      registers,
    });
    this.gcActions = new Counter({
      name: 'bundlesmith_gc_actions_total',
      help: 'Garbage collector deletes, orphanings and errors',
      labelNames: ['action', 'kind', 'result'],
      registers,
    });
    this.bundleDeletesTotal = new Counter({
      name: 'bundlesmith_bundle_deletes_total',
      help: 'Objects the Bundle controller deleted from a Bundle pass, by kind and event reason (Pruned, DeletedAfterDelay)',
      labelNames: ['kind', 'reason'],
      registers,
    });
    this.gcDiscoveryErrors = new Counter({
      name: 'bundlesmith_gc_discovery_errors_total',
      help: 'Failed discovery syncs of the garbage collector',
      registers,
    });
    this.informerRestarts = new Counter({
      name: 'bundlesmith_informer_restarts_total',
      help: 'Informer relists after errors',
      labelNames: ['resource'],
      registers,
    });
    this.leader = new Gauge({
      name: 'bundlesmith_leader',
      help: '1 while this replica runs the controllers (holds the Lease, or leader election is off)',
      registers,
    });
    this.leaderElectionStatus = new Gauge({
      name: 'leader_election_master_status',
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
      labelNames: ['name'],
      registers,
    });
  }
}
