/**
 * The process's client-side request budget (--qps/--burst), which the
 * transport awaits before each request. It belongs to the client: every
 * client of the process shares one (process-clients.ts).
 */
import type { Cancel, Clock } from './clock.js';

/**
 * Whose turn comes first when requests wait for the process's budget:
 * `high` always; `normal` (the Bundle controller, events) and `background`
 * (the collector, the released-object sweeper) take turns.
 */
export type RequestPriority = 'high' | 'normal' | 'background';

/** What the transport needs of a budget: a token before each request. */
export interface RequestLimiter {
  /** Resolves when this request may be sent. */
  take(priority?: RequestPriority): Promise<void>;
}

export interface RequestBudgetOptions {
  /** Requests per second, the process as a whole (--qps). */
  qps: number;
  /** Requests that may go at once after a quiet spell (--burst). */
  burst: number;
}

/**
 * The process's client-side request budget (`--qps`/`--burst`, like
 * client-go's token bucket): one instance per process, shared by every
 * client that talks to the API server (the controllers', the collector's,
 * events, the Lease, the metrics endpoint's reviews), so the flags bound
 * what the whole process sends. Watches hold one long request each and do
 * not take tokens (nor do client-go's).
 *
 * Waiters are served in arrival order within a priority, `high` before
 * the rest: the Lease renewal and the metrics endpoint's reviews are a few
 * requests a minute, and must not queue behind a cascade of thousands of
 * deletes (a renewal that waits past the renew deadline costs the
 * leadership), so they wait at most for the next token; they still spend
 * the budget. `normal` and `background` alternate while both wait: the
 * collector's and the sweeper's start (a list of every resource the server
 * serves) or a long cascade takes half the tokens at most, so a Bundle
 * pass does not wait behind a hundred lists (under `--qps 5`: 40 s before
 * its first apply), and neither side can starve the other.
 */
export class RequestBudget implements RequestLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private lastMs: number;
  private readonly waiting: Record<RequestPriority, (() => void)[]> = { high: [], normal: [], background: [] };
  /** Which of normal and background goes next when both wait. */
  private backgroundNext = false;
  private cancelTimer: Cancel | undefined;
  private readonly grantedBy: Record<RequestPriority, number> = { high: 0, normal: 0, background: 0 };

  constructor(
    private readonly clock: Clock,
    options: RequestBudgetOptions,
  ) {
    this.qps = options.qps;
    this.burst = options.burst;
    if (!(this.qps > 0) || !(this.burst >= 1)) {
      throw new RangeError(`a request budget needs qps > 0 and burst >= 1, got qps ${this.qps}, burst ${this.burst}`);
    }
    this.tokens = this.burst;
    this.lastMs = clock.now();
  }

  take(priority: RequestPriority = 'normal'): Promise<void> {
    this.refill();
    if (this.waiters() === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      this.grantedBy[priority]++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.waiting[priority].push(() => {
        this.grantedBy[priority]++;
        resolve();
      });
      this.schedule();
    });
  }

  /** Tokens handed out so far, by priority (every request the process sent through this budget). */
  granted(): Readonly<Record<RequestPriority, number>> {
    return { ...this.grantedBy };
  }

  /** Requests waiting for a token. */
  waiters(): number {
    return this.waiting.high.length + this.waiting.normal.length + this.waiting.background.length;
  }

  private refill(): void {
    const now = this.clock.now();
    // A clock that stepped back adds nothing, and counts on from where it is now: keeping the later time would
    // hold every request of the process (the Lease's too) for as long as the step.
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.lastMs) * this.qps) / 1000);
    this.lastMs = now;
  }

  /** Hands out the tokens that have accrued (high first, then normal and background in turn), and waits for the next one if anyone still waits. */
  private release(): void {
    this.cancelTimer = undefined;
    this.refill();
    while (this.tokens >= 1) {
      const next = this.waiting.high.shift() ?? this.nextOfTheRest();
      if (!next) break;
      this.tokens -= 1;
      next();
    }
    if (this.waiters() > 0) this.schedule();
  }

  /** normal and background in turn while both wait; whichever waits when only one does. */
  private nextOfTheRest(): (() => void) | undefined {
    const order: RequestPriority[] = this.backgroundNext ? ['background', 'normal'] : ['normal', 'background'];
    for (const priority of order) {
      const next = this.waiting[priority].shift();
      if (next === undefined) continue;
      this.backgroundNext = priority === 'normal';
      return next;
    }
    return undefined;
  }

  private schedule(): void {
    if (this.cancelTimer) return;
    const waitMs = this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.qps) * 1000;
    this.cancelTimer = this.clock.setTimeout(() => this.release(), waitMs);
  }
}
