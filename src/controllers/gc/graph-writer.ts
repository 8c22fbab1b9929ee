/**
 * The graph's single writer: informer handlers and workers only push
 * changes; one loop applies them, in order, a batch at a time, letting
 * informers and workers run between batches. What a change does to the
 * graph and the queues is the engine's (`apply`); this is the buffer and
 * the loop. Tests drain it by hand.
 */
import type { Identity } from '../../core/gc/graph-identity.js';
import type { SyncBarrier } from '../../core/gc/sync-barrier.js';
import type { KubeObject } from '../../kube/types.js';

export type GraphChange =
  | { kind: 'barrier'; barrier: SyncBarrier; seq: number }
  | { kind: 'observed'; object: KubeObject; source: number }
  | { kind: 'listed'; source: number; uids: ReadonlySet<string> }
  | { kind: 'deleted'; object: KubeObject }
  | { kind: 'virtual-delete'; identity: Identity };

export interface GraphWriterHooks {
  /** Carries one change out: the only code that mutates the graph. */
  apply(change: GraphChange): void;
  /** Changes waiting, after every push and batch. */
  depth(pending: number): void;
  /** After each batch. */
  applied(): void;
}

export class GraphWriter {
  private changes: GraphChange[] = [];
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly hooks: GraphWriterHooks) {}

  /** Queues a change (ignored once stopped) and wakes the loop. */
  push(change: GraphChange): void {
    if (this.stopped) return;
    this.changes.push(change);
    this.hooks.depth(this.changes.length);
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  pending(): number {
    return this.changes.length;
  }

  /** Applies every pending change, in order; returns how many. */
  drain(): number {
    const batch = this.changes;
    this.changes = [];
    for (const change of batch) this.hooks.apply(change);
    this.hooks.depth(this.changes.length);
    this.hooks.applied();
    return batch.length;
  }

  /** The loop: resolves once stop() is called. */
  async run(): Promise<void> {
    while (!this.stopped) {
      if (this.changes.length === 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      this.drain();
      // Let informers and workers run between batches.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Later pushes are dropped; the loop ends. */
  stop(): void {
    this.stopped = true;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
