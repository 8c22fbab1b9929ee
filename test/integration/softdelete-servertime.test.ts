/**
 * Issue 9, server time: soft-delete stamps and expiry follow the API
 * server's clock (from the Date headers of its answers), not the
 * operator's. A failover to a replica whose clock is an hour ahead deletes
 * nothing before stamp + delay by the apiserver's time, and a replica whose
 * clock is behind writes no stamp that shortens the countdown. The test
 * process shares the machine clock with the apiserver, so Date.now() here is
 * the apiserver's time.
 */
import { DateTime } from 'luxon';
import { Annotations, Labels } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, getBundle, types, waitForBundle, waitForReady, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';
import { JumpingClock } from './clocks.js';

const HOUR = 3_600_000;
const DELAY_MS = 12_000;

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let running: InProcessOperator | undefined;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'sdtime');
  t = await types(env);
});
afterAll(async () => {
  await running?.stop();
  env.close();
});

/** An operator whose clock is off by `skewMs` from the machine's (and the apiserver's); server time is left to its default. */
async function operatorSkewedBy(skewMs: number): Promise<InProcessOperator> {
  await running?.stop();
  const clock = new JumpingClock();
  clock.advance(skewMs);
  running = await startOperator({ namespace: ns, clock });
  return running;
}

const stampOf = (o: KubeObject | undefined): string | undefined => o?.metadata.annotations?.[Annotations.deletionTimestamp];
const ms = (iso: string): number => DateTime.fromISO(iso).toMillis();

/**
 * Polls the object until it is gone. Every answer the apiserver gave before
 * `deleteAfter` (by the shared clock: the answer was received before it)
 * must show the same object, not being deleted.
 */
async function expectDeletedNotBefore(name: string, uid: string | undefined, deleteAfter: number): Promise<void> {
  // waitFor retries a probe that throws: record what was wrong instead, and assert after.
  const early: string[] = [];
  await waitFor(
    `${name} to be deleted`,
    async () => {
      const o = await env.client.tryGet(t.configMap, ns, name);
      const receivedAt = Date.now();
      if (receivedAt < deleteAfter && (o?.metadata.uid !== uid || o?.metadata.deletionTimestamp !== undefined)) {
        early.push(
          `${new Date(receivedAt).toISOString()}: ${o === undefined ? 'gone' : `uid ${o.metadata.uid ?? '?'}, deletionTimestamp ${o.metadata.deletionTimestamp ?? '-'}`}`,
        );
      }
      return o === undefined;
    },
    { timeoutMs: DELAY_MS + 20_000, intervalMs: 50 },
  );
  expect({ deleteAfter: new Date(deleteAfter).toISOString(), early }).toEqual({
    deleteAfter: new Date(deleteAfter).toISOString(),
    early: [],
  });
}

describe("soft deletes on the apiserver's time", () => {
  it('a pending deletion stamped by a replica whose clock is behind is not cut short by a replica whose clock is ahead', async () => {
    await operatorSkewedBy(-HOUR);
    await applyBundle(env, ns, 'st', [
      { name: 'cm', object: configMap('st-obj', {}, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` }) },
      { name: 'x', object: configMap('st-x') },
    ]);
    await waitForReady(env, ns, 'st');
    const original = await env.client.get(t.configMap, ns, 'st-obj');

    const removedAt = Date.now();
    await applyBundle(env, ns, 'st', [{ name: 'x', object: configMap('st-x') }]);
    await waitForBundle(
      env,
      ns,
      'st',
      'a pending deletion',
      (b) => ((b.status as { pendingDeletionCount?: number } | undefined)?.pendingDeletionCount ?? 0) === 1,
    );
    const stamp = ms(stampOf(await env.client.get(t.configMap, ns, 'st-obj')) as string);
    // Written on the server's time, not an hour early: the countdown is not shorter than the delay.
    expect(stamp).toBeGreaterThanOrEqual(removedAt);

    // Failover: the new replica's clock is an hour ahead.
    const skewed = await operatorSkewedBy(HOUR);
    skewed.operator.bundles.enqueue(`${ns}/st`);
    await expectDeletedNotBefore('st-obj', original.metadata.uid, stamp + DELAY_MS);
  });

  it("a released object is swept by a replica whose clock is ahead no earlier than stamp + delay by the apiserver's time", async () => {
    await operatorSkewedBy(-HOUR);
    await applyBundle(env, ns, 'gone', [
      { name: 'cm', object: configMap('st-rel', {}, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` }) },
    ]);
    await waitForReady(env, ns, 'gone');
    const original = await env.client.get(t.configMap, ns, 'st-rel');
    const deletedAt = Date.now();
    expect((await run('kubectl', ['delete', 'bundle', 'gone', '-n', ns, '--wait=false'])).code).toBe(0);
    await waitFor('the Bundle to be gone', async () => (await getBundle(env, ns, 'gone')) === undefined);
    const released = await env.client.get(t.configMap, ns, 'st-rel');
    expect(released.metadata.labels?.[Labels.formerBundle]).toBe('gone');
    const stamp = ms(stampOf(released) as string);
    expect(stamp).toBeGreaterThanOrEqual(deletedAt);

    await operatorSkewedBy(HOUR);
    await expectDeletedNotBefore('st-rel', original.metadata.uid, stamp + DELAY_MS);
  });
});
