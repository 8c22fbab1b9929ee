/**
 * The released-object sweep's memory of the resources RBAC would not let it
 * watch. It starts every watch and takes a refused list or watch as the
 * answer (asking RBAC first costs two reviews per kind at every start,
 * requests the Bundle passes wait for under a small budget); a refused
 * resource is left alone for a while and then tried again, as RBAC may grow.
 * A Bundle being deleted brings them back sooner (retrySoon): it releases
 * its delayed objects, whose kinds the finalizer could list, so the sweep
 * must see them (fuzz seed 19614: a countdown left five minutes past its end).
 */
import type { Clock } from '../../kube/clock.js';

/** How long a resource the operator may not watch is left alone before its watch is tried again. */
const RECHECK_MS = 5 * 60_000;
/** The least time between two early retries brought on by Bundle deletions (a refused list is one request per kind). */
const EARLY_RETRY_EVERY_MS = 10_000;
/** How long an early retry waits, so that the events of one deletion ask for one retry. */
const EARLY_RETRY_AFTER_MS = 1_000;

export class RefusedWatches {
  /** When each refused resource was last refused. */
  private readonly refusedAt = new Map<string, number>();
  /** Cancels the early retry that is due, or the pause after the last one. */
  private early: (() => void) | undefined;

  constructor(private readonly clock: Pick<Clock, 'now' | 'setTimeout'>) {}

  /** RBAC refused the resource's watch now; true the first time (worth a log line). */
  refuse(id: string): boolean {
    const first = !this.refusedAt.has(id);
    this.refusedAt.set(id, this.clock.now());
    return first;
  }

  /** Whether the resource was refused less than RECHECK_MS ago: leave it alone. */
  recentlyRefused(id: string): boolean {
    const at = this.refusedAt.get(id);
    return at !== undefined && this.clock.now() - at < RECHECK_MS;
  }

  /**
   * Forget every refusal and call `resync` (which starts the watches again)
   * shortly, unless nothing was refused or an early retry ran less than
   * EARLY_RETRY_EVERY_MS ago.
   */
  retrySoon(resync: () => Promise<void>): void {
    if (this.refusedAt.size === 0 || this.early !== undefined) return;
    this.early = this.clock.setTimeout(() => {
      this.refusedAt.clear();
      void resync().finally(() => {
        this.early = this.clock.setTimeout(() => (this.early = undefined), EARLY_RETRY_EVERY_MS);
      });
    }, EARLY_RETRY_AFTER_MS);
  }

  stop(): void {
    this.early?.();
    this.early = undefined;
  }
}
