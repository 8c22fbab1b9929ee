/**
 * Workers for a WorkQueue: each loop takes a key, calls the handler, and
 * does what its result asks (forget, retry with backoff, or look again
 * later), so that handlers only decide and never touch the queue.
 */
import type { WorkQueue } from './workqueue.js';

/** What a handler wants done with its key. */
export type WorkResult = 'forget' | 'requeue' | { requeueAfterMs: number };

export type WorkHandler<K> = (key: K) => Promise<WorkResult>;

/**
 * Runs `workers` loops that take keys from `queue` and call `handler`:
 * 'forget' clears the key's backoff; 'requeue' re-adds it rate-limited;
 * `{ requeueAfterMs }` clears the backoff and re-adds it after that delay
 * (a scheduled recheck, not a failure); a thrown error goes to `onError` and
 * re-adds the key rate-limited. Resolves when every loop has stopped, that is
 * after the queue was shut down and each loop finished its current key.
 */
export async function runWorkers<K extends string | number>(
  queue: WorkQueue<K>,
  workers: number,
  handler: WorkHandler<K>,
  onError: (key: K, error: unknown) => void,
): Promise<void> {
  if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`runWorkers needs at least one worker, got ${workers}`);

  const processOne = async (key: K): Promise<void> => {
    try {
      const result = await handler(key);
      if (result === 'forget') {
        queue.forget(key);
      } else if (result === 'requeue') {
        queue.addRateLimited(key);
      } else {
        queue.forget(key);
        queue.addAfter(key, result.requeueAfterMs);
      }
    } catch (error: unknown) {
      try {
        onError(key, error);
      } catch {
        // A failing error reporter must not stop the worker; the retry below still happens.
      }
      queue.addRateLimited(key);
    } finally {
      queue.done(key);
    }
  };

  const workerLoop = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      await processOne(key);
    }
  };

  await Promise.all(Array.from({ length: workers }, () => workerLoop()));
}
