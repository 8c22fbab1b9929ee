/**
 * The one place time comes from. Everything that schedules or compares time
 * takes a Clock, so tests drive time with a fake one (test/unit/fake-clock.ts)
 * instead of sleeping (cert-manager's injected clock). It lives with the
 * client, which reads the server's time from its Date header (ServerTime),
 * so kube/ imports nothing from runtime/.
 */

/** Cancels a scheduled callback; calling it after the callback ran, or twice, does nothing. */
export type Cancel = () => void;

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `fn` once, `ms` from now (immediately-ish when `ms` <= 0). */
  setTimeout(fn: () => void, ms: number): Cancel;
}

/**
 * Node's timers overflow above 2^31-1 ms (about 24.8 days) and fire after
 * 1 ms instead; a deletionDelay of 30 days must not turn into an immediate
 * recheck, so longer waits are chained.
 */
const MAX_NODE_TIMEOUT_MS = 2 ** 31 - 1;

/** The real clock. Timers are unref'd: a pending recheck alone never keeps the process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const dueAt = Date.now() + Math.max(0, ms);
    let handle: NodeJS.Timeout | undefined;
    let cancelled = false;
    const arm = (): void => {
      const remaining = dueAt - Date.now();
      if (remaining > MAX_NODE_TIMEOUT_MS) {
        handle = setTimeout(arm, MAX_NODE_TIMEOUT_MS);
      } else {
        handle = setTimeout(
          () => {
            if (!cancelled) fn();
          },
          Math.max(0, remaining),
        );
      }
      handle.unref();
    };
    arm();
    return () => {
      cancelled = true;
      if (handle !== undefined) clearTimeout(handle);
    };
  },
};

/**
 * The API server's clock, as seen from here. Soft-delete stamps and expiry
 * are decided on it rather than on the local clock, so that a replica whose
 * clock is ahead (or steps) neither deletes early nor writes a stamp that
 * shortens a countdown.
 */
export interface ServerTime {
  /** Epoch ms the server's clock has certainly reached; undefined before any answer from the server. */
  lowerBound(): number | undefined;
  /** Epoch ms the server's clock has certainly not passed yet; undefined before any answer from the server. */
  upperBound(): number | undefined;
}

/**
 * One answer's `Date` header, with the local monotonic times around it: the
 * request left at `sentAt` and the answer's headers arrived at `receivedAt`.
 */
export interface ServerDateSample {
  /** The `Date` header as epoch ms (whole seconds: HTTP dates truncate). */
  dateMs: number;
  sentAt: number;
  receivedAt: number;
}

/** HTTP-date (RFC 9110 IMF-fixdate, or the obsolete forms Date.parse reads) to epoch ms; undefined when unreadable. */
export function parseHttpDate(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * What one sample proves about the server's clock at local monotonic time
 * `monotonicNow`. The server wrote `Date` some time between `sentAt` and
 * `receivedAt`, its clock then read within [dateMs, dateMs + 1000) (the header
 * truncates to the second), and both clocks have run the same time since.
 * Hence:
 *   lower = dateMs + (monotonicNow - receivedAt)
 *   upper = dateMs + 1000 + (monotonicNow - sentAt)
 * Elapsed time is never taken as negative, which keeps `lower` a lower bound
 * if the monotonic source were ever to go back.
 */
export function serverTimeBounds(sample: ServerDateSample, monotonicNow: number): { lower: number; upper: number } {
  return {
    lower: sample.dateMs + Math.max(0, monotonicNow - sample.receivedAt),
    upper: sample.dateMs + 1000 + Math.max(0, monotonicNow - sample.sentAt),
  };
}

/** The most recent answers kept. */
const SERVER_DATE_SAMPLES = 16;
/**
 * How long the answers that give the tightest bounds are kept besides the
 * recent ones. A burst of answers all falls within one second of the
 * server's clock and bounds it only to that second; the answers around a
 * second's turn bound it to their round trip. Kept a minute, no longer:
 * the server's clock may be corrected.
 */
const BEST_SAMPLE_TTL_MS = 60_000;

/**
 * How long the extreme answers are remembered for telling servers apart: a
 * server that answered an hour ago may answer the next request.
 */
const OFFSET_MEMORY_MS = 60 * 60_000;

/** One extreme answer and the order it is kept by. */
type Extreme = { sample: ServerDateSample; key: number };

/**
 * ServerTime from the `Date` headers of the server's answers. Elapsed time is
 * measured on a monotonic source (performance.now() by default), never on
 * the wall clock, so a local clock step moves nothing. Every sample proves
 * bounds of the clock of the server that answered; the set kept is the
 * recent answers and, for a minute, the answer with the greatest lower bound
 * and the one with the least upper bound.
 *
 * One clock: the bounds are the tightest the samples give (the greatest
 * lower bound, the least upper bound). Several API servers behind a load
 * balancer may each have a clock of its own, and the greatest lower bound
 * taken over answers of different servers bounds none of them: a server
 * ahead would let a countdown stamped on a slower one end early, by the
 * skew. Such servers show themselves: each answer bounds its server's offset
 * from the local monotonic clock between `dateMs - receivedAt` and
 * `dateMs + 1000 - sentAt`, one server's intervals always overlap, and the
 * extremes of the last hour are kept. Once two answers' intervals do not
 * overlap, the bounds hold for every server that answered in that hour: the
 * least lower bound (expiry waits for the slowest clock) and the greatest
 * upper bound (a stamp is late for the fastest), so a countdown lasts at
 * least its delay on every server, at the price of ending up to the skew
 * (and the answers' round trips) late. Clocks closer than the answers can
 * tell apart (a few round trips, once answers have come around a second's
 * turn from each) are taken as one.
 */
export class DateHeaderServerTime implements ServerTime {
  private readonly samples: ServerDateSample[] = [];
  private bestLower: ServerDateSample | undefined;
  private bestUpper: ServerDateSample | undefined;
  /** Of the last hour's answers: the greatest and least lower offsets (dateMs - receivedAt) and upper offsets (dateMs + 1000 - sentAt). */
  private readonly extremes: Record<'lowMax' | 'lowMin' | 'highMin' | 'highMax', Extreme | undefined> = {
    lowMax: undefined,
    lowMin: undefined,
    highMin: undefined,
    highMax: undefined,
  };

  constructor(readonly monotonicNow: () => number = () => performance.now()) {}

  observe(sample: ServerDateSample): void {
    this.samples.push(sample);
    if (this.samples.length > SERVER_DATE_SAMPLES) this.samples.shift();
    // Which sample bounds tighter does not change as time goes on (both run on the same monotonic time): the
    // lower bound is dateMs - receivedAt ahead of it, the upper one dateMs + 1000 - sentAt.
    const fresh = (s: ServerDateSample | undefined): s is ServerDateSample =>
      s !== undefined && sample.receivedAt - s.receivedAt < BEST_SAMPLE_TTL_MS;
    if (!fresh(this.bestLower) || sample.dateMs - sample.receivedAt >= this.bestLower.dateMs - this.bestLower.receivedAt)
      this.bestLower = sample;
    if (!fresh(this.bestUpper) || sample.dateMs - sample.sentAt <= this.bestUpper.dateMs - this.bestUpper.sentAt) this.bestUpper = sample;
    const low = sample.dateMs - sample.receivedAt;
    const high = sample.dateMs + 1000 - sample.sentAt;
    this.keepExtreme('lowMax', sample, low, (a, b) => a >= b);
    this.keepExtreme('lowMin', sample, low, (a, b) => a <= b);
    this.keepExtreme('highMin', sample, high, (a, b) => a <= b);
    this.keepExtreme('highMax', sample, high, (a, b) => a >= b);
  }

  private keepExtreme(
    which: keyof DateHeaderServerTime['extremes'],
    sample: ServerDateSample,
    key: number,
    better: (a: number, b: number) => boolean,
  ): void {
    const kept = this.extremes[which];
    if (kept === undefined || sample.receivedAt - kept.sample.receivedAt >= OFFSET_MEMORY_MS || better(key, kept.key))
      this.extremes[which] = { sample, key };
  }

  private kept(): ServerDateSample[] {
    const now = this.monotonicNow();
    const best = [this.bestLower, this.bestUpper].filter(
      (s): s is ServerDateSample => s !== undefined && now - s.receivedAt < BEST_SAMPLE_TTL_MS,
    );
    return [...this.samples, ...best];
  }

  lowerBound(): number | undefined {
    return this.bounds()?.lower;
  }

  upperBound(): number | undefined {
    return this.bounds()?.upper;
  }

  /** Whether answers of the last hour came from servers whose clocks differ (their offset intervals do not overlap). */
  clocksDisagree(): boolean {
    const { lowMax, highMin } = this.extremes;
    return lowMax !== undefined && highMin !== undefined && lowMax.key > highMin.key;
  }

  private bounds(): { lower: number; upper: number } | undefined {
    const now = this.monotonicNow();
    const each = this.kept().map((s) => serverTimeBounds(s, now));
    if (each.length === 0) return undefined;
    const tight = { lower: Math.max(...each.map((b) => b.lower)), upper: Math.min(...each.map((b) => b.upper)) };
    const { lowMin, highMax } = this.extremes;
    if (!this.clocksDisagree() || lowMin === undefined || highMax === undefined) return tight;
    return {
      lower: Math.min(tight.lower, serverTimeBounds(lowMin.sample, now).lower),
      upper: Math.max(tight.upper, serverTimeBounds(highMax.sample, now).upper),
    };
  }
}
