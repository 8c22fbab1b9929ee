/** Builds the garbage collector for --gc=cluster|bundles. */
import type { KubeClient } from './kube/client.js';
import type { Logger } from './observability/logger.js';
import type { OperatorMetrics } from './observability/metrics.js';
import type { Clock } from './runtime/clock.js';
import type { GarbageCollectorPart } from './operator.js';

export interface GarbageCollectorFactoryOptions {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  metrics?: OperatorMetrics;
  mode: 'cluster' | 'bundles';
  workers: number;
  namespace?: string;
}

export function createGarbageCollector(o: GarbageCollectorFactoryOptions): GarbageCollectorPart | undefined {
  // Wired to src/controllers/gc once it lands.
  o.logger.warn({ mode: o.mode }, 'the built-in garbage collector is not wired yet');
  return undefined;
}
