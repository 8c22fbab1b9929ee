import { FakeClock } from '../fake-clock.js';
import { ExponentialBackoffRateLimiter } from '../../../src/runtime/ratelimiter.js';
import { WorkQueue, type WorkQueueMetrics } from '../../../src/runtime/workqueue.js';
import { runWorkers, type WorkResult } from '../../../src/runtime/workers.js';

/** Lets already-resolved promises run their continuations. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

interface Settled<T> {
  promise: Promise<T>;
  settled: boolean;
  value: T | undefined;
}
function track<T>(promise: Promise<T>): Settled<T> {
  const tracked: Settled<T> = { promise, settled: false, value: undefined };
  void promise.then((value) => {
    // Tracking only; the test awaits flush() before reading these fields.
    tracked.settled = true;
    tracked.value = value;
  });
  return tracked;
}

function newQueue(clock = new FakeClock(0)): { queue: WorkQueue; clock: FakeClock } {
  // Backoff alone, so rate-limited delays are predictable: 5, 10, 20 ms...
  return { queue: new WorkQueue({ clock, rateLimiter: new ExponentialBackoffRateLimiter() }), clock };
}

/**
 * Scenario steps, one operation each:
 *   "add a", "addAfter a 100", "addRateLimited a", "forget a", "done a", "advance 100", "shutDown",
 *   "get a" (an immediate get returns a), "get -" (an immediate get returns undefined),
 *   "get ..." (a get that must block), "got a" / "got -" (the oldest blocked get has now returned),
 *   "len 2", "retries a 1", "delayed 1".
 */
async function runScenario(steps: readonly string[]): Promise<void> {
  const { queue, clock } = newQueue();
  const blocked: Settled<string | undefined>[] = [];
  for (const step of steps) {
    const [op, arg = '', extra = ''] = step.split(' ');
    const context = `at step "${step}"`;
    switch (op) {
      case 'add':
        queue.add(arg);
        break;
      case 'addAfter':
        queue.addAfter(arg, Number(extra));
        break;
      case 'addRateLimited':
        queue.addRateLimited(arg);
        break;
      case 'forget':
        queue.forget(arg);
        break;
      case 'done':
        queue.done(arg);
        break;
      case 'advance':
        clock.advance(Number(arg));
        break;
      case 'shutDown':
        queue.shutDown();
        break;
      case 'get': {
        const got = track(queue.get());
        await flush();
        if (arg === '...') {
          expect({ context, settled: got.settled }).toEqual({ context, settled: false });
          blocked.push(got);
        } else {
          expect({ context, settled: got.settled, value: got.value }).toEqual({
            context,
            settled: true,
            value: arg === '-' ? undefined : arg,
          });
        }
        break;
      }
      case 'got': {
        await flush();
        const got = blocked.shift();
        expect({ context, settled: got?.settled, value: got?.value }).toEqual({
          context,
          settled: true,
          value: arg === '-' ? undefined : arg,
        });
        break;
      }
      case 'len':
        expect({ context, len: queue.len() }).toEqual({ context, len: Number(arg) });
        break;
      case 'retries':
        expect({ context, retries: queue.retries(arg) }).toEqual({ context, retries: Number(extra) });
        break;
      case 'delayed':
        expect({ context, delayed: queue.delayedCount(), timers: clock.pendingTimers() }).toEqual({
          context,
          delayed: Number(arg),
          timers: Number(arg),
        });
        break;
      default:
        throw new Error(`unknown step ${step}`);
    }
  }
  // Every blocked get the scenario started must have been accounted for.
  await flush();
  expect(blocked.filter((got) => got.settled).map((got) => got.value)).toEqual([]);
}

describe('WorkQueue', () => {
  it.each<[string, string[]]>([
    ['FIFO', ['add a', 'add b', 'add c', 'len 3', 'get a', 'get b', 'get c', 'len 0']],
    ['repeated adds of a waiting key collapse', ['add a', 'add b', 'add a', 'add a', 'len 2', 'get a', 'get b', 'get ...']],
    ['a collapsed add keeps its first place', ['add a', 'add b', 'add a', 'get a', 'get b']],
    ['a blocked get receives the next add', ['get ...', 'add a', 'got a', 'len 0']],
    ['blocked gets are served oldest first', ['get ...', 'get ...', 'add a', 'add b', 'got a', 'got b']],
    [
      'a key is never handed out twice at once: an add while processing waits for done',
      ['add a', 'get a', 'add a', 'len 0', 'get ...', 'done a', 'got a'],
    ],
    [
      'adds while processing collapse into one re-queue',
      ['add a', 'get a', 'add a', 'add a', 'add a', 'done a', 'len 1', 'get a', 'done a', 'len 0'],
    ],
    ['done without a re-add leaves nothing behind', ['add a', 'get a', 'done a', 'len 0', 'get ...']],
    ['other keys flow while one is processing', ['add a', 'get a', 'add a', 'add b', 'get b', 'done a', 'get a']],
    ['a re-queued key goes to the back', ['add a', 'get a', 'add a', 'add b', 'done a', 'get b', 'get a']],
    ['done for a key not held is ignored', ['done x', 'add a', 'done a', 'get a']],
  ])('%s', async (_name, steps) => {
    await runScenario(steps);
  });

  it.each<[string, string[]]>([
    [
      'addAfter waits for the clock',
      ['addAfter a 100', 'len 0', 'delayed 1', 'advance 99', 'len 0', 'advance 1', 'len 1', 'delayed 0', 'get a'],
    ],
    ['addAfter with zero delay adds now', ['addAfter a 0', 'delayed 0', 'get a']],
    ['addAfter with a negative delay adds now', ['addAfter a -5', 'get a']],
    [
      'an earlier addAfter replaces a later one',
      ['addAfter a 100', 'addAfter a 10', 'delayed 1', 'advance 10', 'get a', 'done a', 'advance 90', 'len 0'],
    ],
    [
      'a later addAfter is dropped while one is pending',
      ['addAfter a 10', 'addAfter a 100', 'advance 10', 'get a', 'done a', 'advance 90', 'len 0'],
    ],
    ['addAfter for different keys fire in due order', ['addAfter b 20', 'addAfter a 10', 'advance 20', 'get a', 'get b']],
    ['a direct add does not cancel a delayed one', ['addAfter a 10', 'add a', 'get a', 'done a', 'advance 10', 'get a']],
    ['a delayed add collapses into a waiting key', ['add a', 'addAfter a 10', 'advance 10', 'len 1']],
    [
      'a delayed add for a processing key re-queues it on done',
      ['add a', 'get a', 'addAfter a 10', 'advance 10', 'len 0', 'done a', 'get a'],
    ],
    [
      'addRateLimited backs off exponentially until forget',
      [
        'addRateLimited a',
        'retries a 1',
        'advance 4',
        'len 0',
        'advance 1',
        'get a',
        'done a',
        'addRateLimited a',
        'advance 9',
        'len 0',
        'advance 1',
        'get a',
        'done a',
        'addRateLimited a',
        'retries a 3',
        'advance 20',
        'get a',
        'done a',
        'forget a',
        'retries a 0',
        'addRateLimited a',
        'advance 5',
        'get a',
      ],
    ],
  ])('%s', async (_name, steps) => {
    await runScenario(steps);
  });

  it.each<[string, string[]]>([
    ['shutDown releases blocked gets', ['get ...', 'get ...', 'shutDown', 'got -', 'got -']],
    ['gets after shutDown return undefined even with keys queued', ['add a', 'shutDown', 'get -', 'get -']],
    ['adds after shutDown are ignored', ['shutDown', 'add a', 'addAfter b 0', 'addRateLimited c', 'len 0', 'delayed 0']],
    ['shutDown cancels delayed adds', ['addAfter a 10', 'addRateLimited b', 'delayed 2', 'shutDown', 'delayed 0', 'advance 100', 'len 0']],
    ['done after shutDown does not re-queue', ['add a', 'get a', 'add a', 'shutDown', 'done a', 'len 0', 'get -']],
  ])('%s', async (_name, steps) => {
    await runScenario(steps);
  });

  it('shutDownWithDrain resolves once every key handed out is done', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    const a = await queue.get();
    const b = await queue.get();
    const drained = track(queue.shutDownWithDrain());
    await flush();
    expect(drained.settled).toBe(false);
    queue.done(a ?? '');
    await flush();
    expect(drained.settled).toBe(false);
    queue.done(b ?? '');
    await flush();
    expect(drained.settled).toBe(true);
  });

  it('shutDownWithDrain resolves at once when nothing is in flight', async () => {
    const { queue } = newQueue();
    await expect(queue.shutDownWithDrain()).resolves.toBeUndefined();
  });

  it('reports metrics', async () => {
    const events: string[] = [];
    const metrics: WorkQueueMetrics = {
      depth: (value) => events.push(`depth ${value}`),
      added: () => events.push('added'),
      queueLatency: (seconds) => events.push(`latency ${seconds}`),
      workDuration: (seconds) => events.push(`work ${seconds}`),
      retried: () => events.push('retried'),
    };
    const clock = new FakeClock(0);
    const queue = new WorkQueue({ clock, metrics, rateLimiter: new ExponentialBackoffRateLimiter() });
    queue.add('a');
    queue.add('a');
    clock.advance(2000);
    const key = await queue.get();
    clock.advance(500);
    queue.done(key ?? '');
    queue.addRateLimited('a');
    expect(events).toEqual(['added', 'depth 1', 'depth 0', 'latency 2', 'work 0.5', 'retried']);
  });
});

describe('runWorkers', () => {
  type Script = Record<string, Array<WorkResult | 'throw'>>;

  /** Runs the queue's keys through a handler that answers from `script`, key by key, and records what happened. */
  async function runScript(
    script: Script,
    keys: string[],
    advanceMs: number[],
  ): Promise<{ calls: string[]; errors: string[]; clock: FakeClock; queue: WorkQueue }> {
    const { queue, clock } = newQueue();
    const calls: string[] = [];
    const errors: string[] = [];
    const answers = new Map(Object.entries(script).map(([key, results]) => [key, [...results]]));
    const running = runWorkers(
      queue,
      2,
      (key) => {
        const answer = answers.get(key)?.shift() ?? 'forget';
        calls.push(`${key}@${clock.now()}`);
        if (answer === 'throw') return Promise.reject(new Error(`${key} failed`));
        return Promise.resolve(answer);
      },
      (key, error) => errors.push(`${key}: ${error instanceof Error ? error.message : String(error)}`),
    );
    for (const key of keys) queue.add(key);
    await flush();
    for (const ms of advanceMs) {
      clock.advance(ms);
      await flush();
    }
    queue.shutDown();
    await running;
    return { calls, errors, clock, queue };
  }

  it.each<[string, Script, number[], string[], string[]]>([
    ['forget: processed once', { a: ['forget'] }, [1000], ['a@0'], []],
    ['requeue: retried with backoff', { a: ['requeue', 'requeue', 'forget'] }, [5, 10, 1000], ['a@0', 'a@5', 'a@15'], []],
    [
      'requeueAfter: rechecked after the delay, backoff cleared',
      { a: [{ requeueAfterMs: 100 }, 'forget'] },
      [99, 1, 1000],
      ['a@0', 'a@100'],
      [],
    ],
    [
      'errors: reported and retried with backoff',
      { a: ['throw', 'throw', 'forget'] },
      [5, 10, 1000],
      ['a@0', 'a@5', 'a@15'],
      ['a: a failed', 'a: a failed'],
    ],
  ])('%s', async (_name, script, advanceMs, wantCalls, wantErrors) => {
    const { calls, errors } = await runScript(script, ['a'], advanceMs);
    expect(calls).toEqual(wantCalls);
    expect(errors).toEqual(wantErrors);
  });

  it('clears the backoff on forget and on requeueAfter', async () => {
    const { queue } = await runScript({ a: ['requeue', 'forget'], b: ['requeue', { requeueAfterMs: 50 }] }, ['a', 'b'], [5, 1000]);
    expect([queue.retries('a'), queue.retries('b')]).toEqual([0, 0]);
  });

  it('keeps working when the error reporter throws', async () => {
    const { queue, clock } = newQueue();
    const calls: string[] = [];
    const running = runWorkers(
      queue,
      1,
      (key) => {
        calls.push(key);
        return calls.length === 1 ? Promise.reject(new Error('boom')) : Promise.resolve('forget');
      },
      () => {
        throw new Error('reporter broken');
      },
    );
    queue.add('a');
    await flush();
    clock.advance(5);
    await flush();
    queue.shutDown();
    await running;
    expect(calls).toEqual(['a', 'a']);
  });

  it('never runs one key on two workers, and runs different keys in parallel', async () => {
    const { queue } = newQueue();
    const inFlight = new Set<string>();
    let maxParallel = 0;
    const overlaps: string[] = [];
    const release: Array<() => void> = [];
    const running = runWorkers(
      queue,
      3,
      async (key) => {
        if (inFlight.has(key)) overlaps.push(key);
        inFlight.add(key);
        maxParallel = Math.max(maxParallel, inFlight.size);
        await new Promise<void>((resolve) => release.push(resolve));
        inFlight.delete(key);
        return 'forget';
      },
      () => {},
    );
    queue.add('a');
    queue.add('b');
    await flush();
    // 'a' is re-added while a worker holds it; the idle third worker must not take it.
    queue.add('a');
    await flush();
    expect(queue.processingCount()).toBe(2);
    while (release.length > 0) {
      for (const resolve of release.splice(0)) resolve();
      await flush();
    }
    queue.shutDown();
    await running;
    expect(overlaps).toEqual([]);
    expect(maxParallel).toBe(2);
  });

  it('resolves after shutdown once the workers finished their current keys', async () => {
    const { queue } = newQueue();
    let release: (() => void) | undefined;
    const running = track(
      runWorkers(
        queue,
        2,
        async () => {
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          return 'forget';
        },
        () => {},
      ),
    );
    queue.add('a');
    await flush();
    queue.shutDown();
    await flush();
    expect(running.settled).toBe(false);
    release?.();
    await running.promise;
    expect(queue.processingCount()).toBe(0);
  });

  it.each([[0], [1.5], [-1]])('rejects %d workers', async (workers) => {
    const { queue } = newQueue();
    await expect(
      runWorkers(
        queue,
        workers,
        () => Promise.resolve('forget'),
        () => {},
      ),
    ).rejects.toThrow(RangeError);
  });
});
