import { systemClock } from '../../../src/kube/clock.js';
import { FakeClock } from '../fake-clock.js';

const START = Date.UTC(2026, 10, 21, 12);

describe('FakeClock', () => {
  it.each<[string, Array<[string, number]>, number, string[], number]>([
    ['nothing due yet', [['a', 100]], 99, [], START + 99],
    ['due exactly at the target', [['a', 100]], 100, ['a@100'], START + 100],
    [
      'fires in due order, not set order',
      [
        ['late', 300],
        ['early', 100],
        ['mid', 200],
      ],
      1000,
      ['early@100', 'mid@200', 'late@300'],
      START + 1000,
    ],
    [
      'same due time fires in set order',
      [
        ['first', 50],
        ['second', 50],
      ],
      50,
      ['first@50', 'second@50'],
      START + 50,
    ],
    ['negative delay is due now', [['now', -5]], 0, ['now@0'], START],
  ])('advance: %s', (_name, timers, advanceBy, wantFired, wantNow) => {
    const clock = new FakeClock(START);
    const fired: string[] = [];
    for (const [label, ms] of timers) clock.setTimeout(() => fired.push(`${label}@${clock.now() - START}`), ms);
    clock.advance(advanceBy);
    expect(fired).toEqual(wantFired);
    expect(clock.now()).toBe(wantNow);
  });

  it('fires timers set by a firing timer when they fall due within the same advance', () => {
    const clock = new FakeClock(START);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now() - START);
      clock.setTimeout(() => fired.push(clock.now() - START), 10);
      clock.setTimeout(() => fired.push(clock.now() - START), 1000);
    }, 10);
    clock.advance(100);
    expect(fired).toEqual([10, 20]);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextDueAt()).toBe(START + 1010);
  });

  it('does not fire cancelled timers; cancelling twice is harmless', () => {
    const clock = new FakeClock(START);
    const fired: string[] = [];
    const cancel = clock.setTimeout(() => fired.push('cancelled'), 10);
    clock.setTimeout(() => fired.push('kept'), 10);
    cancel();
    cancel();
    clock.advance(10);
    expect(fired).toEqual(['kept']);
  });

  it.each<[string, number, string[], number]>([
    ['set forward fires due timers', START + 500, ['a'], 0],
    ['set backward fires nothing and keeps due times', START - 500, [], 1],
  ])('%s', (_name, target, wantFired, wantPending) => {
    const clock = new FakeClock(START);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('a'), 100);
    clock.set(target);
    expect(fired).toEqual(wantFired);
    expect(clock.now()).toBe(target);
    expect(clock.pendingTimers()).toBe(wantPending);
  });

  it('refuses to advance backwards', () => {
    expect(() => new FakeClock(START).advance(-1)).toThrow(RangeError);
  });
});

describe('systemClock', () => {
  it('runs a short timer and honours cancel', async () => {
    const fired: string[] = [];
    const cancel = systemClock.setTimeout(() => fired.push('cancelled'), 1);
    cancel();
    await new Promise<void>((resolve) => {
      systemClock.setTimeout(() => {
        fired.push('ran');
        resolve();
      }, 1);
    });
    expect(fired).toEqual(['ran']);
  });

  it('does not fire a timer longer than Node can hold (2^31 ms) early', async () => {
    const fired: string[] = [];
    const cancel = systemClock.setTimeout(() => fired.push('30 days'), 30 * 24 * 3_600_000);
    await new Promise<void>((resolve) => {
      systemClock.setTimeout(resolve, 5);
    });
    cancel();
    expect(fired).toEqual([]);
  });
});
