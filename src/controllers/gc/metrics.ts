/**
 * Observation hooks of the garbage collector. The default does nothing; the
 * Prometheus wiring implements this interface elsewhere. Implementations
 * must not throw and must be cheap (they are called on hot paths).
 */
import type { WorkQueueMetrics } from '../../runtime/workqueue.js';

export type GcQueueName = 'graphChanges' | 'attemptToDelete' | 'attemptToOrphan';
export type GcOperation = 'delete' | 'orphan' | 'remove-refs' | 'remove-finalizer' | 'verify-owner' | 'verify-virtual' | 'event';

export interface GcMetrics {
  /** Nodes in the dependency graph (virtual ones included). */
  graphSize(nodes: number): void;
  queueDepth(queue: GcQueueName, depth: number): void;
  /** Full work queue observations for a worker queue (adds, latencies, retries, work in flight); without it only the depth is kept. */
  workQueue?(queue: Exclude<GcQueueName, 'graphChanges'>): WorkQueueMetrics;
  /** One object deleted by the collector; `kind` is the deleted object's kind. */
  deleted(kind: string, propagation: 'Background' | 'Foreground' | 'Orphan'): void;
  /** One dependent released from an owner with the orphan finalizer; `kind` is the dependent's. */
  orphaned(kind: string): void;
  error(kind: string, operation: GcOperation): void;
  discoverySyncError(): void;
}

export const noopGcMetrics: GcMetrics = {
  graphSize: () => {},
  queueDepth: () => {},
  deleted: () => {},
  orphaned: () => {},
  error: () => {},
  discoverySyncError: () => {},
};
