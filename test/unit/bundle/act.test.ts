/**
 * Step tests of the Bundle controller's act phase and finalizer over a fake
 * of their API port (fake-bundle-api.ts): plan with core/bundle, carry out
 * with actOnPlan / finalizeBundle, then assert the calls made, the objects
 * left and the outcome. No API server: the port is the boundary.
 */
import { describe, expect, it } from '@jest/globals';
import { BundleSchema, type Bundle } from '../../../src/api/bundle.js';
import {
  API_VERSION,
  Annotations,
  ApplySetAnnotations,
  ApplySetLabels,
  BUNDLE_KIND,
  BundleConditionTypes,
  Finalizers,
  Labels,
  Reasons,
} from '../../../src/api/names.js';
import { applySetId } from '../../../src/core/bundle/applyset.js';
import { applySetParentMetadata } from '../../../src/core/bundle/applyset-parent.js';
import { actOnPlan, type ActResult } from '../../../src/controllers/bundle/act.js';
import { finalizeBundle } from '../../../src/controllers/bundle/finalize.js';
import { finishPass } from '../../../src/controllers/bundle/pass-report.js';
import { planBundle, type BundlePlan } from '../../../src/core/bundle/plan.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { KubeObject, ResourceType } from '../../../src/kube/types.js';
import { silentLogger } from '../../../src/observability/logger.js';
import {
  BUNDLE_UID,
  NAMESPACE,
  NOW,
  bundle,
  configMap,
  controlledByBundle,
  live,
  planInput,
  resource,
  withAnnotation,
  withData,
  withResource,
  withOwner,
  withResourceVersion,
  withUid,
  type Mod,
  type Obj,
  type TestBundle,
} from './builders.js';
import { CONFIGMAPS, FakeBundleApi, RecordingEvents } from './fake-bundle-api.js';
import { releaseSigner } from '../../../src/core/softdelete/provenance.js';

const HOUR = 3_600_000;
const TYPES = new Map<string, ResourceType>([['v1/ConfigMap', CONFIGMAPS]]);
const serverTime = { lowerBound: (): number => NOW, upperBound: (): number => NOW };
const clock = { now: (): number => NOW };

/** The stored Bundle for a test Bundle, parsed as the controller has it. */
function storedBundle(b: TestBundle, extra: Partial<Bundle['metadata']> = {}): Bundle {
  return BundleSchema.parse({
    apiVersion: API_VERSION,
    kind: BUNDLE_KIND,
    metadata: {
      name: b.meta.name,
      namespace: NAMESPACE,
      uid: BUNDLE_UID,
      generation: b.meta.generation,
      resourceVersion: '10',
      finalizers: [Finalizers.deleteResources],
      ...extra,
    },
    spec: b.spec,
  });
}

interface Setup {
  api: FakeBundleApi;
  events: RecordingEvents;
  bundle: Bundle;
  plan: BundlePlan;
}

/** Plans `b` over `cached` (what the cache shows, by resource name, plus controlled objects) and stores `stored` in the fake (what the server has). */
function setup(b: TestBundle, cached: Record<string, Obj>, controlled: Obj[], stored: Obj[]): Setup {
  const api = new FakeBundleApi();
  const stored_ = storedBundle(b);
  api.put(stored_);
  for (const o of stored) api.put(o);
  const input = planInput(b, cached, { controlled, stampAt: NOW });
  return { api, events: new RecordingEvents(), bundle: stored_, plan: planBundle(input) };
}

async function act(s: Setup): Promise<ActResult> {
  return actOnPlan({ api: s.api, events: s.events, serverTime, log: silentLogger(), applyConcurrency: 2 }, s.bundle, s.plan, TYPES);
}

const ours = (o: Obj, ...mods: Mod<Obj>[]): Obj => live(o, controlledByBundle(), ...mods);
const delayed = withAnnotation(Annotations.deletionDelay, '1h');
const stampedAt = (ms: number): Mod<Obj> => withAnnotation(Annotations.deletionTimestamp, new Date(ms).toISOString());

describe('act phase: claims before applies', () => {
  it('a claim that fails its test is not followed by an apply of that resource; the others are applied', async () => {
    const b = bundle(
      'b',
      withResource(resource('a', configMap('a', withData({ k: 'v' }))), resource('c', configMap('c', withData({ k: 'v' })))),
    );
    // The cache shows "a" counting down (so the pass claims it back); the server has it changed since (another resourceVersion).
    const cachedA = ours(configMap('a'), delayed, stampedAt(NOW - 10_000), withResourceVersion('5'));
    const s = setup(b, { a: cachedA }, [cachedA], [{ ...cachedA, metadata: { ...cachedA.metadata, resourceVersion: '6' } }]);
    expect(s.plan.takeHolds.map((c) => [c.name, c.kind])).toEqual([['a', 'cancel']]);

    const result = await act(s);

    expect(s.api.log()).toContain('patch ConfigMap ns1/a');
    expect(s.api.log()).not.toContain('apply ConfigMap ns1/a');
    expect(s.api.log()).toContain('apply ConfigMap ns1/c');
    expect(result.kind).toBe('acted');
    if (result.kind !== 'acted') return;
    expect(result.outcome.applyFailures.get('a')).toEqual({
      message: 'ConfigMap a changed while being claimed; retrying',
      terminal: false,
    });
    // The stamp the claim was to remove is still there: nothing wrote over the changed object.
    expect(s.api.find('ConfigMap', 'a')?.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
  });

  it('writes nothing when the fresh Bundle is another incarnation (deleted and created again under the same name)', async () => {
    const b = bundle('b', withResource(resource('a', configMap('a'))));
    const s = setup(b, {}, [], []);
    s.api.put({ ...storedBundle(b), metadata: { ...storedBundle(b).metadata, uid: 'new-incarnation' } });

    const result = await act(s);

    expect(result.kind).toBe('stale-bundle');
    expect(s.api.log()).toEqual(['get Bundle ns1/b']);
  });
});

describe('act phase: kinds recorded before objects of them are written (softdelete fuzz seed 728)', () => {
  it('stores the new kind in status.managedKinds first, then claims and applies', async () => {
    const b = bundle('b', withResource(resource('a', configMap('a'))));
    const s = setup(b, {}, [], []);

    const result = await act(s);

    expect(result.kind).toBe('acted');
    // The ApplySet parent metadata covers the kind too before the first object of it carries the part-of label.
    expect(s.api.log()).toEqual(['get Bundle ns1/b', 'status Bundle ns1/b', 'apply Bundle ns1/b', 'apply ConfigMap ns1/a']);
    expect((s.api.find('Bundle', 'b')?.['status'] as { managedKinds?: string[] } | undefined)?.managedKinds).toEqual(['ConfigMap']);
    expect(s.api.find('Bundle', 'b')?.metadata.annotations?.[ApplySetAnnotations.containsGroupKinds]).toBe('ConfigMap');
    expect(s.api.find('Bundle', 'b')?.metadata.labels?.[ApplySetLabels.id]).toBe(applySetId('b', NAMESPACE));
  });

  it('writes no object when the ApplySet parent metadata loses to a newer Bundle', async () => {
    const b = bundle('b', withResource(resource('a', configMap('a'))));
    const s = setup(b, {}, [], []);
    s.api.failNext('apply', new KubeApiError(409, 'Conflict', 'the object has been modified', 'PATCH', 'b'), 'Bundle ns1/b');

    const result = await act(s);

    expect(result.kind).toBe('not-recorded');
    expect(s.api.log()).toEqual(['get Bundle ns1/b', 'status Bundle ns1/b', 'apply Bundle ns1/b']);
  });

  it('writes no object when recording the kind loses to a newer Bundle', async () => {
    const b = bundle('b', withResource(resource('a', configMap('a'))));
    const s = setup(b, {}, [], []);
    s.api.failNext('status', new KubeApiError(409, 'Conflict', 'the object has been modified', 'PUT', 'b'));

    const result = await act(s);

    expect(result.kind).toBe('not-recorded');
    expect(s.api.log()).toEqual(['get Bundle ns1/b', 'status Bundle ns1/b']);
  });

  it('writes no status when every kind is recorded already', async () => {
    const b = bundle('b', withResource(resource('a', configMap('a'))));
    const s = setup(b, {}, [], []);
    const stored = s.api.find('Bundle', 'b');
    const parent = applySetParentMetadata({ name: 'b', namespace: NAMESPACE }, ['ConfigMap']);
    if (stored) s.api.put({ ...stored, metadata: { ...stored.metadata, ...parent }, status: { managedKinds: ['v1/ConfigMap'] } });

    await act(s);

    // Nor the ApplySet parent metadata, which it carries already.
    expect(s.api.log()).toEqual(['get Bundle ns1/b', 'apply ConfigMap ns1/a']);
  });
});

describe('act phase: countdowns recorded before they are stamped (red team 9)', () => {
  const b = bundle('b', withResource(resource('keep', configMap('keep'))));
  const keep = ours(configMap('keep'), withResourceVersion('3'));
  const recordedKinds = (s: Setup): void => {
    const stored = s.api.find('Bundle', 'b');
    if (stored) s.api.put({ ...stored, status: { managedKinds: ['ConfigMap'] } });
  };

  it("stores the new countdown in status.pendingDeletions first, then stamps the object; the pass's status goes over that write", async () => {
    const stamping = ours(configMap('stamping'), delayed, withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, stamping], [keep, stamping]);
    recordedKinds(s);

    const result = await act(s);

    expect(result.kind).toBe('acted');
    const writes = s.api.log().filter((c) => c.startsWith('status') || c.startsWith('patch'));
    expect(writes).toEqual(['status Bundle ns1/b', 'patch ConfigMap ns1/stamping']);
    const pending = (
      s.api.find('Bundle', 'b')?.['status'] as
        { pendingDeletions?: { name: string; deletionTimestamp: string; deleteAfter: string }[] } | undefined
    )?.pendingDeletions;
    expect(pending).toEqual([
      expect.objectContaining({
        name: 'stamping',
        deletionTimestamp: new Date(NOW).toISOString(),
        deleteAfter: new Date(NOW + HOUR).toISOString(),
      }),
    ]);
    if (result.kind !== 'acted') return;
    expect(result.outcome.recorded?.metadata.resourceVersion).toBe(s.api.find('Bundle', 'b')?.metadata.resourceVersion);
  });

  it('stamps nothing when recording the countdown loses to a newer Bundle', async () => {
    const stamping = ours(configMap('stamping'), delayed, withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, stamping], [keep, stamping]);
    recordedKinds(s);
    s.api.failNext('status', new KubeApiError(409, 'Conflict', 'the object has been modified', 'PUT', 'b'));

    const result = await act(s);

    expect(result.kind).toBe('not-recorded');
    expect(s.api.log().filter((c) => c.startsWith('patch') || c.startsWith('delete'))).toEqual([]);
  });

  it('writes no status first when the record already holds the countdown', async () => {
    const expired = ours(configMap('expired'), delayed, stampedAt(NOW - 2 * HOUR), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, expired], [keep, expired]);
    recordedKinds(s);

    await act(s);

    expect(s.api.log().filter((c) => c.startsWith('status'))).toEqual([]);
  });
});

describe('act phase: prunes', () => {
  const b = bundle('b', withResource(resource('keep', configMap('keep'))));
  const keep = ours(configMap('keep'), withResourceVersion('3'));

  it('a failed apply withholds every prune (no delete, no stamp, no Bundle list)', async () => {
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const stamping = ours(configMap('stamping'), delayed, withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, gone, stamping], [keep, gone, stamping]);
    expect(s.plan.prune.map((a) => a.action)).toEqual(expect.arrayContaining(['delete', 'mark']));
    s.api.failNext('apply', new KubeApiError(500, 'InternalError', 'etcd unavailable', 'PATCH', 'keep'), 'ConfigMap ns1/keep');

    const result = await act(s);

    expect(s.api.callsOf('delete')).toEqual([]);
    expect(s.api.log().filter((c) => c.startsWith('patch') || c.startsWith('list'))).toEqual([]);
    if (result.kind !== 'acted') throw new Error(result.kind);
    expect(result.plan.prune.filter((a) => a.action === 'delete' || a.action === 'mark')).toEqual([]);
    expect(result.plan.withheld.map((w) => w.action.target.name).sort()).toEqual(['gone', 'stamping']);
  });

  it('due objects at two levels: every dependent is deleted (fresh read, uid, resourceVersion) before any object it references, and one summary Event says them all', async () => {
    const owners = Array.from({ length: 3 }, (_, i) =>
      ours(configMap(`owner-${i}`), delayed, stampedAt(NOW - 2 * HOUR), withResourceVersion('4')),
    );
    const dependents = owners.flatMap((o, i) =>
      [0, 1].map((j) =>
        ours(
          configMap(`dep-${i}-${j}`),
          delayed,
          stampedAt(NOW - 2 * HOUR),
          withResourceVersion('4'),
          withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name, uid: o.metadata.uid ?? '' }),
        ),
      ),
    );
    const s = setup(b, { keep }, [keep, ...owners, ...dependents], [keep, ...owners, ...dependents]);

    await actOnPlan(
      { api: s.api, events: s.events, serverTime, log: silentLogger(), applyConcurrency: 2, pruneConcurrency: 4 },
      s.bundle,
      s.plan,
      TYPES,
    );

    const deletes = s.api.callsOf('delete').map((c) => c.what.replace('ConfigMap ns1/', ''));
    expect(deletes).toHaveLength(9);
    const lastDependent = Math.max(...dependents.map((d) => deletes.indexOf(d.metadata.name)));
    const firstOwner = Math.min(...owners.map((o) => deletes.indexOf(o.metadata.name)));
    expect(lastDependent).toBeLessThan(firstOwner);
    // Each delete is decided again on its own fresh read first, with its uid.
    expect(s.api.callsOf('get').filter((c) => c.what !== 'Bundle ns1/b')).toHaveLength(9);
    for (const c of s.api.callsOf('delete')) expect(c.detail).toMatchObject({ uid: `${c.what.replace('ConfigMap ns1/', '')}-uid` });
    expect(s.events.events.filter((e) => e.reason === 'DeletedAfterDelay')).toEqual([
      {
        type: 'Normal',
        target: 'b',
        reason: 'DeletedAfterDelay',
        message: expect.stringMatching(/^deleted 9 objects whose deletion delay ended \(ConfigMap: 9\): e\.g\. /) as unknown as string,
      },
    ]);
  });

  it('many expired countdowns of one kind: one fresh LIST reads them (metadata, managed label), each is decided again on it and deleted at the listed resourceVersion; a change the list shows keeps that one; one the list misses gets its own GET', async () => {
    const labelled: Mod<Obj> = (o) => {
      o.metadata.labels = { ...o.metadata.labels, [Labels.managed]: 'true' };
    };
    const expired = Array.from({ length: 12 }, (_, i) =>
      ours(configMap(`exp-${String(i).padStart(2, '0')}`), delayed, stampedAt(NOW - 2 * HOUR), withResourceVersion('4'), labelled),
    );
    // On the server: exp-03 was stamped again since the cache saw it (a new countdown), exp-07 lost its label, and every object has a newer resourceVersion.
    const stored = expired.map((o) => {
      const copy = structuredClone(o);
      copy.metadata.resourceVersion = '9';
      if (o.metadata.name === 'exp-03')
        copy.metadata.annotations = { ...copy.metadata.annotations, [Annotations.deletionTimestamp]: new Date(NOW).toISOString() };
      if (o.metadata.name === 'exp-07') copy.metadata.labels = {};
      return copy;
    });
    const s = setup(b, { keep }, [keep, ...expired], [keep, ...stored]);

    await act(s);

    expect(s.api.callsOf('list').filter((c) => c.what === 'ConfigMap ns1/*')).toEqual([
      { verb: 'list', what: 'ConfigMap ns1/*', detail: { labelSelector: `${Labels.managed}=true` } },
    ]);
    // The wave's first delete goes alone on its own GET; exp-07, missing from the list, gets one too.
    expect(
      s.api
        .callsOf('get')
        .filter((c) => c.what.startsWith('ConfigMap'))
        .map((c) => c.what),
    ).toEqual(['ConfigMap ns1/exp-00', 'ConfigMap ns1/exp-07']);
    const deleted = s.api.callsOf('delete');
    expect(deleted.map((c) => c.what).sort()).toEqual(
      expired
        .map((o) => `ConfigMap ns1/${o.metadata.name}`)
        .filter((w) => !w.endsWith('exp-03'))
        .sort(),
    );
    for (const c of deleted) expect(c.detail).toEqual({ uid: `${c.what.replace('ConfigMap ns1/', '')}-uid`, resourceVersion: '9' });
    expect(s.api.find('ConfigMap', 'exp-03')).toBeDefined();
  });

  it('a delete carries uid and the resourceVersion it was decided on', async () => {
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, gone], [keep, gone]);

    await act(s);

    expect(s.api.callsOf('delete')).toEqual([
      { verb: 'delete', what: 'ConfigMap ns1/gone', detail: { uid: 'gone-uid', resourceVersion: '4' } },
    ]);
    expect(s.api.find('ConfigMap', 'gone')).toBeUndefined();
  });

  it('an expired countdown is read fresh and deleted at the fresh resourceVersion, with its uid', async () => {
    const expired = ours(configMap('expired'), delayed, stampedAt(NOW - 2 * HOUR), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, expired], [keep, { ...expired, metadata: { ...expired.metadata, resourceVersion: '9' } }]);

    await act(s);

    expect(s.api.log().filter((c) => c.endsWith('/expired'))).toEqual(['get ConfigMap ns1/expired', 'delete ConfigMap ns1/expired']);
    expect(s.api.callsOf('delete')[0]?.detail).toEqual({ uid: 'expired-uid', resourceVersion: '9' });
  });

  it.each<[string, Mod<Obj>]>([
    ['a new UID (deleted and created again)', withUid('recreated-uid')],
    ['a new countdown stamp (the delay started again)', stampedAt(NOW - 60_000)],
  ])('an expired countdown decided on a stale cache is refused when the fresh read shows %s', async (_name, change) => {
    const expired = ours(configMap('expired'), delayed, stampedAt(NOW - 2 * HOUR), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, expired], [keep, live(structuredClone(expired), change, withResourceVersion('9'))]);

    const result = await act(s);

    expect(s.api.log()).toContain('get ConfigMap ns1/expired');
    expect(s.api.callsOf('delete')).toEqual([]);
    expect(s.api.find('ConfigMap', 'expired')).toBeDefined();
    if (result.kind !== 'acted') throw new Error(result.kind);
    expect(result.outcome.pruneFailures).toEqual([]);
  });

  it('a delete refused for a changed resourceVersion re-reads, and refuses when the object now asks for a delay', async () => {
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, gone], [keep, live(structuredClone(gone), delayed, withResourceVersion('5'))]);

    await act(s);

    expect(s.api.log().filter((c) => c.endsWith('/gone'))).toEqual(['delete ConfigMap ns1/gone', 'get ConfigMap ns1/gone']);
    expect(s.api.find('ConfigMap', 'gone')?.metadata.uid).toBe('gone-uid');
  });

  it('a delete refused for a changed resourceVersion (a status write) is tried once more at the fresh one, with the same uid', async () => {
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, gone], [keep, live(structuredClone(gone), withResourceVersion('5'))]);

    await act(s);

    expect(s.api.callsOf('delete').map((c) => c.detail)).toEqual([
      { uid: 'gone-uid', resourceVersion: '4' },
      { uid: 'gone-uid', resourceVersion: '5' },
    ]);
    expect(s.api.find('ConfigMap', 'gone')).toBeUndefined();
  });

  it('nothing is pruned when the Bundle changed since it was read (a new generation on the fresh list)', async () => {
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, gone], [keep, gone]);
    const changed = s.api.find('Bundle', 'b');
    if (changed) s.api.put({ ...changed, metadata: { ...changed.metadata, generation: 2 } });

    const result = await act(s);

    expect(result.kind).toBe('changed-before-prune');
    expect(s.api.callsOf('delete')).toEqual([]);
  });
});

describe('finalizer', () => {
  const b = bundle('b', withResource(resource('a', configMap('a'))));
  const deleting = (): Bundle => storedBundle(b, { deletionTimestamp: '2026-01-01T00:00:00Z' });

  /** One finalize pass through the pass's one exit (finishPass): its status written, its next step as the queue gets it. */
  async function finalizer(api: FakeBundleApi, stored: Bundle): Promise<unknown> {
    const events = new RecordingEvents();
    const report = await finalizeBundle({
      bundle: stored,
      live: stored as unknown as KubeObject,
      api,
      watch: () => Promise.resolve(),
      events,
      serverTime,
      clock,
      logger: silentLogger(),
      signRelease: releaseSigner(new Uint8Array(32)),
      releaseRecords: { recordSigning: () => Promise.resolve(true) },
      crdDefines: () => false,
    });
    return finishPass({ api, events, log: silentLogger(), now: clock.now }, report);
  }
  /** The Bundle as the fake has it now (the cache caught up). */
  const current = (api: FakeBundleApi): Bundle => BundleSchema.parse(api.find('Bundle', 'b'));

  it('goes only after a pass that wrote nothing; the pass that wrote says why the Bundle is still there', async () => {
    const api = new FakeBundleApi();
    api.put(deleting());
    api.put(ours(configMap('a'), withResourceVersion('4')));

    const first = await finalizer(api, deleting());

    expect(first).toEqual({ requeueAfterMs: 500 });
    expect(api.callsOf('delete')).toEqual([{ verb: 'delete', what: 'ConfigMap ns1/a', detail: { uid: 'a-uid', resourceVersion: '4' } }]);
    expect(api.find('Bundle', 'b')?.metadata.finalizers).toEqual([Finalizers.deleteResources]);
    const ready = current(api).status?.conditions?.find((c) => c.type === BundleConditionTypes.Ready);
    expect(ready).toMatchObject({
      status: 'False',
      reason: Reasons.BeingDeleted,
      message: expect.stringContaining('deleting ConfigMap a'),
    });

    const second = await finalizer(api, current(api));

    expect(second).toBe('forget');
    expect(api.find('Bundle', 'b')).toBeUndefined();
  });

  it('a failed step keeps the finalizer and sets Error with the failure', async () => {
    const api = new FakeBundleApi();
    api.put(deleting());
    api.put(ours(configMap('a'), withResourceVersion('4')));
    api.failNext('delete', new KubeApiError(403, 'Forbidden', 'configmaps "a" is forbidden', 'DELETE', 'a'));

    const result = await finalizer(api, deleting());

    expect(result).toBe('requeue');
    expect(api.find('Bundle', 'b')?.metadata.finalizers).toEqual([Finalizers.deleteResources]);
    const error = current(api).status?.conditions?.find((c) => c.type === BundleConditionTypes.Error);
    expect(error).toMatchObject({
      status: 'True',
      reason: Reasons.RetriableError,
      message: 'being deleted: delete ConfigMap a failed: configmaps "a" is forbidden',
    });
    expect(api.find('ConfigMap', 'a')?.metadata.uid).toBe('a-uid');
  });
});

describe('act phase: a Bundle identity that is refused (403)', () => {
  const forbidden = (verb: string, resource: string): KubeApiError =>
    new KubeApiError(
      403,
      'Forbidden',
      `${resource} is forbidden: User "system:serviceaccount:ns1:author" cannot ${verb} resource "${resource}" in API group "" in the namespace "ns1"`,
      verb.toUpperCase(),
      resource,
    );

  it('a forbidden apply is that resource failure with reason Forbidden, not terminal (retried with backoff), and withholds every prune', async () => {
    const b = bundle('b', withResource(resource('keep', configMap('keep'))));
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const s = setup(b, { keep: live(configMap('keep')) }, [gone], [gone]);
    s.api.failNext('apply', forbidden('patch', 'configmaps'), 'ConfigMap ns1/keep');

    const result = await act(s);

    if (result.kind !== 'acted') throw new Error(result.kind);
    expect(result.outcome.applyFailures.get('keep')).toEqual({
      message: expect.stringContaining('system:serviceaccount:ns1:author') as unknown as string,
      terminal: false,
      reason: Reasons.Forbidden,
    });
    expect(s.api.callsOf('delete')).toEqual([]);
  });

  it('a read the identity may not make: that resource is neither claimed nor applied, and nothing is pruned', async () => {
    const b = bundle('b', withResource(resource('secret', configMap('secret')), resource('other', configMap('other'))));
    const gone = ours(configMap('gone'), withResourceVersion('4'));
    const s = setup(b, {}, [gone], [gone]);
    const readFailures = new Map([['secret', { message: 'configmaps "secret" is forbidden', terminal: false, reason: Reasons.Forbidden }]]);

    const result = await actOnPlan(
      { api: s.api, readFailures, events: s.events, serverTime, log: silentLogger(), applyConcurrency: 2 },
      s.bundle,
      s.plan,
      TYPES,
    );

    if (result.kind !== 'acted') throw new Error(result.kind);
    expect(s.api.log()).not.toContain('apply ConfigMap ns1/secret');
    expect(s.api.log()).toContain('apply ConfigMap ns1/other');
    expect(s.api.callsOf('delete')).toEqual([]);
    expect(result.outcome.applyFailures.get('secret')?.reason).toBe(Reasons.Forbidden);
  });

  it('a forbidden delete stops the pass deletes: nothing else of the Bundle is deleted', async () => {
    const b = bundle('b', withResource(resource('keep', configMap('keep'))));
    const keep = ours(configMap('keep'), withResourceVersion('3'));
    const goneA = ours(configMap('gone-a'), withResourceVersion('4'));
    const goneB = ours(configMap('gone-b'), withResourceVersion('4'));
    const s = setup(b, { keep }, [keep, goneA, goneB], [keep, goneA, goneB]);
    s.api.failNext('delete', forbidden('delete', 'configmaps'));

    const result = await act(s);

    if (result.kind !== 'acted') throw new Error(result.kind);
    expect(s.api.callsOf('delete')).toHaveLength(1);
    expect(s.api.find('ConfigMap', 'gone-a')).toBeDefined();
    expect(s.api.find('ConfigMap', 'gone-b')).toBeDefined();
    expect(result.outcome.pruneFailures.map((f) => f.reason)).toEqual([Reasons.Forbidden]);
  });
});
