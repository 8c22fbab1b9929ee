/**
 * The countdown lives on the object: a real operator process killed with
 * SIGKILL and restarted deletes nothing early, and deletes promptly when the
 * delay ran out while it was down.
 */
import { DateTime } from 'luxon';
import { Annotations } from '../../src/api/names.js';
import { connect, createNamespace, expectKept, uidOf, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, types, waitForBundle, waitForReady } from './bundles.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

let env: TestEnv;
let ns: string;
let t: Awaited<ReturnType<typeof types>>;
let proc: OperatorProcess | undefined;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'restart');
  t = await types(env);
});
afterEach(async () => {
  await proc?.kill();
  proc = undefined;
});
afterAll(() => env.close());

const start = () => (proc = startOperatorProcess(['--namespace', ns, '--gc=off']));

async function markedDeleteAfter(bundle: string, object: string, delay: string): Promise<number> {
  await applyBundle(env, ns, bundle, [
    { name: 'cm', object: configMap(object, {}, { [Annotations.deletionDelay]: delay }) },
    { name: 'x', object: configMap(`${object}-x`) },
  ]);
  await waitForReady(env, ns, bundle);
  await applyBundle(env, ns, bundle, [{ name: 'x', object: configMap(`${object}-x`) }]);
  await waitForBundle(
    env,
    ns,
    bundle,
    'a pending deletion',
    (b) => ((b.status as { pendingDeletions?: unknown[] }).pendingDeletions ?? []).length === 1,
  );
  const obj = await env.client.get(t.configMap, ns, object);
  const stamp = obj.metadata.annotations?.[Annotations.deletionTimestamp];
  if (!stamp) throw new Error('no stamp');
  return DateTime.fromISO(stamp).toMillis();
}

describe('operator restarts', () => {
  it('killed before expiry: the restarted operator deletes nothing early, then deletes at expiry', async () => {
    start();
    const stampedAt = await markedDeleteAfter('before', 'rs-before', '8s');
    const deleteAfter = stampedAt + 8000;
    await proc?.kill();
    start();
    // Watch the object while the restarted operator runs: it must exist until the delay has passed.
    const goneAt = await waitFor(
      'the object to be deleted',
      async () => {
        const exists = (await env.client.tryGet(t.configMap, ns, 'rs-before')) !== undefined;
        if (exists) return undefined;
        return Date.now();
      },
      { timeoutMs: 40_000, intervalMs: 50 },
    );
    expect(goneAt).toBeGreaterThanOrEqual(deleteAfter);
  });

  it('killed, and the delay runs out while it is down: the restarted operator deletes promptly', async () => {
    start();
    const stampedAt = await markedDeleteAfter('after', 'rs-after', '2s');
    const uid = await uidOf(env, t.configMap, ns, 'rs-after');
    await proc?.kill();
    await waitFor('the delay to run out while the operator is down', () => (Date.now() > stampedAt + 2500 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expectKept(await env.client.tryGet(t.configMap, ns, 'rs-after'), uid);
    start();
    await waitFor(
      'the restarted operator to delete the expired object',
      async () => (await env.client.tryGet(t.configMap, ns, 'rs-after')) === undefined,
      { timeoutMs: 30_000 },
    );
  });
});
