import type { Cancel, Clock } from '../../src/kube/clock.js';

/**
 * Real time plus an offset that a test can jump forward: work keeps flowing
 * (retries, rechecks) while a 24-hour deletionDelay can be crossed at once.
 * Timers fire when the shifted time reaches them, by waiting or by advance().
 */
export class JumpingClock implements Clock {
  private offset = 0;
  private readonly timers = new Set<{ due: number; fn: () => void; handle?: NodeJS.Timeout }>();

  now(): number {
    return Date.now() + this.offset;
  }

  setTimeout(fn: () => void, ms: number): Cancel {
    const timer: { due: number; fn: () => void; handle?: NodeJS.Timeout } = { due: this.now() + Math.max(0, ms), fn };
    this.timers.add(timer);
    this.arm(timer);
    return () => {
      clearTimeout(timer.handle);
      this.timers.delete(timer);
    };
  }

  /** Jumps forward; timers now due fire. */
  advance(ms: number): void {
    this.offset += ms;
    for (const timer of [...this.timers]) this.arm(timer);
  }

  private arm(timer: { due: number; fn: () => void; handle?: NodeJS.Timeout }): void {
    clearTimeout(timer.handle);
    const wait = Math.min(timer.due - this.now(), 2 ** 31 - 1);
    timer.handle = setTimeout(
      () => {
        if (this.now() >= timer.due) {
          this.timers.delete(timer);
          timer.fn();
        } else {
          this.arm(timer);
        }
      },
      Math.max(0, wait),
    );
    timer.handle.unref();
  }
}
