/**
 * Soft deletes on the real apiserver: the countdown is stamped on the object,
 * shown in status, cancelled by re-adding, honoured exactly at expiry, and
 * survives the Bundle's own deletion.
 */
import { DateTime } from 'luxon';
import { Annotations, Labels } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, expectKept, localClockAsServerTime, run, uidOf, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { JumpingClock } from './clocks.js';

const clock = new JumpingClock();
// These tests cross long delays by jumping the clock: the operator takes it for the server's too.
const f = operatorFixture('soft', () => ({ clock, serverTime: localClockAsServerTime(clock) }));

interface Pending {
  apiVersion: string;
  kind: string;
  name: string;
  deletionTimestamp: string;
  deleteAfter: string;
}

const pendingOf = (b: KubeObject | undefined): Pending[] =>
  (b?.status as { pendingDeletions?: Pending[] } | undefined)?.pendingDeletions ?? [];
const stampOf = (o: KubeObject | undefined): string | undefined => o?.metadata.annotations?.[Annotations.deletionTimestamp];
const ms = (iso: string): number => DateTime.fromISO(iso).toMillis();

describe('soft deletes', () => {
  it('remove -> mark -> cancel by re-adding -> remove again -> delete at expiry', async () => {
    const delayed = configMap('sd-cycle', { v: '1' }, { [Annotations.deletionDelay]: '3s' });
    const other = { name: 'other', object: configMap('sd-other') };
    await applyBundle(f.env, f.ns, 'cycle', [{ name: 'delayed', object: delayed }, other]);
    await waitForReady(f.env, f.ns, 'cycle');
    const original = await f.env.client.get(f.t.configMap, f.ns, 'sd-cycle');

    // 1. Removed: stamped, listed as pending with matching times, the Bundle stays Ready.
    await applyBundle(f.env, f.ns, 'cycle', [other]);
    const marked = await waitForBundle(f.env, f.ns, 'cycle', 'a pending deletion', (b) => pendingOf(b).length === 1);
    const stamped = await f.env.client.get(f.t.configMap, f.ns, 'sd-cycle');
    const pending = pendingOf(marked)[0] as Pending;
    expect(pending).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', name: 'sd-cycle', deletionTimestamp: stampOf(stamped) });
    expect(ms(pending.deleteAfter) - ms(pending.deletionTimestamp)).toBe(3000);
    expect(conditionOf(marked, 'Ready')?.status).toBe('True');
    expect((marked.status as { pendingDeletionCount?: number }).pendingDeletionCount).toBe(1);
    expect(stamped.metadata.uid).toBe(original.metadata.uid);
    // The first Bundle of this file's operator: the gauge is exactly its one pending deletion.
    expect((await f.op.metrics.pendingDeletions.get()).values[0]?.value).toBe(1);

    // 2. Re-added before expiry: the stamp goes, the object is the same one, the event says so.
    await applyBundle(f.env, f.ns, 'cycle', [{ name: 'delayed', object: { ...delayed, data: { v: '2' } } }, other]);
    await waitForBundle(
      f.env,
      f.ns,
      'cycle',
      'no pending deletion',
      (b) => pendingOf(b).length === 0 && conditionOf(b, 'Ready')?.status === 'True',
    );
    const cancelled = await waitFor('the stamp to be removed', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, 'sd-cycle');
      return stampOf(o) === undefined ? o : undefined;
    });
    expect(cancelled.metadata.uid).toBe(original.metadata.uid);
    expect(cancelled.data).toEqual({ v: '2' });
    await waitFor('a DeletionCancelled event', async () =>
      (await eventsFor(f.env, f.ns, 'cycle')).some((e) => e.reason === 'DeletionCancelled'),
    );

    // 3. Removed again: a new countdown, and the delete comes at its expiry, not before.
    await applyBundle(f.env, f.ns, 'cycle', [other]);
    const again = await waitForBundle(f.env, f.ns, 'cycle', 'pending again', (b) => pendingOf(b).length === 1);
    const deleteAfter = ms((pendingOf(again)[0] as Pending).deleteAfter);
    await waitFor(
      'the object to be deleted at expiry',
      async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'sd-cycle')) === undefined,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    expect(clock.now()).toBeGreaterThanOrEqual(deleteAfter);
    await waitForBundle(f.env, f.ns, 'cycle', 'nothing pending', (b) => pendingOf(b).length === 0);
    const reasons = (await eventsFor(f.env, f.ns, 'cycle')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['DeletionScheduled', 'DeletionCancelled', 'DeletedAfterDelay']));
  });

  it('a long delay (24h) is crossed with the injected clock, and nothing is deleted before it', async () => {
    await applyBundle(f.env, f.ns, 'long', [
      { name: 'cm', object: configMap('sd-long', {}, { [Annotations.deletionDelay]: '24h' }) },
      { name: 'x', object: configMap('sd-long-x') },
    ]);
    await waitForReady(f.env, f.ns, 'long');
    const uid = await uidOf(f.env, f.t.configMap, f.ns, 'sd-long');
    await applyBundle(f.env, f.ns, 'long', [{ name: 'x', object: configMap('sd-long-x') }]);
    await waitForBundle(f.env, f.ns, 'long', 'pending', (b) => pendingOf(b).length === 1);
    clock.advance(23 * 3600_000);
    f.op.operator.bundles.enqueue(`${f.ns}/long`);
    await waitForBundle(f.env, f.ns, 'long', 'still pending after 23h', (b) => pendingOf(b).length === 1);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'sd-long'), uid);
    clock.advance(3600_000 + 1000);
    await waitFor('deletion once 24h have passed', async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'sd-long')) === undefined);
  });

  it.each([
    ['unparsable', 'banana'],
    ['negative', '-5m'],
    ['empty', ''],
  ])('an %s deletionDelay keeps the object and reports the object and the value', async (_kind, value) => {
    const name = `sd-bad-${_kind}`;
    // A listed object with an unreadable delay is refused before it is applied (plan unit table); here the
    // delay goes bad on the live object, by someone else's hand, before the object leaves the Bundle.
    await applyBundle(f.env, f.ns, name, [
      { name: 'cm', object: configMap(name) },
      { name: 'x', object: configMap(`${name}-x`) },
    ]);
    await waitForReady(f.env, f.ns, name);
    const uid = await uidOf(f.env, f.t.configMap, f.ns, name);
    await f.env.client.patch(f.t.configMap, f.ns, name, { metadata: { annotations: { [Annotations.deletionDelay]: value } } }, 'merge', {
      fieldManager: 'someone',
    });
    await applyBundle(f.env, f.ns, name, [{ name: 'x', object: configMap(`${name}-x`) }]);
    const bundle = await waitForBundle(f.env, f.ns, name, 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(bundle, 'Error')?.message).toContain(name);
    if (value !== '') expect(conditionOf(bundle, 'Error')?.message).toContain(value);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, name), uid);
  });

  it('a hand-written deletionTimestamp on an object still in the spec is removed', async () => {
    await applyBundle(f.env, f.ns, 'hand', [{ name: 'cm', object: configMap('sd-hand') }]);
    await waitForReady(f.env, f.ns, 'hand');
    await f.env.client.patch(
      f.t.configMap,
      f.ns,
      'sd-hand',
      { metadata: { annotations: { [Annotations.deletionTimestamp]: '2020-01-01T00:00:00Z' } } },
      'merge',
      { fieldManager: 'someone' },
    );
    await waitFor('the stamp to be removed', async () => stampOf(await f.env.client.get(f.t.configMap, f.ns, 'sd-hand')) === undefined);
  });

  it('kubectl delete of a pending object works at any time and the status follows', async () => {
    await applyBundle(f.env, f.ns, 'forced', [
      { name: 'cm', object: configMap('sd-forced', {}, { [Annotations.deletionDelay]: '1h' }) },
      { name: 'x', object: configMap('sd-forced-x') },
    ]);
    await waitForReady(f.env, f.ns, 'forced');
    await applyBundle(f.env, f.ns, 'forced', [{ name: 'x', object: configMap('sd-forced-x') }]);
    await waitForBundle(f.env, f.ns, 'forced', 'pending', (b) => pendingOf(b).length === 1);
    expect((await run('kubectl', ['delete', 'configmap', 'sd-forced', '-n', f.ns])).code).toBe(0);
    await waitForBundle(f.env, f.ns, 'forced', 'nothing pending', (b) => pendingOf(b).length === 0);
  });
});

describe('deleting the Bundle honours the delay', () => {
  it('deletes plain objects, releases delayed ones, and re-applying the Bundle adopts them back', async () => {
    await applyBundle(f.env, f.ns, 'parent', [
      { name: 'plain', object: configMap('sd-plain') },
      { name: 'precious', object: configMap('sd-precious', {}, { [Annotations.deletionDelay]: '1h' }) },
    ]);
    await waitForReady(f.env, f.ns, 'parent');
    const precious = await f.env.client.get(f.t.configMap, f.ns, 'sd-precious');
    expect((await run('kubectl', ['delete', 'bundle', 'parent', '-n', f.ns, '--wait=false'])).code).toBe(0);
    await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, 'parent')) === undefined);
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'sd-plain')).toBeUndefined();
    const released = await f.env.client.get(f.t.configMap, f.ns, 'sd-precious');
    expect(released.metadata.uid).toBe(precious.metadata.uid);
    expect(released.metadata.ownerReferences ?? []).toEqual([]);
    expect(released.metadata.labels?.[Labels.formerBundle]).toBe('parent');
    expect(stampOf(released)).toBeDefined();

    // Re-applying the same manifest adopts it and cancels the countdown.
    await applyBundle(f.env, f.ns, 'parent', [
      { name: 'plain', object: configMap('sd-plain') },
      { name: 'precious', object: configMap('sd-precious', {}, { [Annotations.deletionDelay]: '1h' }) },
    ]);
    const bundle = await waitForReady(f.env, f.ns, 'parent');
    const adopted = await waitFor('the released object to be adopted', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, 'sd-precious');
      return stampOf(o) === undefined && o.metadata.labels?.[Labels.formerBundle] === undefined ? o : undefined;
    });
    expect(adopted.metadata.uid).toBe(precious.metadata.uid);
    expect(adopted.metadata.ownerReferences?.[0]).toMatchObject({ uid: bundle.metadata.uid, controller: true });
  });

  it('released objects are deleted at expiry with no Bundle left', async () => {
    await applyBundle(f.env, f.ns, 'gone', [{ name: 'cm', object: configMap('sd-orphan', {}, { [Annotations.deletionDelay]: '2s' }) }]);
    await waitForReady(f.env, f.ns, 'gone');
    expect((await run('kubectl', ['delete', 'bundle', 'gone', '-n', f.ns])).code).toBe(0);
    const released = await waitFor('the object to be released', async () => {
      const o = await f.env.client.tryGet(f.t.configMap, f.ns, 'sd-orphan');
      return o?.metadata.labels?.[Labels.formerBundle] === 'gone' ? o : undefined;
    });
    const deleteAfter = ms(stampOf(released) as string) + 2000;
    await waitFor(
      'the released object to be deleted at expiry',
      async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'sd-orphan')) === undefined,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    expect(clock.now()).toBeGreaterThanOrEqual(deleteAfter);
  });
});
