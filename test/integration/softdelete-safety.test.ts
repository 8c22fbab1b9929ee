/**
 * Issue 9, soft-delete and prune wrongful-deletion paths, on the real
 * apiserver with our garbage collector running:
 *  3. a released object keeps no reference the operator wrote, so it
 *     survives its siblings' deletion until its own expiry;
 *  4. an object a re-applied Bundle lists is claimed at once (countdown
 *     cancelled) even when it cannot be applied yet: behind a dependency
 *     that is not Ready, with another resource invalid, or behind a failed
 *     apply; the sweep never deletes it;
 *  5. an object counting down after its Bundle dropped it is handed over to
 *     the Bundle that lists it now (same UID), and a newer claim is a Conflict.
 * The operator's clock jumps to cross delays; it is also its server time here
 * (softdelete-servertime.test.ts covers the Date-header estimate).
 */
import { ReleaseRecords } from '../../src/controllers/softdelete/release-records.js';
import { DateTime } from 'luxon';
import { Annotations, Labels } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import type { KubeObject } from '../../src/kube/types.js';
import { Discovery } from '../../src/kube/discovery.js';
import { ReleasedObjectSweeper } from '../../src/controllers/softdelete/released-sweeper.js';
import { apiEventRecorder } from '../../src/controllers/events.js';
import { silentLogger } from '../../src/observability/logger.js';
import { conditionOf, createNamespace, localClockAsServerTime, run, waitFor } from './harness.js';
import {
  applyBundle,
  configMap,
  eventsFor,
  getBundle,
  resourceCondition,
  waitForBundle,
  waitForReady,
  type ResourceFixture,
} from './bundles.js';
import { operatorFixture, releaseProofFor, testReleaseKey } from './operator.js';
import { JumpingClock } from './clocks.js';

const clock = new JumpingClock();
const f = operatorFixture('sdsafe', () => ({
  clock,
  serverTime: localClockAsServerTime(clock),
  garbageCollector: (client, gcClock) => new GarbageCollector(client, { mode: 'cluster', clock: gcClock, namespaces: [f.ns], workers: 2 }),
}));

const stampOf = (o: KubeObject | undefined): string | undefined => o?.metadata.annotations?.[Annotations.deletionTimestamp];
const ms = (iso: string): number => DateTime.fromISO(iso).toMillis();
const controllerUid = (o: KubeObject): string | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

/** "Kept": the same object (UID), not being deleted. */
async function expectKept(name: string, uid: string | undefined): Promise<KubeObject> {
  const o = await f.env.client.get(f.t.configMap, f.ns, name);
  expect(o.metadata.uid).toBe(uid);
  expect(o.metadata.deletionTimestamp).toBeUndefined();
  return o;
}

/** Applies a one-resource Bundle with `object`, deletes the Bundle, and returns the released object. */
async function releasedBy(bundle: string, object: Record<string, unknown>): Promise<KubeObject> {
  const name = (object.metadata as { name: string }).name;
  await applyBundle(f.env, f.ns, bundle, [{ name: 'x', object }]);
  await waitForReady(f.env, f.ns, bundle);
  expect((await run('kubectl', ['delete', 'bundle', bundle, '-n', f.ns, '--wait=false'])).code).toBe(0);
  await waitFor(`Bundle ${bundle} to be gone`, async () => (await getBundle(f.env, f.ns, bundle)) === undefined);
  const released = await f.env.client.get(f.t.configMap, f.ns, name);
  expect(released.metadata.labels?.[Labels.formerBundle]).toBe(bundle);
  expect(stampOf(released)).toBeDefined();
  return released;
}

describe('3. release removes every reference the operator wrote', () => {
  it('a released object survives the deletion of the sibling it referenced (our collector running) until its own expiry', async () => {
    // web (deletionDelay 25s) references cfg (no delay): the operator writes a dependency ownerReference to cfg on web.
    await applyBundle(f.env, f.ns, 'rel', [
      { name: 'cfg', object: configMap('rel-cfg') },
      { name: 'web', references: [{ resource: 'cfg' }], object: configMap('rel-web', { v: '1' }, { [Annotations.deletionDelay]: '25s' }) },
    ]);
    await waitForReady(f.env, f.ns, 'rel');
    const cfg = await f.env.client.get(f.t.configMap, f.ns, 'rel-cfg');
    const web = await f.env.client.get(f.t.configMap, f.ns, 'rel-web');
    expect(web.metadata.ownerReferences?.map((r) => r.uid)).toContain(cfg.metadata.uid);
    expect(web.metadata.annotations?.[Annotations.dependencyReferences]).toBe(cfg.metadata.uid);

    expect((await run('kubectl', ['delete', 'bundle', 'rel', '-n', f.ns, '--wait=false'])).code).toBe(0);
    await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, 'rel')) === undefined);
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'rel-cfg')).toBeUndefined();
    const released = await expectKept('rel-web', web.metadata.uid);
    expect(released.metadata.ownerReferences ?? []).toEqual([]);
    expect(released.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
    const deleteAfter = ms(stampOf(released) as string) + 25_000;

    // The collector has seen cfg gone: a canary owned by it is collected...
    await f.env.client.create(f.t.configMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'rel-canary',
        namespace: f.ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'rel-cfg', uid: cfg.metadata.uid }],
      },
    });
    await waitFor(
      'the collector to collect the canary owned by the deleted cfg',
      async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'rel-canary')) === undefined,
    );
    // ...and the released object, which no longer names cfg, is kept, up to just before its expiry.
    await expectKept('rel-web', web.metadata.uid);
    clock.advance(Math.max(0, deleteAfter - 1000 - clock.now()));
    await expectKept('rel-web', web.metadata.uid);

    // At its own expiry the sweeper deletes it, not before.
    clock.advance(2000);
    await waitFor(
      'the released object to be deleted at its expiry',
      async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'rel-web')) === undefined,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    expect(clock.now()).toBeGreaterThanOrEqual(deleteAfter);
  });

  it("release keeps the user's own ownerReferences", async () => {
    const owner = await f.env.client.create(f.t.configMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'rel-user-owner', namespace: f.ns },
    });
    const userRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'rel-user-owner', uid: owner.metadata.uid ?? '' };
    await applyBundle(f.env, f.ns, 'reluser', [
      { name: 'cfg', object: configMap('reluser-cfg') },
      {
        name: 'web',
        references: [{ resource: 'cfg' }],
        object: {
          ...configMap('reluser-web', { v: '1' }, { [Annotations.deletionDelay]: '1h' }),
          metadata: { name: 'reluser-web', annotations: { [Annotations.deletionDelay]: '1h' }, ownerReferences: [userRef] },
        },
      },
    ]);
    await waitForReady(f.env, f.ns, 'reluser');
    const web = await f.env.client.get(f.t.configMap, f.ns, 'reluser-web');
    expect(web.metadata.ownerReferences).toHaveLength(3);
    expect((await run('kubectl', ['delete', 'bundle', 'reluser', '-n', f.ns, '--wait=false'])).code).toBe(0);
    await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, 'reluser')) === undefined);
    const released = await expectKept('reluser-web', web.metadata.uid);
    expect(released.metadata.ownerReferences).toEqual([userRef]);
  });
});

describe('4. an object a live Bundle lists is claimed at once and never swept', () => {
  const delayed = (name: string): Record<string, unknown> => configMap(name, { v: '1' }, { [Annotations.deletionDelay]: '5s' });
  const neverReady = (name: string): Record<string, unknown> => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'example.invalid/none:1' }] } },
    },
  });

  it.each<[string, (x: string) => ResourceFixture[], (b: KubeObject) => boolean]>([
    [
      'behind a dependency that is not Ready',
      (x) => [
        { name: 'db', object: neverReady(`${x}-db`) },
        { name: 'x', references: [{ resource: 'db' }], object: delayed(x) },
      ],
      (b) => resourceCondition(b, 'x', 'Blocked')?.status === 'True',
    ],
    [
      'with another resource invalid',
      (x) => [
        { name: 'x', object: delayed(x) },
        { name: 'bad', references: [{ resource: 'nope' }], object: configMap(`${x}-bad`) },
      ],
      (b) => conditionOf(b, 'Error')?.status === 'True',
    ],
    [
      'behind a failed apply',
      (x) => [
        { name: 'bad', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: `${x}-bad` }, spec: { ports: [{ port: 99999 }] } } },
        { name: 'x', references: [{ resource: 'bad' }], object: delayed(x) },
      ],
      (b) => resourceCondition(b, 'bad', 'Error')?.status === 'True' && resourceCondition(b, 'x', 'Blocked')?.status === 'True',
    ],
  ])('re-applied %s: the countdown is cancelled and the object kept past its old expiry', async (_name, resources, stuck) => {
    const x = `claim-${Math.random().toString(36).slice(2, 7)}`;
    const bundle = `${x}-b`;
    const released = await releasedBy(bundle, delayed(x));
    const oldExpiry = ms(stampOf(released) as string) + 5000;

    await applyBundle(f.env, f.ns, bundle, resources(x));
    // It cannot be applied this pass (or the spec is invalid), and still it is claimed.
    const live = await waitForBundle(f.env, f.ns, bundle, 'stuck as expected', stuck);
    const claimed = await waitFor(
      'the object to be claimed: no stamp, no former-bundle label, controlled by the re-applied Bundle',
      async () => {
        const o = await f.env.client.get(f.t.configMap, f.ns, x);
        return stampOf(o) === undefined && o.metadata.labels?.[Labels.formerBundle] === undefined && controllerUid(o) === live.metadata.uid
          ? o
          : undefined;
      },
    );
    expect(claimed.metadata.uid).toBe(released.metadata.uid);

    // Past the old expiry, with the sweeper and the Bundle looking again: still there.
    clock.advance(Math.max(0, oldExpiry - clock.now()) + 5000);
    f.op.operator.bundles.enqueue(`${f.ns}/${bundle}`);
    await waitForBundle(
      f.env,
      f.ns,
      bundle,
      'nothing pending',
      (b) => ((b.status as { pendingDeletionCount?: number } | undefined)?.pendingDeletionCount ?? 0) === 0,
    );
    await expectKept(x, released.metadata.uid);
    const reasons = (await eventsFor(f.env, f.ns, bundle)).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['DeletionCancelled', 'Adopted']));
  });

  it('removing a claimed object again starts a new countdown (the old stamp is gone)', async () => {
    const x = 'claim-again';
    const released = await releasedBy('claim-again-b', delayed(x));
    const oldStamp = ms(stampOf(released) as string);
    await applyBundle(f.env, f.ns, 'claim-again-b', [
      { name: 'db', object: neverReady('claim-again-db') },
      { name: 'x', references: [{ resource: 'db' }], object: delayed(x) },
    ]);
    await waitFor('the claim', async () => stampOf(await f.env.client.get(f.t.configMap, f.ns, x)) === undefined);
    clock.advance(10_000);
    const removedAt = clock.now();
    await applyBundle(f.env, f.ns, 'claim-again-b', [{ name: 'db', object: neverReady('claim-again-db') }]);
    const restamped = await waitFor('a new stamp', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, x);
      return stampOf(o) !== undefined ? o : undefined;
    });
    expect(restamped.metadata.uid).toBe(released.metadata.uid);
    expect(ms(stampOf(restamped) as string)).toBeGreaterThanOrEqual(removedAt);
    expect(ms(stampOf(restamped) as string)).toBeGreaterThan(oldStamp + 10_000);
  });
});

describe('5. moving a resource between Bundles during its countdown', () => {
  it('hands the object over (same UID, countdown cancelled, events on both Bundles); a newer claim is a Conflict', async () => {
    const soft = configMap('soft-m', { v: '1' }, { [Annotations.deletionDelay]: '8s' });
    await applyBundle(f.env, f.ns, 'b1', [
      { name: 'soft', object: soft },
      { name: 'other1', object: configMap('b1-other') },
    ]);
    await applyBundle(f.env, f.ns, 'b2', [{ name: 'other2', object: configMap('b2-other') }]);
    await waitForReady(f.env, f.ns, 'b1');
    const b2 = await waitForReady(f.env, f.ns, 'b2');
    const original = await f.env.client.get(f.t.configMap, f.ns, 'soft-m');

    // Leaves b1 (the countdown starts), then is added to b2.
    await applyBundle(f.env, f.ns, 'b1', [{ name: 'other1', object: configMap('b1-other') }]);
    await waitFor('the countdown in b1', async () => stampOf(await f.env.client.get(f.t.configMap, f.ns, 'soft-m')));
    await applyBundle(f.env, f.ns, 'b2', [
      { name: 'other2', object: configMap('b2-other') },
      { name: 'moved', object: { ...soft, data: { v: '2' } } },
    ]);
    await waitForReady(f.env, f.ns, 'b2');
    const moved = await waitFor('b2 to hold it, countdown cancelled, its data applied', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, 'soft-m');
      return controllerUid(o) === b2.metadata.uid &&
        stampOf(o) === undefined &&
        (o.data as Record<string, string> | undefined)?.['v'] === '2'
        ? o
        : undefined;
    });
    expect(moved.metadata.uid).toBe(original.metadata.uid);
    await waitFor('HandedOver events on both Bundles', async () => {
      const [e1, e2] = [await eventsFor(f.env, f.ns, 'b1'), await eventsFor(f.env, f.ns, 'b2')];
      return (
        e1.some((e) => e.reason === 'HandedOver' && e.note.includes('b2')) &&
        e2.some((e) => e.reason === 'HandedOver' && e.note.includes('b1'))
      );
    });

    // Past b1's expiry: b1 looks again, deletes nothing.
    clock.advance(10_000);
    f.op.operator.bundles.enqueue(`${f.ns}/b1`);
    await waitForBundle(
      f.env,
      f.ns,
      'b1',
      'nothing pending',
      (b) =>
        ((b.status as { pendingDeletionCount?: number } | undefined)?.pendingDeletionCount ?? 0) === 0 &&
        conditionOf(b, 'Ready')?.status === 'True',
    );
    expect(controllerUid(await expectKept('soft-m', original.metadata.uid))).toBe(b2.metadata.uid);

    // A newer Bundle listing it too reports Conflict and takes nothing.
    await applyBundle(f.env, f.ns, 'b3', [{ name: 'also', object: soft }]);
    const b3 = await waitForBundle(f.env, f.ns, 'b3', 'Conflict', (b) => resourceCondition(b, 'also', 'Error')?.reason === 'Conflict');
    expect(resourceCondition(b3, 'also', 'Error')?.message).toContain('b2');
    expect(controllerUid(await expectKept('soft-m', original.metadata.uid))).toBe(b2.metadata.uid);
  });
});

describe('what another live Bundle lists is never deleted by the Bundle that had it', () => {
  it.each<[string, (b1: string) => Promise<void>]>([
    [
      'b1 drops it from its spec (no deletionDelay)',
      async (b1) => void (await applyBundle(f.env, f.ns, b1, [{ name: 'other', object: configMap(`${b1}-other`) }])),
    ],
    [
      'b1 is deleted (no deletionDelay)',
      async (b1) => void expect((await run('kubectl', ['delete', 'bundle', b1, '-n', f.ns, '--wait=false'])).code).toBe(0),
    ],
  ])('%s while b2 lists it: kept (same UID) and taken by b2', async (_name, leave) => {
    const tag = Math.random().toString(36).slice(2, 7);
    const [b1, b2, x] = [`keep1-${tag}`, `keep2-${tag}`, `keep-x-${tag}`];
    await applyBundle(f.env, f.ns, b1, [
      { name: 'x', object: configMap(x) },
      { name: 'other', object: configMap(`${b1}-other`) },
    ]);
    const first = await waitForReady(f.env, f.ns, b1);
    const original = await f.env.client.get(f.t.configMap, f.ns, x);
    // b2, newer, lists it too: a Conflict while b1 still lists it.
    await applyBundle(f.env, f.ns, b2, [{ name: 'x', object: configMap(x, { v: 'b2' }) }]);
    await waitForBundle(f.env, f.ns, b2, 'Conflict', (b) => resourceCondition(b, 'x', 'Error')?.reason === 'Conflict');
    expect(controllerUid(await expectKept(x, original.metadata.uid))).toBe(first.metadata.uid);

    await leave(b1);
    const second = await waitForReady(f.env, f.ns, b2);
    const taken = await waitFor('b2 to hold it', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, x);
      return controllerUid(o) === second.metadata.uid && (o.data as Record<string, string> | undefined)?.['v'] === 'b2' ? o : undefined;
    });
    expect(taken.metadata.uid).toBe(original.metadata.uid);
    expect(taken.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('the released-object sweep on its own', () => {
  /** A sweeper of its own for a namespace no Bundle controller watches; one worker, so objects are decided in order. */
  async function sweeperFor(ns: string): Promise<ReleasedObjectSweeper> {
    const sweepClock = new JumpingClock();
    const releaseKey = await testReleaseKey();
    const discovery = new Discovery(f.env.client);
    await discovery.refresh();
    return new ReleasedObjectSweeper({
      client: f.env.client,
      discovery,
      clock: sweepClock,
      serverTime: localClockAsServerTime(sweepClock),
      logger: silentLogger(),
      events: apiEventRecorder(f.env.client, sweepClock, silentLogger(), 'sweep-test'),
      namespace: ns,
      workers: 1,
      releaseKey,
      releaseRecords: new ReleaseRecords(f.env.client, { namespace: 'default', name: 'bundlesmith-release-key' }),
    });
  }

  const expiredRelease = (ns: string, name: string): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: ns,
      labels: { [Labels.formerBundle]: 'old' },
      annotations: { [Annotations.deletionDelay]: '5s', [Annotations.deletionTimestamp]: '2020-01-01T00:00:00.000Z' },
    },
  });
  /** An object as the finalizer would have released it: created, then given the proof over its uid. */
  async function signedRelease(ns: string, name: string): Promise<KubeObject> {
    const created = await f.env.client.create(f.t.configMap, expiredRelease(ns, name));
    return f.env.client.patch(f.t.configMap, ns, name, { metadata: { annotations: await releaseProofFor(created.metadata) } }, 'merge');
  }

  it('never deletes an expired released object while a live Bundle lists it (no controller claims it here), and deletes it once none does', async () => {
    // A namespace no Bundle controller watches: only a sweeper of its own runs there.
    const ns = await createNamespace(f.env, 'sdsweep');
    const sweeper = await sweeperFor(ns);
    const listed = await signedRelease(ns, 'a-listed');
    await signedRelease(ns, 'b-control');
    await applyBundle(f.env, ns, 'lister', [{ name: 'x', object: configMap('a-listed') }]);
    try {
      await sweeper.start();
      await waitFor('the sweeper to be synced', () => sweeper.hasSynced());
      // One worker, first in first out: once the control (listed after a-listed) is gone, a-listed was decided on.
      await waitFor(
        'the unlisted control to be swept',
        async () => (await f.env.client.tryGet(f.t.configMap, ns, 'b-control')) === undefined,
      );
      const kept = await f.env.client.get(f.t.configMap, ns, 'a-listed');
      expect(kept.metadata.uid).toBe(listed.metadata.uid);
      expect(kept.metadata.deletionTimestamp).toBeUndefined();

      // The Bundle goes: nothing lists it any more, and its expired countdown runs out.
      expect((await run('kubectl', ['delete', 'bundle', 'lister', '-n', ns])).code).toBe(0);
      await waitFor(
        'the once-listed object to be swept',
        async () => (await f.env.client.tryGet(f.t.configMap, ns, 'a-listed')) === undefined,
      );
    } finally {
      await sweeper.stop();
    }
  });

  it('never deletes an object that carries the former-bundle label without a deletionDelay (a label alone is no permission)', async () => {
    const ns = await createNamespace(f.env, 'sdlabel');
    const sweeper = await sweeperFor(ns);
    const labelled = await f.env.client.create(f.t.configMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a-labelled', namespace: ns, labels: { [Labels.formerBundle]: 'old' } },
    });
    await signedRelease(ns, 'b-control');
    try {
      await sweeper.start();
      await waitFor('the sweeper to be synced', () => sweeper.hasSynced());
      // One worker, first in first out: once the control is gone, a-labelled was decided on.
      await waitFor(
        'the expired control to be swept',
        async () => (await f.env.client.tryGet(f.t.configMap, ns, 'b-control')) === undefined,
      );
      const kept = await f.env.client.get(f.t.configMap, ns, 'a-labelled');
      expect(kept.metadata.uid).toBe(labelled.metadata.uid);
      expect(kept.metadata.deletionTimestamp).toBeUndefined();
    } finally {
      await sweeper.stop();
    }
  });

  it('never deletes a release it cannot prove: labelled by hand, or carrying a proof copied from another object; says so on the object', async () => {
    const ns = await createNamespace(f.env, 'sdproof');
    const sweeper = await sweeperFor(ns);
    // Everything a release writes, by a client that may patch but never got the key.
    const forged = await f.env.client.create(f.t.configMap, expiredRelease(ns, 'a-forged'));
    // A genuine proof, copied from another released object onto this one.
    const donor = await signedRelease(ns, 'donor');
    const copied = await f.env.client.create(f.t.configMap, expiredRelease(ns, 'b-copied'));
    await f.env.client.patch(
      f.t.configMap,
      ns,
      'b-copied',
      { metadata: { annotations: { [Annotations.releaseProof]: donor.metadata.annotations?.[Annotations.releaseProof] ?? '' } } },
      'merge',
    );
    await signedRelease(ns, 'c-control');
    try {
      await sweeper.start();
      await waitFor('the sweeper to be synced', () => sweeper.hasSynced());
      await waitFor(
        'the proven control to be swept',
        async () => (await f.env.client.tryGet(f.t.configMap, ns, 'c-control')) === undefined,
      );
      await waitFor('the proven donor to be swept', async () => (await f.env.client.tryGet(f.t.configMap, ns, 'donor')) === undefined);
      for (const [name, original] of [
        ['a-forged', forged],
        ['b-copied', copied],
      ] as const) {
        const kept = await f.env.client.get(f.t.configMap, ns, name);
        expect(kept.metadata.uid).toBe(original.metadata.uid);
        expect(kept.metadata.deletionTimestamp).toBeUndefined();
        const warning = await waitFor(`an UnprovenRelease event on ${name}`, async () =>
          (await eventsFor(f.env, ns, name)).find((e) => e.reason === 'UnprovenRelease'),
        );
        expect(warning.type).toBe('Warning');
      }
    } finally {
      await sweeper.stop();
    }
  });
});
