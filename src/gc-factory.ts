/** Builds the garbage collector for --gc=cluster|bundles, with its metrics and logs wired to the operator's. */
import { GarbageCollector } from './controllers/gc/collector.js';
import type { GcMetrics } from './controllers/gc/metrics.js';
import type { KubeClient } from './kube/client.js';
import type { Logger } from './observability/logger.js';
import type { OperatorMetrics } from './observability/metrics.js';
import type { Clock } from './kube/clock.js';
import type { GcMode } from './core/gc/scope.js';

export interface GarbageCollectorFactoryOptions {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  metrics?: OperatorMetrics;
  mode: Exclude<GcMode, 'off'>;
  workers: number;
  /** With --namespace, the collector acts only there (its graph still spans what it can see). */
  namespace?: string;
  /** Events through their own client (own connections; the operator's clients share one request budget). */
  eventClient?: KubeClient;
}

export function gcMetricsOf(m: OperatorMetrics): GcMetrics {
  return {
    graphSize: (n) => m.gcGraphNodes.set(n),
    queueDepth: (queue, depth) => {
      m.queueDepth.set({ queue: `gc-${queue}` }, depth);
      m.wqDepth.set({ controller: 'gc', name: `gc-${queue}` }, depth);
    },
    workQueue: (queue) => m.queue(`gc-${queue}`, 'gc'),
    deleted: (kind) => m.gcActions.inc({ action: 'delete', kind, result: 'success' }),
    orphaned: (kind) => m.gcActions.inc({ action: 'orphan', kind, result: 'success' }),
    error: (kind, operation) => m.gcActions.inc({ action: operation, kind, result: 'error' }),
    discoverySyncError: () => m.gcDiscoveryErrors.inc(),
  };
}

export function createGarbageCollector(o: GarbageCollectorFactoryOptions): GarbageCollector {
  return new GarbageCollector(o.client, {
    mode: o.mode,
    workers: o.workers,
    clock: o.clock,
    ...(o.namespace ? { namespaces: [o.namespace] } : {}),
    ...(o.eventClient ? { eventClient: o.eventClient } : {}),
    ...(o.metrics ? { metrics: gcMetricsOf(o.metrics) } : {}),
    log: (level, message, fields) => o.logger[level](fields ?? {}, message),
  });
}
