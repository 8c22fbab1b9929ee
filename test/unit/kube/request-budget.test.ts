import { FakeClock } from '../fake-clock.js';
import { RequestBudget, type RequestPriority } from '../../../src/kube/request-budget.js';

describe('RequestBudget (the process-wide --qps/--burst)', () => {
  /** Lets the budget's resolved promises run their callbacks. */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  /** Takes a token for each request in order and records the order in which they are let through. */
  function requests(budget: RequestBudget, names: readonly [string, RequestPriority][], through: string[] = []): string[] {
    for (const [name, priority] of names) void budget.take(priority).then(() => through.push(name));
    return through;
  }

  it('lets a burst through at once, then one request per 1/qps', async () => {
    const clock = new FakeClock(0);
    const budget = new RequestBudget(clock, { qps: 10, burst: 3 });
    const through = requests(budget, [
      ['a', 'normal'],
      ['b', 'normal'],
      ['c', 'normal'],
      ['d', 'normal'],
      ['e', 'normal'],
    ]);
    await settle();
    expect(through).toEqual(['a', 'b', 'c']);
    clock.advance(99);
    await settle();
    expect(through).toEqual(['a', 'b', 'c']);
    clock.advance(1);
    await settle();
    expect(through).toEqual(['a', 'b', 'c', 'd']);
    clock.advance(100);
    await settle();
    expect(through).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(budget.granted()).toEqual({ normal: 5, high: 0, background: 0 });
    expect(budget.waiters()).toBe(0);
  });

  it('serves waiting high-priority requests (the Lease) before normal ones, each priority in arrival order', async () => {
    const clock = new FakeClock(0);
    const budget = new RequestBudget(clock, { qps: 10, burst: 1 });
    const through = requests(budget, [
      ['first', 'normal'],
      ['delete-1', 'normal'],
      ['delete-2', 'normal'],
      ['lease', 'high'],
      ['review', 'high'],
    ]);
    await settle();
    expect(through).toEqual(['first']);
    clock.advance(100);
    await settle();
    expect(through).toEqual(['first', 'lease']);
    clock.advance(200);
    await settle();
    expect(through).toEqual(['first', 'lease', 'review', 'delete-1']);
    clock.advance(100);
    await settle();
    expect(through).toEqual(['first', 'lease', 'review', 'delete-1', 'delete-2']);
    // The Lease went first, but it spent the budget like everyone else.
    expect(budget.granted()).toEqual({ normal: 3, high: 2, background: 0 });
  });

  it('lets normal (Bundle passes) and background (the collector, the sweeper) requests take turns while both wait, high before either', async () => {
    const clock = new FakeClock(0);
    const budget = new RequestBudget(clock, { qps: 10, burst: 1 });
    // The collector's start queues its lists first; a Bundle pass comes after: it is not served after all of them.
    const through = requests(budget, [
      ['list-0', 'background'],
      ['list-1', 'background'],
      ['list-2', 'background'],
      ['list-3', 'background'],
      ['apply-0', 'normal'],
      ['apply-1', 'normal'],
      ['lease', 'high'],
    ]);
    for (let i = 0; i < 7; i++) {
      await settle();
      clock.advance(100);
    }
    await settle();
    expect(through).toEqual(['list-0', 'lease', 'apply-0', 'list-1', 'apply-1', 'list-2', 'list-3']);
    expect(budget.granted()).toEqual({ normal: 2, high: 1, background: 4 });
    // Alone, either is served at the full rate.
    const alone = requests(budget, [
      ['apply-2', 'normal'],
      ['apply-3', 'normal'],
    ]);
    clock.advance(100);
    await settle();
    clock.advance(100);
    await settle();
    expect(alone).toEqual(['apply-2', 'apply-3']);
  });

  it('refills no more than the burst, and a clock stepping back takes no tokens away', async () => {
    const clock = new FakeClock(10_000);
    const budget = new RequestBudget(clock, { qps: 10, burst: 2 });
    const through = requests(budget, [
      ['a', 'normal'],
      ['b', 'normal'],
    ]);
    clock.advance(60_000);
    requests(budget, [['c', 'normal']], through);
    await settle();
    clock.set(5_000);
    requests(
      budget,
      [
        ['d', 'normal'],
        ['e', 'normal'],
      ],
      through,
    );
    await settle();
    // A minute refilled 2 tokens, not 600: c and d spend them, e waits.
    expect(through).toEqual(['a', 'b', 'c', 'd']);
    expect(budget.waiters()).toBe(1);
    // ...for one token's time counted from the stepped-back clock, not for the 65 s the clock went back.
    clock.advance(100);
    await settle();
    expect(through).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it.each([[{ qps: 0, burst: 1 }], [{ qps: 1, burst: 0 }]])('rejects %j', (options) => {
    expect(() => new RequestBudget(new FakeClock(0), options)).toThrow(RangeError);
  });
});
