/**
 * A keyed work queue with client-go's semantics (util/workqueue/queue.go,
 * delaying_queue.go, rate_limiting_queue.go):
 *
 * - Keys, not events: the worker re-reads the object when its key comes up.
 * - A key waiting in the queue is there once however often it is added
 *   (`dirty`).
 * - A key is handed to one worker at a time (`processing`): adding a key
 *   that is being processed marks it dirty, and `done` puts it back in line,
 *   so the change that came in during processing is not lost.
 * - Otherwise first in, first out.
 *
 * One deliberate difference: after `shutDown`, `get` resolves undefined at
 * once instead of handing out what is still queued. The queue stops because
 * the process is stopping or lost its lease; another replica owns that work.
 */
import type { Cancel, Clock } from '../kube/clock.js';
import { controllerRateLimiter, type RateLimiter } from './ratelimiter.js';

/**
 * Observations for metrics, called synchronously by the queue. Durations in
 * seconds, as Prometheus expects; implementations must not throw.
 */
export interface WorkQueueMetrics {
  /** Keys waiting to be handed out, after every change. */
  depth(value: number): void;
  /** A key was added (adds that collapse into a waiting key are not counted, as in client-go). */
  added(): void;
  /** How long a key waited between being queued and handed to a worker. */
  queueLatency(seconds: number): void;
  /** How long a worker held a key, from `get` to `done`. */
  workDuration(seconds: number): void;
  /** A key was re-added through the rate limiter. */
  retried(): void;
  /**
   * Called once by the queue with a view of the keys being processed (when
   * each was handed out, on the queue's clock), read when the metrics are
   * scraped (client-go's unfinished work and longest running processor).
   */
  inFlight?(starts: () => Iterable<number>, now: () => number): void;
}

export const noopWorkQueueMetrics: WorkQueueMetrics = {
  depth: () => {},
  added: () => {},
  queueLatency: () => {},
  workDuration: () => {},
  retried: () => {},
};

export interface WorkQueueOptions<K> {
  clock: Clock;
  /** Default: controllerRateLimiter(clock). */
  rateLimiter?: RateLimiter<K>;
  metrics?: WorkQueueMetrics;
}

/** A FIFO of keys with O(1) push and shift. */
class KeyFifo<K> {
  private items: (K | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(key: K): void {
    this.items.push(key);
  }

  shift(): K | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    // Compact once the consumed prefix dominates, so memory follows the live length.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }
}

interface DelayedAdd {
  readyAt: number;
  cancel: Cancel;
}

export class WorkQueue<K extends string | number = string> {
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<K>;
  private readonly metrics: WorkQueueMetrics;

  private readonly fifo = new KeyFifo<K>();
  /** Keys that need processing: waiting in the fifo, or re-added while processing. */
  private readonly dirty = new Set<K>();
  /** Keys a worker holds, with when it got them. */
  private readonly processing = new Map<K, number>();
  /** When each dirty key was first queued, for queue latency. */
  private readonly queuedAt = new Map<K, number>();
  /** Pending addAfter timers, one per key: the earliest wins. */
  private readonly delayed = new Map<K, DelayedAdd>();
  /** Workers blocked in get(), oldest first. */
  private readonly waiters: ((key: K | undefined) => void)[] = [];

  private shuttingDown = false;
  private drained: (() => void) | undefined;

  constructor(options: WorkQueueOptions<K>) {
    this.clock = options.clock;
    this.rateLimiter = options.rateLimiter ?? controllerRateLimiter<K>(options.clock);
    this.metrics = options.metrics ?? noopWorkQueueMetrics;
    this.metrics.inFlight?.(
      () => this.processing.values(),
      () => this.clock.now(),
    );
  }

  /** Queues `key` unless it is already waiting; ignored after shutdown. */
  add(key: K): void {
    if (this.shuttingDown) return;
    if (this.dirty.has(key)) return;
    this.metrics.added();
    this.dirty.add(key);
    this.queuedAt.set(key, this.clock.now());
    // A key being processed goes back in line when its worker calls done().
    if (this.processing.has(key)) return;
    this.fifo.push(key);
    this.metrics.depth(this.fifo.length);
    this.handOut();
  }

  /**
   * Queues `key` after `ms`. While a delayed add for the key is pending, an
   * earlier one replaces it and a later one is dropped. A direct add does not
   * cancel the pending one (client-go's delaying queue).
   */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending !== undefined) {
      if (pending.readyAt <= readyAt) return;
      pending.cancel();
    }
    const cancel = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { readyAt, cancel });
  }

  /** Queues `key` after the rate limiter's delay for it (one more failure counted). */
  addRateLimited(key: K): void {
    if (this.shuttingDown) return;
    this.metrics.retried();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Clears `key`'s backoff; call when it was processed successfully. Does not dequeue it. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  /** Failures counted for `key` since it was last forgotten. */
  retries(key: K): number {
    return this.rateLimiter.retries(key);
  }

  /**
   * The next key, marked as processing until `done(key)`. Waits while the
   * queue is empty; undefined once the queue is shut down.
   */
  get(): Promise<K | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.fifo.length > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  /** Releases `key` after processing; if it was added meanwhile, it goes back in line. */
  done(key: K): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics.workDuration((this.clock.now() - startedAt) / 1000);
    if (this.shuttingDown) {
      if (this.processing.size === 0) this.drained?.();
      return;
    }
    if (this.dirty.has(key)) {
      this.fifo.push(key);
      this.metrics.depth(this.fifo.length);
      this.handOut();
    }
  }

  /** Keys waiting to be handed out (not counting those being processed or delayed). */
  len(): number {
    return this.fifo.length;
  }

  /** Keys currently held by workers. */
  processingCount(): number {
    return this.processing.size;
  }

  /** Delayed adds not yet due. */
  delayedCount(): number {
    return this.delayed.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Stops the queue: later adds are ignored, pending delayed adds are
   * cancelled, waiting and future `get` calls resolve undefined. Keys already
   * handed out are not waited for.
   */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const pending of this.delayed.values()) pending.cancel();
    this.delayed.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
  }

  /** As shutDown, then resolves once every key handed out has been released with `done`. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.drained;
      this.drained = () => {
        previous?.();
        resolve();
      };
    });
  }

  private take(): K | undefined {
    const key = this.fifo.shift();
    if (key === undefined) return undefined;
    this.metrics.depth(this.fifo.length);
    const now = this.clock.now();
    this.dirty.delete(key);
    this.processing.set(key, now);
    const queuedAt = this.queuedAt.get(key);
    this.queuedAt.delete(key);
    if (queuedAt !== undefined) this.metrics.queueLatency((now - queuedAt) / 1000);
    return key;
  }

  /** Gives waiting keys to blocked workers, oldest worker first. */
  private handOut(): void {
    while (this.waiters.length > 0 && this.fifo.length > 0) {
      const waiter = this.waiters.shift();
      waiter?.(this.take());
    }
  }
}
