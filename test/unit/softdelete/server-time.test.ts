/**
 * Server time (issue 9): soft-delete stamps and expiry follow the API
 * server's clock, estimated from the Date headers of its answers. The
 * estimate's lower bound never runs ahead of the server, its upper bound
 * never behind, so a stamp never shortens a countdown and an expiry is never
 * decided early, whatever the local clock's skew.
 */
import { Annotations } from '../../../src/api/names.js';
import { decideSoftDelete } from '../../../src/core/softdelete/decide.js';
import { parseRfc3339 } from '../../../src/core/rfc3339.js';
import { DateHeaderServerTime, parseHttpDate, serverTimeBounds, type ServerDateSample } from '../../../src/kube/clock.js';

/** A simulated exchange: the server's clock is `skew` ahead of the local monotonic one (ms), and writes Date at `writeAt`. */
function exchange(skew: number, sentAt: number, writeAt: number, receivedAt: number): ServerDateSample {
  const serverAtWrite = writeAt + skew;
  return { dateMs: Math.floor(serverAtWrite / 1000) * 1000, sentAt, receivedAt };
}

const T0 = Date.parse('2026-11-23T12:00:00.000Z');

describe('parseHttpDate', () => {
  it.each<[string | undefined, number | undefined]>([
    ['Mon, 23 Nov 2026 12:00:05 GMT', T0 + 5000],
    ['', undefined],
    [undefined, undefined],
    ['yesterday', undefined],
  ])('%s', (text, expected) => {
    expect(parseHttpDate(text)).toBe(expected);
  });
});

describe('serverTimeBounds', () => {
  // Skews: the local clock far ahead, behind, equal, and sub-second offsets; round trips of 0-900 ms; later reads.
  const cases: [number, number, number, number, number][] = [];
  for (const skew of [-3_600_000, -1500, -1, 0, 1, 999, 1000, 86_400_000]) {
    for (const [sent, write, received] of [
      [T0, T0, T0],
      [T0, T0 + 100, T0 + 200],
      [T0 + 1, T0 + 450, T0 + 900],
      [T0 + 999, T0 + 999, T0 + 999],
    ] as const) {
      for (const later of [0, 1, 999, 25_000]) cases.push([skew, sent, write, received, later]);
    }
  }
  it.each(cases)(
    'skew %d, sent %d, written %d, received %d, read %d ms later: lower <= server <= upper',
    (skew, sent, write, received, later) => {
      const sample = exchange(skew, sent, write, received);
      const now = received + later;
      const server = now + skew;
      const { lower, upper } = serverTimeBounds(sample, now);
      expect(lower).toBeLessThanOrEqual(server);
      expect(upper).toBeGreaterThanOrEqual(server);
      // Never looser than the round trip plus the header's second.
      expect(upper - lower).toBeLessThanOrEqual(received - sent + 1000);
    },
  );

  it('a monotonic source that went back never moves the lower bound ahead', () => {
    const sample = exchange(0, T0, T0 + 10, T0 + 20);
    expect(serverTimeBounds(sample, T0 - 5000).lower).toBe(T0);
  });
});

describe('DateHeaderServerTime', () => {
  it('is unknown before any answer', () => {
    const st = new DateHeaderServerTime(() => 0);
    expect(st.lowerBound()).toBeUndefined();
    expect(st.upperBound()).toBeUndefined();
  });

  it('keeps the tightest bounds of recent answers, each a true bound', () => {
    let mono = 0;
    const skew = T0 + 400; // the server reads T0 + 400 when the monotonic source reads 0
    const st = new DateHeaderServerTime(() => mono);
    for (const [sent, write, received] of [
      [0, 100, 300],
      [1000, 1050, 1100],
      [2000, 2590, 2600],
    ] as const) {
      st.observe(exchange(skew, sent, write, received));
    }
    mono = 5000;
    const server = mono + skew;
    const lower = st.lowerBound() as number;
    const upper = st.upperBound() as number;
    expect(lower).toBeLessThanOrEqual(server);
    expect(upper).toBeGreaterThanOrEqual(server);
    // The second answer (Date T0+1000 seen at mono 1100) gives the greatest lower bound.
    expect(lower).toBe(T0 + 1000 + 3900);
  });
});

describe('DateHeaderServerTime: a burst of answers', () => {
  it("keeps the answers around a second's turn, so the bounds close in to a round trip though later answers fill one second", () => {
    let mono = 0;
    const skew = T0 + 400;
    const st = new DateHeaderServerTime(() => mono);
    // Answers every 10 ms with 4 ms round trips, for 3 s: the second turns at mono 600, 1600, 2600.
    for (let sent = 0; sent < 3000; sent += 10) st.observe(exchange(skew, sent, sent + 2, sent + 4));
    mono = 2650;
    // The 16 most recent answers all carry the same Date (T0 + 3000, mono 2600..2990 would; here up to 2990).
    const server = mono + skew;
    const lower = st.lowerBound() as number;
    const upper = st.upperBound() as number;
    expect(lower).toBeLessThanOrEqual(server);
    expect(upper).toBeGreaterThanOrEqual(server);
    expect(upper - lower).toBeLessThan(20);
  });

  it("forgets the best answers after a minute (the server's clock may have been corrected); recent ones still bound it", () => {
    let mono = 0;
    const st = new DateHeaderServerTime(() => mono);
    for (let sent = 0; sent < 2000; sent += 10) st.observe(exchange(T0, sent, sent + 2, sent + 4));
    mono = 70_000;
    st.observe(exchange(T0, 69_990, 69_995, 70_000));
    const width = (st.upperBound() as number) - (st.lowerBound() as number);
    expect(width).toBeGreaterThan(500);
  });
});

describe('stamp on the upper bound, expiry on the lower bound', () => {
  const delay = 25_000;
  // The server reads T0 + mono; the local wall clock plays no part (it may be skewed any way).
  const serverAt = (mono: number): number => T0 + mono;
  it.each<[string, number, number]>([
    ['a fast round trip', 5, 10],
    ['a slow round trip', 400, 900],
    ['the Date written just before a second turns', 999, 1000],
  ])("%s: the countdown is never shorter than the delay by the server's clock, and it does end", (_name, writeAfter, receiveAfter) => {
    let mono = 0;
    const time = new DateHeaderServerTime(() => mono);
    time.observe(exchange(T0, 0, writeAfter, receiveAfter));
    mono = 1000;
    const mark = decideSoftDelete({
      inSpec: false,
      annotations: { [Annotations.deletionDelay]: '25s' },
      now: time.lowerBound() as number,
      stampAt: time.upperBound(),
    });
    if (mark.action !== 'mark') throw new Error(`expected mark, got ${mark.action}`);
    const stampMs = parseRfc3339(mark.deletionTimestamp) as number;
    expect(stampMs).toBeGreaterThanOrEqual(serverAt(1000));
    const annotations = { [Annotations.deletionDelay]: '25s', [Annotations.deletionTimestamp]: mark.deletionTimestamp };
    let expiredAt: number | undefined;
    for (mono = 1000; mono <= 40_000 && expiredAt === undefined; mono += 250) {
      if (mono % 5000 === 0) time.observe(exchange(T0, mono, mono + writeAfter, mono + receiveAfter));
      if (decideSoftDelete({ inSpec: false, annotations, now: time.lowerBound() as number }).action === 'expired')
        expiredAt = serverAt(mono);
    }
    expect(expiredAt).toBeDefined();
    expect(expiredAt).toBeGreaterThanOrEqual(stampMs + delay);
  });
});

describe('DateHeaderServerTime behind a load balancer: API servers whose clocks differ (issue 23)', () => {
  // Two servers on one etcd; B's clock is 60 s ahead of A's. Answers alternate, as a round-robin balancer sends them.
  const SKEW = 60_000;
  function answersFromBoth(time: DateHeaderServerTime, from: number, n: number): number {
    let mono = from;
    for (let i = 0; i < n; i++) {
      time.observe(exchange(i % 2 === 0 ? 0 : SKEW, mono, mono + 5, mono + 10));
      mono += 137;
    }
    return mono;
  }

  it('the bounds hold for every server seen: expiry waits for the slower clock, a stamp is late for the faster one', () => {
    let mono = T0;
    const time = new DateHeaderServerTime(() => mono);
    mono = answersFromBoth(time, T0, 40);
    expect(time.clocksDisagree()).toBe(true);
    const lower = time.lowerBound() ?? Infinity;
    const upper = time.upperBound() ?? -Infinity;
    // A's clock reads `mono` now, B's `mono + SKEW`.
    expect(lower).toBeLessThanOrEqual(mono);
    expect(upper).toBeGreaterThanOrEqual(mono + SKEW);
  });

  it('a countdown stamped on the upper bound and ended on the lower bound lasts its delay on both servers', () => {
    let mono = T0;
    const time = new DateHeaderServerTime(() => mono);
    mono = answersFromBoth(time, T0, 20);
    const stampedAt = mono;
    const stamp = time.upperBound() ?? 0;
    const delay = 30_000;
    // Time passes with more answers; the countdown ends when the lower bound passes stamp + delay.
    while ((time.lowerBound() ?? -Infinity) < stamp + delay) mono = answersFromBoth(time, mono, 2);
    expect(mono - stampedAt).toBeGreaterThanOrEqual(delay);
  });

  it('servers seen one after the other (never together in the recent answers): the countdown still lasts its delay on the slower one', () => {
    // Only the slow server answers while the stamp is written; then, minutes later, only the fast one (30 min ahead).
    let mono = T0;
    const time = new DateHeaderServerTime(() => mono);
    for (let i = 0; i < 20; i++, mono += 137) time.observe(exchange(0, mono, mono + 5, mono + 10));
    const stamp = time.upperBound() ?? 0;
    const stampedAt = mono;
    const delay = 10 * 60_000;
    mono += 120_000;
    for (let i = 0; i < 20; i++, mono += 137) time.observe(exchange(30 * 60_000, mono, mono + 5, mono + 10));
    expect(time.clocksDisagree()).toBe(true);
    while ((time.lowerBound() ?? -Infinity) < stamp + delay) {
      mono += 1000;
      time.observe(exchange(30 * 60_000, mono, mono + 5, mono + 10));
    }
    expect(mono - stampedAt).toBeGreaterThanOrEqual(delay);
  });

  it('one server: the bounds stay tight (no skew seen)', () => {
    let mono = T0;
    const time = new DateHeaderServerTime(() => mono);
    for (let i = 0; i < 40; i++) {
      time.observe(exchange(SKEW, mono, mono + 5, mono + 10));
      mono += 137;
    }
    expect(time.clocksDisagree()).toBe(false);
    expect((time.upperBound() ?? 0) - (time.lowerBound() ?? 0)).toBeLessThan(1000);
  });
});
