/** The unit tests' clock (src/kube/clock.ts has the real one). */
import type { Cancel, Clock } from '../../src/kube/clock.js';

interface FakeTimer {
  dueAt: number;
  /** Insertion order, so timers due at the same time fire in the order they were set. */
  sequence: number;
  fn: () => void;
}

/**
 * A clock for tests: time stands still until `advance` or `set` moves it,
 * and timers fire synchronously, in due order, as time passes them. While a
 * timer fires, `now()` reads its due time. Timers set by a firing timer fire
 * in the same call when they fall due before the target time.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextSequence = 0;
  private readonly timers = new Set<FakeTimer>();

  constructor(startMs: number = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Cancel {
    const timer: FakeTimer = { dueAt: this.current + Math.max(0, ms), sequence: this.nextSequence++, fn };
    this.timers.add(timer);
    return () => {
      this.timers.delete(timer);
    };
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError(`FakeClock.advance(${ms}): time only moves forward; use set()`);
    this.runUntil(this.current + ms);
  }

  /**
   * Sets the time. Forward, it fires the timers that fall due; backward
   * (simulating a clock step), it fires nothing and pending timers keep their
   * absolute due times.
   */
  set(ms: number): void {
    if (ms < this.current) {
      this.current = ms;
      return;
    }
    this.runUntil(ms);
  }

  /** Number of timers waiting to fire. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** When the next timer falls due; undefined when none is pending. */
  nextDueAt(): number | undefined {
    return this.earliest()?.dueAt;
  }

  private earliest(): FakeTimer | undefined {
    let first: FakeTimer | undefined;
    for (const timer of this.timers) {
      if (first === undefined || timer.dueAt < first.dueAt || (timer.dueAt === first.dueAt && timer.sequence < first.sequence)) {
        first = timer;
      }
    }
    return first;
  }

  private runUntil(target: number): void {
    for (;;) {
      const next = this.earliest();
      if (next === undefined || next.dueAt > target) break;
      this.timers.delete(next);
      this.current = Math.max(this.current, next.dueAt);
      next.fn();
    }
    this.current = target;
  }
}
