/**
 * The collector's workers as the sync barrier (core/gc/sync-barrier.ts) lets them
 * run: held workers wait here, and an action the barrier does not allow yet is
 * set aside and queued again once the graph is complete.
 */
import { barrierAllows, describeBarrier, type GcAction, type SyncBarrier } from '../../core/gc/sync-barrier.js';

export type DeferredQueue = 'attemptToDelete' | 'attemptToOrphan';

export class WorkerBarrier {
  /** Open by default: the engine alone (tests) has no informers to wait for. */
  private barrier: SyncBarrier = { phase: 'complete' };
  private waiters: (() => void)[] = [];
  private released = false;
  private readonly deferred: Record<DeferredQueue, Set<string>> = { attemptToDelete: new Set(), attemptToOrphan: new Set() };

  constructor(
    /** Queues again, on a complete graph, what was set aside. */
    private readonly requeue: (queue: DeferredQueue, uid: string) => void,
    private readonly log: (level: 'debug' | 'info', message: string) => void,
  ) {}

  current(): SyncBarrier {
    return this.barrier;
  }

  set(barrier: SyncBarrier): void {
    const was = this.barrier;
    this.barrier = barrier;
    if (barrier.phase !== was.phase) this.log('info', `garbage collector workers: ${describeBarrier(barrier)}`);
    if (barrier.phase !== 'held') this.wakeAll();
    if (barrier.phase === 'complete') {
      for (const queue of ['attemptToDelete', 'attemptToOrphan'] as const) {
        for (const uid of this.deferred[queue]) this.requeue(queue, uid);
        this.deferred[queue].clear();
      }
    }
  }

  /** Resolves when workers may take items (at once unless the barrier is held, or the barrier was released for a stop). */
  workersMayRun(): Promise<void> {
    if (this.barrier.phase !== 'held' || this.released) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Whether the barrier lets this action be taken now; if not, the item is set aside until the graph is complete. */
  allowedNow(action: GcAction, uid: string, queue: DeferredQueue): boolean {
    if (barrierAllows(this.barrier, action)) return true;
    this.deferred[queue].add(uid);
    this.log('debug', `${action} of ${uid} deferred until every resource has been listed`);
    return false;
  }

  deferredItems(): { attemptToDelete: string[]; attemptToOrphan: string[] } {
    return { attemptToDelete: [...this.deferred.attemptToDelete].sort(), attemptToOrphan: [...this.deferred.attemptToOrphan].sort() };
  }

  /** Stopping: every held worker goes on (and finds the engine stopped). */
  release(): void {
    this.released = true;
    this.wakeAll();
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
