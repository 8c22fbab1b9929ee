import { Annotations, EventReasons, Labels, Reasons } from '../../../src/api/names.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { pruneWaves } from '../../../src/core/bundle/prune.js';
import { isReadyWithCurrentSpec, type BundleToPlan } from '../../../src/core/bundle/plan-input.js';
import {
  keepListedElsewhere,
  planBundle,
  withAppliedReadiness,
  withholdAfterFailedApplies,
  withholdPrunes,
  type BundlePlan,
  type ResourcePlan,
} from '../../../src/core/bundle/plan.js';
import {
  bundle,
  BUNDLE_UID,
  configMap,
  controlledBy,
  controlledByBundle,
  deployment,
  live,
  planInput,
  resource,
  service,
  terminating,
  withAnnotation,
  withConditions,
  withData,
  withOwner,
  withRef,
  withResource,
  withResourceVersion,
  withGeneration,
  withSpec,
  withStatus,
  withUid,
  type Mod,
  type Obj,
  type TestBundle,
} from './builders.js';

const HOUR = 3_600_000;

/** The live object the server would hold after applying `name` as planned with `liveSoFar`. */
function appliedLive(b: TestBundle, name: string, liveSoFar: Record<string, LiveObject> = {}, ...mods: Mod<Obj>[]): Obj {
  const r = planBundle(planInput(b, liveSoFar)).resources.find((p) => p.name === name);
  if (r === undefined || !('apply' in r)) throw new Error(`resource ${name} is not applied: ${JSON.stringify(r)}`);
  return live(structuredClone(r.apply.desired), ...mods);
}

const actions = (plan: BundlePlan): string[] => plan.resources.map((r) => `${r.name}:${r.action}`);
const byName = (plan: BundlePlan, name: string): ResourcePlan | undefined => plan.resources.find((r) => r.name === name);

describe('planBundle: an invalid spec changes nothing', () => {
  it('reports the issues and neither applies nor prunes', () => {
    const b = bundle('b', withResource(resource('a', configMap('a'), withRef('b')), resource('b', configMap('b'), withRef('a'))));
    const stray = live(configMap('stray'), controlledByBundle());
    const plan = planBundle(planInput(b, {}, { controlled: [stray] }));
    expect(plan.issues.map((i) => i.message)).toEqual(['reference cycle: a -> b -> a']);
    expect(plan.resources).toEqual([]);
    expect(plan.prune).toEqual([]);
    expect(plan.withheld).toEqual([]);
    expect(plan.requeueAfterMs).toBeUndefined();
  });
});

describe('planBundle: resources', () => {
  const single = bundle('b', withResource(resource('cm', configMap('cm', withData({ a: '1' })))));

  it('creates a missing object', () => {
    const r = byName(planBundle(planInput(single)), 'cm');
    expect(r).toMatchObject({
      action: 'apply',
      apply: { needed: true, create: true },
      readiness: { state: 'in-progress', message: 'creating' },
    });
  });

  it('sends nothing when the live object already matches (no-op reconcile)', () => {
    const plan = planBundle(planInput(single, { cm: appliedLive(single, 'cm', {}, controlledByBundle()) }));
    expect(byName(plan, 'cm')).toMatchObject({ action: 'apply', apply: { needed: false, create: false }, readiness: { state: 'ready' } });
  });

  it('updates an object that drifted', () => {
    const drifted = appliedLive(single, 'cm', {}, withData({ a: 'edited' }));
    expect(byName(planBundle(planInput(single, { cm: drifted })), 'cm')).toMatchObject({
      action: 'apply',
      apply: { needed: true, create: false },
      readiness: { state: 'in-progress', message: 'applying changes' },
    });
  });

  it('orders by references, dependencies first, with levels', () => {
    const b = bundle(
      'b',
      withResource(
        resource('app', configMap('app'), withRef('db')),
        resource('db', configMap('db')),
        resource('web', configMap('web'), withRef('app')),
      ),
    );
    const plan = planBundle(planInput(b));
    expect(plan.order).toEqual(['db', 'app', 'web']);
    expect(plan.levels).toEqual([['db'], ['app'], ['web']]);
    expect(actions(plan)).toEqual(['db:apply', 'app:blocked', 'web:blocked']);
    expect(byName(plan, 'app')).toEqual({
      name: 'app',
      action: 'blocked',
      reason: Reasons.DependenciesNotReady,
      message: 'waiting for "db" (in progress)',
      waitingFor: ['db'],
      blockedByError: false,
    });
    expect(byName(plan, 'web')).toMatchObject({ message: 'waiting for "app" (blocked)', blockedByError: false });
  });

  it('resolves references from ready dependencies, keeping types, and owns the dependency', () => {
    const b = bundle(
      'b',
      withResource(
        resource(
          'app',
          deployment('app', withSpec({ replicas: '!{count}', template: { metadata: { annotations: { host: '!{host}' } } } })),
          withRef('db', { name: 'count', path: 'spec.count' }),
          withRef('db', { name: 'host', path: "metadata.annotations['db.io/host']" }),
        ),
        // A number to copy (ConfigMap data holds strings only): a Service's spec stands in.
        resource('db', service('db', withSpec({ count: 3 }), withAnnotation('db.io/host', 'db.local'))),
      ),
    );
    const db = appliedLive(b, 'db', {}, withUid('db-uid'));
    const app = byName(planBundle(planInput(b, { db })), 'app');
    if (app?.action !== 'apply') throw new Error(`expected apply, got ${JSON.stringify(app)}`);
    expect(app.apply.desired['spec']).toEqual({ replicas: 3, template: { metadata: { annotations: { host: 'db.local' } } } });
    expect(app.apply.desired.metadata.ownerReferences).toEqual([
      { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'b', uid: BUNDLE_UID, controller: true, blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'Service', name: 'db', uid: 'db-uid', blockOwnerDeletion: true },
    ]);
  });

  it('reports a reference that resolves to nothing as a retriable error of that resource', () => {
    const b = bundle(
      'b',
      withResource(
        resource('app', configMap('app', withData({ ip: '!{ip}' })), withRef('svc', { name: 'ip', path: 'data.ip' })),
        resource('svc', configMap('svc')),
      ),
    );
    const plan = planBundle(planInput(b, { svc: appliedLive(b, 'svc') }));
    expect(byName(plan, 'app')).toEqual({
      name: 'app',
      action: 'error',
      terminal: false,
      message: 'reference "ip" to resource "svc": path "data.ip" not found on ConfigMap ns1/svc',
    });
  });

  it('adopts an object without a controller', () => {
    const orphan = live(configMap('cm', withData({ a: '1' })));
    const r = byName(planBundle(planInput(single, { cm: orphan })), 'cm');
    expect(r).toMatchObject({
      action: 'adopt',
      apply: { needed: true },
      event: { reason: EventReasons.Adopted, message: 'resource "cm": adopted ConfigMap ns1/cm' },
    });
  });

  it('leaves an object controlled by someone else alone, and blocks its dependents on an error', () => {
    const b = bundle('b', withResource(resource('cm', configMap('cm')), resource('app', configMap('app'), withRef('cm'))));
    const plan = planBundle(planInput(b, { cm: live(configMap('cm'), controlledBy('ReplicaSet', 'rs')) }));
    expect(byName(plan, 'cm')).toMatchObject({
      action: 'conflict',
      message: 'ConfigMap ns1/cm is controlled by ReplicaSet rs (uid rs-uid)',
      controller: { kind: 'ReplicaSet', name: 'rs' },
      event: { reason: EventReasons.Conflict },
    });
    expect(byName(plan, 'app')).toMatchObject({ action: 'blocked', message: 'waiting for "cm" (in conflict)', blockedByError: true });
  });

  it('treats a live Bundle with the same name but another uid that lists the object as someone else', () => {
    const claims = new Map([['/ConfigMap/ns1/cm', [{ name: 'b', uid: 'old-uid', creationTimestamp: '2020-01-01T00:00:00Z' }]]]);
    const plan = planBundle(planInput(single, { cm: live(configMap('cm'), controlledByBundle('old-uid')) }, { listings: claims }));
    expect(byName(plan, 'cm')).toMatchObject({ action: 'conflict', message: 'ConfigMap ns1/cm is controlled by Bundle b (uid old-uid)' });
    // Only a claim reference to this Bundle (by its uid), never a claim on the other one's controller reference.
    expect(plan.takeHolds.map((c) => c.kind)).toEqual(['reference']);
  });

  it('waits for an object being deleted', () => {
    const plan = planBundle(planInput(single, { cm: live(configMap('cm'), controlledByBundle(), terminating('2025-12-31T23:00:00Z')) }));
    expect(byName(plan, 'cm')).toEqual({
      name: 'cm',
      action: 'wait-deleting',
      message: 'ConfigMap ns1/cm is being deleted (since 2025-12-31T23:00:00Z)',
    });
  });

  it.each<[string, Mod<Obj>[], 'cancel' | 'adopt', string[]]>([
    ['controlled by the Bundle', [controlledByBundle()], 'cancel', [EventReasons.DeletionCancelled]],
    ['released (no controller)', [], 'adopt', [EventReasons.DeletionCancelled, EventReasons.Adopted]],
  ])('cancels a running deletion countdown when the object is back in spec (%s)', (_name, mods, kind, reasons) => {
    const counting = appliedLive(
      single,
      'cm',
      {},
      withAnnotation(Annotations.deletionTimestamp, '2025-12-31T00:00:00.000Z'),
      withAnnotation(Annotations.deletionDelay, '48h'),
      withUid('cm-uid'),
      withResourceVersion('7'),
      (o) => (o.metadata.ownerReferences = []),
      ...mods,
    );
    const plan = planBundle(planInput(single, { cm: counting }));
    expect(byName(plan, 'cm')).toMatchObject({ action: 'apply' });
    expect(plan.takeHolds).toHaveLength(1);
    const claim = plan.takeHolds[0];
    expect(claim).toMatchObject({ name: 'cm', kind });
    expect(claim?.events.map((e) => e.reason)).toEqual(reasons);
    expect(claim?.patch.slice(0, 3)).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'cm-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'remove', path: '/metadata/annotations/smith.atlassian.com~1deletionTimestamp' },
    ]);
  });

  it('uses the CRD readiness table for custom resources', () => {
    const b = bundle('b', withResource(resource('w', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })));
    const w = appliedLive(b, 'w', {}, withStatus({ phase: 'Pending' }));
    const plan = planBundle(
      planInput(b, { w }, { crdReadiness: new Map([['example.com/v1/Widget', { fieldPath: 'status.phase', fieldValue: 'Done' }]]) }),
    );
    expect(byName(plan, 'w')).toMatchObject({
      readiness: { state: 'in-progress', message: 'waiting for status.phase to be "Done" (is "Pending")' },
    });
  });
});

describe('planBundle: an unreadable deletionDelay on a listed object is reported when applied', () => {
  it.each(['banana', '-1s', '1e9h', '9999999h', '1h-30m', ''])(
    '%j: a terminal error on that resource, not applied, prunes withheld',
    (delay) => {
      const b = bundle(
        'b',
        withResource(resource('bad', configMap('bad', withAnnotation(Annotations.deletionDelay, delay))), resource('ok', configMap('ok'))),
      );
      const gone = live(configMap('gone'), controlledByBundle(), withUid('gone-uid'));
      const plan = planBundle(planInput(b, {}, { controlled: [gone] }));
      const bad = byName(plan, 'bad');
      expect(bad).toMatchObject({ action: 'error', terminal: true });
      if (bad?.action === 'error') expect(bad.message).toContain(Annotations.deletionDelay);
      expect(byName(plan, 'ok')).toMatchObject({ action: 'apply' });
      expect(plan.prune).toEqual([]);
      expect(plan.withheld.map((w) => w.action.target.name)).toEqual(['gone']);
    },
  );

  it.each(['0', '0s', '1.5h', '2562047h'])('%j is a valid delay: applied', (delay) => {
    const b = bundle('b', withResource(resource('cm', configMap('cm', withAnnotation(Annotations.deletionDelay, delay)))));
    expect(byName(planBundle(planInput(b)), 'cm')).toMatchObject({ action: 'apply' });
  });
});

describe('planBundle: pruning', () => {
  const b = bundle('b', withResource(resource('keep', configMap('keep'))));
  const keep = appliedLive(b, 'keep', {}, controlledByBundle());
  const gone = (name: string, ...mods: Mod<Obj>[]): Obj =>
    live(configMap(name), controlledByBundle(), withUid(`${name}-uid`), withResourceVersion('42'), ...mods);

  it('deletes a controlled object that left the spec, with preconditions', () => {
    const plan = planBundle(planInput(b, { keep }, { controlled: [keep, gone('old')] }));
    expect(plan.prune).toEqual([
      {
        action: 'delete',
        afterDelay: false,
        target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns1', name: 'old', uid: 'old-uid', resourceVersion: '42' },
        event: { reason: EventReasons.Pruned, message: 'deleted ConfigMap ns1/old: no longer in the Bundle' },
        wave: 0,
      },
    ]);
    expect(plan.withheld).toEqual([]);
    expect(plan.requeueAfterMs).toBeUndefined();
  });

  it('does not prune what the spec lists, whatever the version', () => {
    const listed = live({ ...structuredClone(keep), apiVersion: 'v1' });
    expect(planBundle(planInput(b, { keep }, { controlled: [listed] })).prune).toEqual([]);
  });

  it('ignores objects already being deleted', () => {
    expect(planBundle(planInput(b, { keep }, { controlled: [gone('old', terminating())] })).prune).toMatchObject([
      { action: 'terminating' },
    ]);
  });

  it.each<[string, Mod<Obj>[], Record<string, unknown>, number | undefined]>([
    [
      'deletionDelay starts a countdown (mark)',
      [withAnnotation(Annotations.deletionDelay, '2h')],
      {
        action: 'mark',
        deletionTimestamp: '2026-01-01T00:00:00.000Z',
        deleteAfter: '2026-01-01T02:00:00.000Z',
        patch: [
          { op: 'test', path: '/metadata/resourceVersion', value: '42' },
          { op: 'add', path: '/metadata/annotations/smith.atlassian.com~1deletionTimestamp', value: '2026-01-01T00:00:00.000Z' },
        ],
        event: { reason: EventReasons.DeletionScheduled },
      },
      2 * HOUR,
    ],
    [
      'a running countdown waits',
      [withAnnotation(Annotations.deletionDelay, '2h'), withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:30:00.000Z')],
      { action: 'wait', deleteAfter: '2026-01-01T01:30:00.000Z' },
      1.5 * HOUR,
    ],
    [
      'an expired countdown deletes',
      [withAnnotation(Annotations.deletionDelay, '2h'), withAnnotation(Annotations.deletionTimestamp, '2025-12-31T20:00:00.000Z')],
      { action: 'delete', afterDelay: true, deleteAfter: '2025-12-31T22:00:00.000Z', event: { reason: EventReasons.DeletedAfterDelay } },
      undefined,
    ],
    [
      'an unreadable delay keeps the object',
      [withAnnotation(Annotations.deletionDelay, 'soon')],
      {
        action: 'invalid',
        message: expect.stringMatching(/^ConfigMap ns1\/old is kept: .*"soon"/),
        event: { reason: EventReasons.InvalidDeletionDelay },
      },
      undefined,
    ],
  ])('soft delete: %s', (_name, mods, expected, requeue) => {
    const plan = planBundle(planInput(b, { keep }, { controlled: [keep, gone('old', ...mods)] }));
    expect(plan.prune).toMatchObject([expected]);
    expect(plan.requeueAfterMs).toBe(requeue);
  });

  it('requeues at the earliest expiry', () => {
    const plan = planBundle(
      planInput(
        b,
        { keep },
        {
          controlled: [
            gone('late', withAnnotation(Annotations.deletionDelay, '3h')),
            gone(
              'soon',
              withAnnotation(Annotations.deletionDelay, '2h'),
              withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00.000Z'),
            ),
          ],
        },
      ),
    );
    expect(plan.requeueAfterMs).toBe(1 * HOUR);
  });

  it('deletes dependents before the objects they reference', () => {
    const base = gone('base');
    const mid = gone('mid', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'base', uid: 'base-uid' }));
    const top = gone('top', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'mid', uid: 'mid-uid' }));
    const plan = planBundle(planInput(b, { keep }, { controlled: [base, mid, gone('other'), top] }));
    expect(plan.prune.map((a) => a.target.name)).toEqual(['other', 'top', 'mid', 'base']);
  });

  it('groups due deletes in waves: dependents (and what nothing references) first, what they reference in a later wave', () => {
    const base = gone('base');
    const mid = gone('mid', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'base', uid: 'base-uid' }));
    const top = gone('top', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'mid', uid: 'mid-uid' }));
    const side = gone('side', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'base', uid: 'base-uid' }));
    const plan = planBundle(planInput(b, { keep }, { controlled: [base, mid, gone('other'), top, side] }));
    expect(pruneWaves(plan.prune).map((wave) => wave.map((a) => a.target.name))).toEqual([['other', 'top', 'side'], ['mid'], ['base']]);
  });

  it('waves keep every object after everything that references it, and an expired countdown due at two levels goes in two waves', () => {
    const expired = [
      withAnnotation(Annotations.deletionDelay, '1m'),
      withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00.000Z'),
    ];
    const owners = Array.from({ length: 3 }, (_, i) => gone(`owner-${i}`, ...expired));
    const dependents = owners.flatMap((o, i) =>
      [0, 1].map((j) =>
        gone(
          `dep-${i}-${j}`,
          ...expired,
          withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name, uid: o.metadata.uid ?? '' }),
        ),
      ),
    );
    const plan = planBundle(planInput(b, { keep }, { controlled: [...owners, ...dependents] }));
    const waves = pruneWaves(plan.prune);
    expect(waves.map((w) => w.map((a) => a.target.name).sort())).toEqual([
      dependents.map((d) => d.metadata.name).sort(),
      owners.map((o) => o.metadata.name).sort(),
    ]);
    expect(waves.flat().every((a) => a.action === 'delete' && a.afterDelay)).toBe(true);
    // The order constraint itself, checked on every pair: a referenced object's wave is later than its referrer's.
    const waveOf = new Map(waves.flatMap((w, i) => w.map((a) => [a.target.uid, i] as const)));
    const refs = dependents.flatMap((d) =>
      (d.metadata.ownerReferences ?? []).filter((r) => waveOf.has(r.uid)).map((r) => [d.metadata.uid, r.uid] as const),
    );
    expect(refs).toHaveLength(dependents.length);
    for (const [from, to] of refs) expect(waveOf.get(to)).toBeGreaterThan(waveOf.get(from) ?? Infinity);
  });

  it('a cycle among pruned objects still gives each a wave, in the order the deletion order breaks it', () => {
    const a = gone('a', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'c-uid' }));
    const bb = gone('bb', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'a-uid' }));
    const c = gone('c', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'bb', uid: 'bb-uid' }));
    const plan = planBundle(planInput(b, { keep }, { controlled: [a, bb, c] }));
    const order = plan.prune.map((x) => x.target.name);
    const waves = pruneWaves(plan.prune).map((w) => w.map((x) => x.target.name));
    expect(waves.flat()).toEqual(order);
    expect(waves).toHaveLength(3);
  });

  it('without waves (a plan made elsewhere) every writing action goes alone, in plan order', () => {
    const plan = planBundle(planInput(b, { keep }, { controlled: [gone('x'), gone('y')] }));
    const unwaved = plan.prune.map(({ wave: _wave, ...rest }) => rest);
    expect(pruneWaves(unwaved).map((w) => w.map((a) => a.target.name))).toEqual([['x'], ['y']]);
  });

  const failing = {
    error: bundle(
      'b',
      withResource(
        resource('keep', configMap('keep', withData({ x: '!{x}' })), withRef('dep', { name: 'x', path: 'data.x' })),
        resource('dep', configMap('dep')),
      ),
    ),
    conflict: bundle('b', withResource(resource('keep', configMap('keep')))),
    readiness: bundle('b', withResource(resource('keep', deployment('keep')))),
  };
  it.each<[string, TestBundle, () => Record<string, LiveObject>]>([
    ['a resource in error', failing.error, () => ({ dep: appliedLive(failing.error, 'dep', {}, controlledByBundle()) })],
    ['a resource in conflict', failing.conflict, () => ({ keep: live(configMap('keep'), controlledBy('ReplicaSet', 'rs')) })],
    [
      'a resource whose readiness failed',
      failing.readiness,
      () => ({
        keep: appliedLive(
          failing.readiness,
          'keep',
          {},
          controlledByBundle(),
          withConditions({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }),
        ),
      }),
    ],
  ])('withholds prune actions when %s', (_name, tb, liveMap) => {
    const reason = 'not pruning while resources are failing: keep';
    const marked = gone('marked', withAnnotation(Annotations.deletionDelay, '1h'));
    const waiting = gone(
      'waiting',
      withAnnotation(Annotations.deletionDelay, '1h'),
      withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:30:00.000Z'),
    );
    const plan = planBundle(planInput(tb, liveMap(), { controlled: [gone('old'), marked, waiting] }));
    expect(plan.withheld.map((w) => [w.action.action, w.action.target.name, w.reason])).toEqual([
      ['delete', 'old', reason],
      ['mark', 'marked', reason],
    ]);
    // A running countdown writes nothing, so it stays, and still sets the requeue.
    expect(plan.prune.map((a) => a.action)).toEqual(['wait']);
    expect(plan.requeueAfterMs).toBe(HOUR / 2);
  });

  it('prunes while resources are merely in progress', () => {
    const tb = bundle('b', withResource(resource('keep', configMap('keep')), resource('app', configMap('app'), withRef('keep'))));
    const plan = planBundle(planInput(tb, {}, { controlled: [gone('old')] }));
    expect(actions(plan)).toEqual(['keep:apply', 'app:blocked']);
    expect(plan.prune.map((a) => a.action)).toEqual(['delete']);
  });

  it('withholdPrunes moves writing actions only', () => {
    const plan = planBundle(
      planInput(
        b,
        { keep },
        {
          controlled: [
            gone('old'),
            gone(
              'w',
              withAnnotation(Annotations.deletionDelay, '1h'),
              withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:30:00.000Z'),
            ),
          ],
        },
      ),
    );
    const held = withholdPrunes(plan, 'apply of keep failed');
    expect(held.prune.map((a) => a.action)).toEqual(['wait']);
    expect(held.withheld).toEqual([{ action: plan.prune[0], reason: 'apply of keep failed' }]);
  });

  it('withholdAfterFailedApplies: one wording for the controller, diff and status; nothing failed, nothing held', () => {
    const plan = planBundle(planInput(b, { keep }, { controlled: [gone('old')] }));
    expect(withholdAfterFailedApplies(plan, [])).toBe(plan);
    expect(withholdAfterFailedApplies(plan, ['keep', 'app']).withheld).toEqual([
      { action: plan.prune[0], reason: 'not pruning: keep, app could not be applied' },
    ]);
  });
});

describe('planBundle: take-holds come before the wait for references (issue 9)', () => {
  const created =
    (ts: string): Mod<TestBundle> =>
    (tb) => {
      tb.meta.creationTimestamp = ts;
    };
  const self = { name: 'b', uid: BUNDLE_UID, creationTimestamp: '2026-01-02T00:00:00Z' };
  const claimsOf = (...list: { name: string; uid: string; creationTimestamp?: string }[]) => new Map([['/ConfigMap/ns1/app', list]]);
  // app depends on db; db is not ready (just created), so app is blocked.
  const gated = bundle(
    'b',
    created(self.creationTimestamp),
    withResource(resource('db', deployment('db')), resource('app', configMap('app'), withRef('db'))),
  );
  const stamped = [
    withAnnotation(Annotations.deletionDelay, '1h'),
    withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:30:00.000Z'),
  ];
  const released = (...mods: Mod<Obj>[]): Obj =>
    live(
      configMap('app'),
      withUid('app-uid'),
      withResourceVersion('5'),
      (o) => (o.metadata.labels = { [Labels.formerBundle]: 'b' }),
      ...stamped,
      ...mods,
    );

  it.each<[string, TestBundle, () => Obj, 'cancel' | 'adopt' | 'hand-over', string[]]>([
    [
      'a released object behind a not-Ready dependency is adopted and its countdown cancelled',
      gated,
      () => released(),
      'adopt',
      ['DeletionCancelled', 'Adopted'],
    ],
    [
      'our own counting-down object behind a not-Ready dependency is cancelled',
      gated,
      () => live(configMap('app'), controlledByBundle(), ...stamped),
      'cancel',
      ['DeletionCancelled'],
    ],
    [
      'an object counting down in another Bundle that dropped it is handed over',
      gated,
      () => live(configMap('app'), controlledByBundle('b1-uid', 'b1'), ...stamped),
      'hand-over',
      ['DeletionCancelled', 'HandedOver'],
    ],
  ])('%s', (_name, tb, obj, kind, reasons) => {
    const plan = planBundle(planInput(tb, { app: obj() }, { listings: claimsOf(self) }));
    expect(byName(plan, 'app')).toMatchObject({ action: 'blocked' });
    expect(plan.takeHolds.map((c) => [c.name, c.kind])).toEqual([['app', kind]]);
    expect(plan.takeHolds[0]?.events.map((e) => e.reason)).toEqual(reasons);
    expect(plan.takeHolds[0]?.patch).toContainEqual({ op: 'remove', path: '/metadata/annotations/smith.atlassian.com~1deletionTimestamp' });
  });

  it('claims even when another resource makes the spec invalid (and nothing else is written)', () => {
    const invalid = bundle(
      'b',
      created(self.creationTimestamp),
      withResource(resource('app', configMap('app')), resource('bad', configMap('bad'), withRef('nowhere'))),
    );
    const plan = planBundle(planInput(invalid, { app: released() }, { listings: claimsOf(self) }));
    expect(plan.issues.length).toBeGreaterThan(0);
    expect(plan.resources).toEqual([]);
    expect(plan.prune).toEqual([]);
    expect(plan.takeHolds.map((c) => c.kind)).toEqual(['adopt']);
  });

  it("the claim patch is guarded, drops the label and the stamp, and keeps only the user's references", () => {
    const user = { apiVersion: 'example.com/v1', kind: 'Owner', name: 'mine', uid: 'mine-uid' };
    const obj = live(
      configMap('app'),
      withUid('app-uid'),
      withResourceVersion('5'),
      controlledByBundle('b1-uid', 'b1'),
      withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', uid: 'cfg-uid', blockOwnerDeletion: true }),
      withOwner(user),
      withAnnotation(Annotations.dependencyReferences, 'cfg-uid'),
      ...stamped,
    );
    const plan = planBundle(planInput(gated, { app: obj }, { listings: claimsOf(self) }));
    expect(plan.takeHolds[0]).toMatchObject({
      kind: 'hand-over',
      from: { name: 'b1', uid: 'b1-uid', event: { reason: EventReasons.HandedOver } },
    });
    expect(plan.takeHolds[0]?.patch).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'app-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'remove', path: '/metadata/annotations/smith.atlassian.com~1deletionTimestamp' },
      {
        op: 'add',
        path: '/metadata/ownerReferences',
        value: [
          { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'b', uid: BUNDLE_UID, controller: true, blockOwnerDeletion: true },
          user,
        ],
      },
      { op: 'remove', path: '/metadata/annotations/smith.atlassian.com~1dependencyReferences' },
    ]);
  });

  it.each<[string, () => Obj, { name: string; uid: string; creationTimestamp?: string }[], string, string[]]>([
    [
      'an older Bundle also lists a released object',
      () => released(),
      [{ name: 'b0', uid: 'b0-uid', creationTimestamp: '2026-01-01T00:00:00Z' }, self],
      'also listed by Bundle b0',
      [],
    ],
    // Still controlled by a Bundle (until b0 takes it): our claim reference keeps it should that Bundle go in the foreground first.
    [
      'an older Bundle also lists an object its Bundle dropped',
      () => live(configMap('app'), controlledByBundle('b1-uid', 'b1'), ...stamped),
      [{ name: 'b0', uid: 'b0-uid', creationTimestamp: '2026-01-01T00:00:00Z' }, self],
      'also listed by Bundle b0',
      ['reference'],
    ],
  ])('Conflict, and no taking claim, when %s', (_name, obj, claims, message, claimKinds) => {
    const tb = bundle('b', created(self.creationTimestamp), withResource(resource('app', configMap('app'))));
    const plan = planBundle(planInput(tb, { app: obj() }, { listings: claimsOf(...claims) }));
    expect(plan.takeHolds.map((c) => c.kind)).toEqual(claimKinds);
    expect(byName(plan, 'app')).toMatchObject({ action: 'conflict' });
    expect((byName(plan, 'app') as { message: string }).message).toContain(message);
  });

  it('Conflict with a Bundle that still lists it: the claim is recorded as a non-controller reference, guarded', () => {
    const tb = bundle('b', created(self.creationTimestamp), withResource(resource('app', configMap('app'))));
    const obj = live(configMap('app'), withUid('app-uid'), withResourceVersion('5'), controlledByBundle('b1-uid', 'b1'));
    const refs = obj.metadata.ownerReferences;
    const plan = planBundle(
      planInput(tb, { app: obj }, { listings: claimsOf({ name: 'b1', uid: 'b1-uid', creationTimestamp: '2026-01-01T00:00:00Z' }, self) }),
    );
    expect(byName(plan, 'app')).toMatchObject({ action: 'conflict' });
    expect((byName(plan, 'app') as { message: string }).message).toContain('controlled by Bundle b1');
    expect(plan.takeHolds.map((c) => [c.name, c.kind, c.events])).toEqual([['app', 'reference', []]]);
    expect(plan.takeHolds[0]?.patch).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'app-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'test', path: '/metadata/ownerReferences', value: refs },
      {
        op: 'add',
        path: '/metadata/ownerReferences',
        value: [
          ...(refs ?? []),
          {
            apiVersion: 'smith.atlassian.com/v1',
            kind: 'Bundle',
            name: 'b',
            uid: BUNDLE_UID,
            controller: false,
            blockOwnerDeletion: false,
          },
        ],
      },
      // Recorded with the claim, in the same patch.
      ...(obj.metadata.annotations === undefined ? [{ op: 'add', path: '/metadata/annotations', value: {} }] : []),
      { op: 'add', path: '/metadata/annotations/smith.atlassian.com~1claimReferences', value: BUNDLE_UID },
    ]);
  });

  it.each<[string, () => Obj]>([
    [
      'the claim reference is already there',
      () =>
        live(
          configMap('app'),
          controlledByBundle('b1-uid', 'b1'),
          withOwner({
            apiVersion: 'smith.atlassian.com/v1',
            kind: 'Bundle',
            name: 'b',
            uid: BUNDLE_UID,
            controller: false,
            blockOwnerDeletion: false,
          }),
        ),
    ],
    ['the controller is not a Bundle', () => live(configMap('app'), controlledBy('ReplicaSet', 'rs'))],
    ['the object has no controller (an older Bundle lists it)', () => live(configMap('app'))],
  ])('no claim reference when %s', (_name, obj) => {
    const tb = bundle('b', created(self.creationTimestamp), withResource(resource('app', configMap('app'))));
    const plan = planBundle(
      planInput(tb, { app: obj() }, { listings: claimsOf({ name: 'b1', uid: 'b1-uid', creationTimestamp: '2026-01-01T00:00:00Z' }, self) }),
    );
    expect(byName(plan, 'app')).toMatchObject({ action: 'conflict' });
    expect(plan.takeHolds).toEqual([]);
  });

  it('taking over an object replaces our own claim reference with the controller reference (never two references with one uid)', () => {
    const claimRef = {
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      name: 'b',
      uid: BUNDLE_UID,
      controller: false,
      blockOwnerDeletion: false,
    };
    const obj = live(
      configMap('app'),
      withUid('app-uid'),
      withResourceVersion('5'),
      controlledByBundle('b1-uid', 'b1'),
      withOwner(claimRef),
      ...stamped,
    );
    const plan = planBundle(planInput(gated, { app: obj }, { listings: claimsOf(self) }));
    expect(plan.takeHolds[0]?.kind).toBe('hand-over');
    const add = plan.takeHolds[0]?.patch.find((op) => op.op === 'add' && op.path === '/metadata/ownerReferences');
    expect(add).toEqual({
      op: 'add',
      path: '/metadata/ownerReferences',
      value: [
        { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'b', uid: BUNDLE_UID, controller: true, blockOwnerDeletion: true },
      ],
    });
  });

  it('a claim on an object the Bundle no longer lists is withdrawn (a valid spec only)', () => {
    const claimRef = {
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      name: 'b',
      uid: BUNDLE_UID,
      controller: false,
      blockOwnerDeletion: false,
    };
    const recorded = withAnnotation(Annotations.claimReferences, BUNDLE_UID);
    const gone = live(configMap('gone'), controlledByBundle('b1-uid', 'b1'), withOwner(claimRef), recorded);
    const still = live(configMap('app'), controlledByBundle('b1-uid', 'b1'), withOwner(claimRef), recorded);
    const tb = bundle('b', created(self.creationTimestamp), withResource(resource('app', configMap('app'))));
    const plan = planBundle(
      planInput(
        tb,
        { app: still },
        { listings: claimsOf({ name: 'b1', uid: 'b1-uid', creationTimestamp: '2026-01-01T00:00:00Z' }, self), claimed: [gone, still] },
      ),
    );
    expect(plan.withdrawals.map((w) => w.target.name)).toEqual(['gone']);
    expect(plan.withdrawals[0]?.patch).toEqual([
      { op: 'test', path: '/metadata/ownerReferences', value: gone.metadata.ownerReferences },
      { op: 'replace', path: '/metadata/ownerReferences', value: [gone.metadata.ownerReferences?.[0]] },
      { op: 'remove', path: '/metadata/annotations/smith.atlassian.com~1claimReferences' },
    ]);
    const invalid = bundle('b', created(self.creationTimestamp), withResource(resource('app', configMap('app'), withRef('missing'))));
    expect(planBundle(planInput(invalid, { app: still }, { claimed: [gone] })).withdrawals).toEqual([]);
  });

  it('an uncontrolled object with no countdown is adopted by the apply, after the gate', () => {
    const plan = planBundle(planInput(gated, { app: live(configMap('app')) }, { listings: claimsOf(self) }));
    expect(plan.takeHolds).toEqual([]);
    expect(byName(plan, 'app')).toMatchObject({ action: 'blocked' });
  });
});

describe('planBundle: what another live Bundle lists is never pruned (issue 9)', () => {
  const b = bundle('b', withResource(resource('keep', configMap('keep'))));
  const keep = appliedLive(b, 'keep', {}, controlledByBundle());
  const moved = (...mods: Mod<Obj>[]): Obj =>
    live(configMap('moved'), controlledByBundle(), withUid('moved-uid'), withResourceVersion('9'), ...mods);
  const other = new Map([['/ConfigMap/ns1/moved', [{ name: 'b2', uid: 'b2-uid' }]]]);

  it.each<[string, Mod<Obj>[]]>([
    ['no delay', []],
    ['a countdown to start', [withAnnotation(Annotations.deletionDelay, '8s')]],
    [
      'an expired countdown',
      [withAnnotation(Annotations.deletionDelay, '8s'), withAnnotation(Annotations.deletionTimestamp, '2025-12-31T00:00:00.000Z')],
    ],
  ])('%s -> listed-elsewhere', (_name, mods) => {
    const plan = planBundle(planInput(b, { keep }, { controlled: [keep, moved(...mods)], listings: other }));
    expect(plan.prune).toMatchObject([{ action: 'listed-elsewhere', by: { name: 'b2' }, target: { name: 'moved' } }]);
  });

  it('keepListedElsewhere turns deletes and marks decided earlier into listed-elsewhere, and leaves the rest', () => {
    const plan = planBundle(planInput(b, { keep }, { controlled: [keep, moved(), live(configMap('gone'), controlledByBundle())] }));
    expect(plan.prune.map((a) => a.action)).toEqual(['delete', 'delete']);
    const kept = keepListedElsewhere(plan, other);
    expect(kept.prune.map((a) => `${a.target.name}:${a.action}`)).toEqual(['moved:listed-elsewhere', 'gone:delete']);
    // Its own claim is not someone else's.
    expect(
      keepListedElsewhere(plan, new Map([['/ConfigMap/ns1/moved', [{ name: 'b', uid: BUNDLE_UID }]]])).prune.map((a) => a.action),
    ).toEqual(['delete', 'delete']);
  });
});

describe("withAppliedReadiness: readiness from the apply's answer", () => {
  const b = bundle(
    'b',
    withResource(resource('c', configMap('c', withData({ k: 'v' }))), resource('d', deployment('d', withSpec({ replicas: 1 })))),
  );
  const plan = planBundle(planInput(b, {}));
  const state = (p: BundlePlan, name: string) => {
    const r = byName(p, name);
    return r && 'readiness' in r ? r.readiness.state : r?.action;
  };

  it('a created ConfigMap is ready as the server answered it; a Deployment the server has not rolled out yet stays in progress', () => {
    expect([state(plan, 'c'), state(plan, 'd')]).toEqual(['in-progress', 'in-progress']);
    const answered = new Map([
      ['c', live(configMap('c', withData({ k: 'v' })))],
      ['d', live(deployment('d', withSpec({ replicas: 1 })), withGeneration(1), withStatus({ observedGeneration: 0 }))],
    ]);
    const after = withAppliedReadiness(plan, answered, new Map());
    expect([state(after, 'c'), state(after, 'd')]).toEqual(['ready', 'in-progress']);
  });

  it('a resource whose apply did not go through keeps its planned readiness', () => {
    const after = withAppliedReadiness(plan, new Map([['c', live(configMap('c'))]]), new Map());
    expect([state(after, 'c'), state(after, 'd')]).toEqual(['ready', 'in-progress']);
    expect(withAppliedReadiness(plan, new Map(), new Map())).toBe(plan);
  });
});

describe('deleteWhen BundleReady: the gate opens on the stored Ready only while every resource reads ready this pass (red team 10)', () => {
  const b = bundle('b', withResource(resource('app', deployment('app'))));
  const gated = live(
    configMap('old'),
    controlledByBundle(),
    withUid('old-uid'),
    withAnnotation(Annotations.deleteWhen, 'BundleReady'),
    withAnnotation(Annotations.deletionDelay, '0s'),
    withAnnotation(Annotations.deletionTimestamp, '2025-12-31T00:00:00.000Z'),
  );
  const app = (status: Record<string, unknown>): Obj =>
    appliedLive(b, 'app', {}, controlledByBundle(), withUid('app-uid'), withStatus(status));
  const prune = (appLive: Obj) =>
    planBundle(planInput(b, { app: appLive }, { controlled: [appLive, gated], bundleReady: true })).prune.find(
      (a) => a.target.name === 'old',
    );

  it('the stored status says Ready (written by another tool) but the Deployment is not rolled out: the gate stays closed', () => {
    expect(prune(app({ replicas: 1, updatedReplicas: 0, availableReplicas: 0 }))).toMatchObject({
      action: 'await',
      waitingFor: 'BundleReady',
    });
  });
  it('the stored Ready and every resource ready: deleted', () => {
    expect(prune(app({ replicas: 1, updatedReplicas: 1, availableReplicas: 1 }))).toMatchObject({ action: 'delete' });
  });
});

describe('deleteWhen BundleReady: the stored part of the gate is the count of ready resources at the current generation', () => {
  const stored = (status: Record<string, unknown>): BundleToPlan => ({
    metadata: { name: 'b', namespace: 'ns', uid: 'b-uid', generation: 4 },
    spec: { resources: [] },
    status: { observedGeneration: 4, ...status },
  });
  const readyCondition = (status: 'True' | 'False', reason: string) => [
    { type: 'Ready', status, reason, lastTransitionTime: '2026-01-01T00:00:00Z' },
  ];

  it('every resource ready, the Bundle not Ready because a prune was refused: open (else the refused delete closes its own gate and a loop follows)', () => {
    expect(isReadyWithCurrentSpec(stored({ resourcesReady: '2/2', conditions: readyCondition('False', Reasons.Forbidden) }))).toBe(true);
  });
  it('a resource not ready: closed, whatever Ready says', () => {
    expect(isReadyWithCurrentSpec(stored({ resourcesReady: '1/2', conditions: readyCondition('True', Reasons.AllResourcesReady) }))).toBe(
      false,
    );
  });
  it('counted at an older generation: closed', () => {
    expect(isReadyWithCurrentSpec(stored({ observedGeneration: 3, resourcesReady: '2/2' }))).toBe(false);
  });
  it('edge counts: none listed is all ready; more ready than listed or a malformed count reads as not counted', () => {
    expect(isReadyWithCurrentSpec(stored({ resourcesReady: '0/0' }))).toBe(true);
    expect(isReadyWithCurrentSpec(stored({ resourcesReady: '3/2' }))).toBe(false);
    expect(isReadyWithCurrentSpec(stored({ resourcesReady: 'all', conditions: readyCondition('False', Reasons.Forbidden) }))).toBe(false);
    expect(isReadyWithCurrentSpec(stored({ resourcesReady: 'all', conditions: readyCondition('True', Reasons.AllResourcesReady) }))).toBe(
      true,
    );
  });
  it('no generation: closed', () => {
    const b = stored({ resourcesReady: '2/2' });
    expect(isReadyWithCurrentSpec({ ...b, metadata: { ...b.metadata, generation: undefined } })).toBe(false);
  });
  it('a status without the count (written by an older version): Ready True opens it, as before', () => {
    expect(isReadyWithCurrentSpec(stored({ conditions: readyCondition('True', Reasons.AllResourcesReady) }))).toBe(true);
    expect(isReadyWithCurrentSpec(stored({ conditions: readyCondition('False', Reasons.Forbidden) }))).toBe(false);
  });
});
