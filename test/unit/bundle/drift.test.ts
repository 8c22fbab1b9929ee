import { IGNORABLE_POINTER_RULES } from '../../../src/api/spec-defaults.js';
import { Annotations, ApplySetLabels, Labels, ResourceConditionTypes } from '../../../src/api/names.js';
import { bookkeepingPatch, driftedFields } from '../../../src/core/bundle/drift.js';
import { parseJsonPointer, readDriftControls, unignorable } from '../../../src/core/bundle/drift-controls.js';
import { withIgnoredFrom, withoutIgnored } from '../../../src/core/bundle/drift-ignore.js';
import { planBundle, type ResourcePlan } from '../../../src/core/bundle/plan.js';
import { buildBundleStatus } from '../../../src/core/bundle/status.js';
import { transitionEvents } from '../../../src/core/bundle/exit-status.js';
import { CEL_RULE_READINGS } from '../../../src/cli/crd-rules.js';
import { applySetId } from '../../../src/core/bundle/applyset.js';
import {
  bundle,
  BUNDLE_UID,
  configMap,
  controlledByBundle,
  live,
  planInput,
  resource,
  withAnnotation,
  withData,
  withResource,
  withResourceVersion,
  withUid,
  type Obj,
  type TestBundle,
} from './builders.js';

const applyOf = (p: ResourcePlan | undefined) => {
  if (p === undefined || (p.action !== 'apply' && p.action !== 'adopt')) throw new Error(`not an apply: ${JSON.stringify(p)}`);
  return p.apply;
};

/** The live object the API server holds after the plan's apply of `name`. */
function applied(b: TestBundle, name: string, liveSoFar: Record<string, Obj> = {}): Obj {
  const r = planBundle(planInput(b, liveSoFar)).resources.find((p) => p.name === name);
  return live(structuredClone(applyOf(r).desired), withUid(`${name}-uid`), withResourceVersion('1'));
}

describe('parseJsonPointer and unignorable', () => {
  it.each([
    ['/spec/replicas', ['spec', 'replicas']],
    ['/metadata/annotations/example.com~1x', ['metadata', 'annotations', 'example.com/x']],
    ['/data/a~0b', ['data', 'a~b']],
    ['/', ['']],
  ])('%s reads as its segments', (text, segments) => {
    expect(parseJsonPointer(text)).toEqual({ ok: true, segments });
  });

  it.each(['spec/replicas', '', '/a~2', '/a~'])('%j is not a pointer', (text) => {
    expect(parseJsonPointer(text).ok).toBe(false);
  });

  it.each([
    '/apiVersion',
    '/kind',
    '/metadata',
    '/metadata/name',
    '/metadata/namespace',
    '/metadata/ownerReferences',
    '/metadata/ownerReferences/0',
    '/metadata/annotations',
    '/metadata/labels',
    `/metadata/annotations/smith.atlassian.com~1deletionDelay`,
    '/metadata/labels/smith.atlassian.com~1managed',
  ])('%s may not be ignored, in core and in the CRD alike', (text) => {
    const read = parseJsonPointer(text);
    if (!read.ok) throw new Error('parse');
    expect(unignorable(read.segments)).toBeDefined();
    expect(IGNORABLE_POINTER_RULES.some((r) => CEL_RULE_READINGS.get(r.rule)?.(text) === false)).toBe(true);
  });

  it.each(['/spec/replicas', '/data/a', '/metadata/labels/team', '/metadata/annotations/example.com~1owner', '/metadata/nameX', '/kinds'])(
    '%s may be ignored, in core and in the CRD alike',
    (text) => {
      const read = parseJsonPointer(text);
      if (!read.ok) throw new Error('parse');
      expect(unignorable(read.segments)).toBeUndefined();
      expect(IGNORABLE_POINTER_RULES.every((r) => CEL_RULE_READINGS.get(r.rule)?.(text) === true)).toBe(true);
    },
  );
});

describe('readDriftControls', () => {
  it('reads the annotations over the defaults; the ignore annotation replaces the default list', () => {
    expect(
      readDriftControls(
        { [Annotations.apply]: 'IfNotPresent', [Annotations.ignore]: ' /data/a , /data/b ,' },
        { drift: 'Warn', ignore: ['/spec/replicas'] },
      ),
    ).toEqual({
      ok: true,
      controls: {
        apply: 'IfNotPresent',
        drift: 'Warn',
        ignore: [
          ['data', 'a'],
          ['data', 'b'],
        ],
      },
    });
    expect(readDriftControls(undefined, { ignore: ['/spec/replicas'] })).toEqual({
      ok: true,
      controls: { apply: 'Always', drift: 'Correct', ignore: [['spec', 'replicas']] },
    });
  });

  it.each([
    [{ [Annotations.apply]: 'Once' }, /annotation smith\.atlassian\.com\/apply "Once" is not one of Always, IfNotPresent/],
    [{ [Annotations.drift]: 'warn' }, /annotation smith\.atlassian\.com\/drift "warn" is not one of Correct, Warn/],
    [{ [Annotations.ignore]: 'spec.replicas' }, /annotation smith\.atlassian\.com\/ignore: "spec\.replicas" is not a JSON pointer/],
    [
      { [Annotations.ignore]: '/metadata/ownerReferences' },
      /"\/metadata\/ownerReferences" may not be ignored: ownerReferences are how the Bundle owns/,
    ],
  ])('refuses %j', (annotations, says) => {
    const read = readDriftControls(annotations, undefined);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.message).toMatch(says);
  });
});

describe('ignored fields', () => {
  const object = configMap('cm', withData({ a: '1', b: '2' }));

  it('are left out of the hash and carried from the source: the live object, or the manifest at creation', () => {
    const stripped = withoutIgnored(object, [['data', 'b']]);
    expect(stripped['data']).toEqual({ a: '1' });
    expect(object['data']).toEqual({ a: '1', b: '2' });
    expect(withIgnoredFrom(stripped, object, [['data', 'b']])['data']).toEqual({ a: '1', b: '2' });
    expect(withIgnoredFrom(stripped, live(configMap('cm', withData({ a: '9', b: 'theirs' }))), [['data', 'b']])['data']).toEqual({
      a: '1',
      b: 'theirs',
    });
    // The live object has none: none is applied.
    expect(withIgnoredFrom(stripped, live(configMap('cm', withData({ a: '9' }))), [['data', 'b']])['data']).toEqual({ a: '1' });
  });

  it('a scalar another field manager owns is left out (the operator lets go of it); one only the operator owns, or a whole map, keeps the live value', () => {
    const stripped = withoutIgnored(object, [['data', 'b']]);
    const theirs = live(configMap('cm', withData({ a: '1', b: 'theirs' })));
    const managed = (manager: string, fields: Record<string, unknown>) => [{ manager, operation: 'Apply', fieldsV1: fields }];
    expect(withIgnoredFrom(stripped, theirs, [['data', 'b']], managed('other', { 'f:data': { 'f:b': {} } }))['data']).toEqual({ a: '1' });
    expect(withIgnoredFrom(stripped, theirs, [['data', 'b']], managed('bundlesmith', { 'f:data': { 'f:b': {} } }))['data']).toEqual({
      a: '1',
      b: 'theirs',
    });
    const noData = withoutIgnored(object, [['data']]);
    expect(withIgnoredFrom(noData, theirs, [['data']], managed('other', { 'f:data': { 'f:b': {} } }))['data']).toEqual({
      a: '1',
      b: 'theirs',
    });
  });

  it('a change of an ignored field by another manager is not a change: no apply; a change of another field is put back', () => {
    const b = bundle(
      'b',
      withResource(resource('cm', configMap('cm', withData({ a: '1', b: '2' }), withAnnotation(Annotations.ignore, '/data/b')))),
    );
    const was = applied(b, 'cm');
    expect(was['data']).toEqual({ a: '1', b: '2' });
    const theirs = structuredClone(was);
    theirs['data'] = { a: '1', b: 'theirs' };
    expect(applyOf(planBundle(planInput(b, { cm: theirs })).resources[0]).needed).toBe(false);
    theirs['data'] = { a: 'edited', b: 'theirs' };
    const again = applyOf(planBundle(planInput(b, { cm: theirs })).resources[0]);
    expect(again.needed).toBe(true);
    expect(again.desired['data']).toEqual({ a: '1', b: 'theirs' });
  });

  it('a pointer the operator needs is a terminal issue of the Bundle: nothing applied, nothing pruned', () => {
    const b = bundle('b', withResource(resource('cm', configMap('cm', withAnnotation(Annotations.ignore, '/metadata/name')))));
    const stray = live(configMap('stray'), controlledByBundle());
    const plan = planBundle(planInput(b, {}, { controlled: [stray] }));
    expect(plan.issues).toEqual([
      { resource: 'cm', retriable: false, message: expect.stringMatching(/"\/metadata\/name" may not be ignored/) as unknown },
    ]);
    expect(plan.resources).toEqual([]);
    expect(plan.prune).toEqual([]);
  });

  it('an unreadable default is an issue of the Bundle', () => {
    const b = bundle('b', withResource(resource('cm', configMap('cm'))));
    b.spec.driftDefaults = { ignore: ['/kind'] };
    expect(planBundle(planInput(b)).issues.map((i) => i.message)).toEqual([
      expect.stringMatching(/spec\.driftDefaults\.ignore: "\/kind" may not be ignored/),
    ]);
  });
});

describe('apply: IfNotPresent', () => {
  const b = bundle(
    'b',
    withResource(
      resource(
        'cm',
        configMap(
          'cm',
          withData({ a: '1' }),
          withAnnotation(Annotations.apply, 'IfNotPresent'),
          withAnnotation(Annotations.deletionDelay, '1h'),
        ),
      ),
    ),
  );

  it('creates the object with the whole manifest', () => {
    const a = applyOf(planBundle(planInput(b)).resources[0]);
    expect(a).toMatchObject({ needed: true, create: true });
    expect(a.bookkeeping).toBeUndefined();
  });

  it('never applies a field again; the bookkeeping is left alone when it is in place', () => {
    const was = applied(b, 'cm');
    was['data'] = { a: 'edited by hand' };
    const a = applyOf(planBundle(planInput(b, { cm: was })).resources[0]);
    expect(a).toMatchObject({ needed: false, bookkeeping: [] });
  });

  it('still writes the bookkeeping: the controller reference, the managed label and the deletion rules, guarded by uid and resourceVersion', () => {
    const other = live(configMap('cm', withData({ a: 'theirs' })), withUid('cm-uid'), withResourceVersion('7'));
    const plan = planBundle(planInput(b, { cm: other }));
    expect(plan.resources[0]?.action).toBe('adopt');
    const a = applyOf(plan.resources[0]);
    expect(a.needed).toBe(true);
    expect(a.bookkeeping).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'cm-uid' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      {
        op: 'add',
        path: '/metadata/ownerReferences',
        value: [
          { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'b', uid: BUNDLE_UID, controller: true, blockOwnerDeletion: true },
        ],
      },
      // The ApplySet membership is the operator's label too.
      { op: 'add', path: '/metadata/labels', value: { [ApplySetLabels.partOf]: applySetId('b', 'ns1'), [Labels.managed]: 'true' } },
      { op: 'add', path: '/metadata/annotations', value: { [Annotations.apply]: 'IfNotPresent', [Annotations.deletionDelay]: '1h' } },
    ]);
    expect(JSON.stringify(a.bookkeeping)).not.toContain('theirs');
  });

  it("the operator's labels follow the desired manifest (an ApplySet membership too); the user's labels are not written", () => {
    const was = applied(b, 'cm');
    const desired = structuredClone(was);
    desired.metadata.labels = { ...desired.metadata.labels, 'applyset.kubernetes.io/part-of': 'applyset-b2', team: 'mine' };
    was.metadata.labels = { ...was.metadata.labels, 'applyset.kubernetes.io/part-of': 'applyset-b1', team: 'theirs' };
    expect(bookkeepingPatch(desired, was).filter((op) => op.op !== 'test')).toEqual([
      { op: 'add', path: '/metadata/labels/applyset.kubernetes.io~1part-of', value: 'applyset-b2' },
    ]);
    expect(driftedFields(desired, was)).toEqual(['/metadata/labels/team']);
  });

  it('a changed deletion rule in the manifest reaches the live object; a dependency reference the operator recorded and no longer wants goes', () => {
    const was = applied(b, 'cm');
    was.metadata.annotations = {
      ...was.metadata.annotations,
      [Annotations.deletionDelay]: '5m',
      [Annotations.dependencyReferences]: 'gone-uid',
    };
    was.metadata.ownerReferences = [
      ...(was.metadata.ownerReferences ?? []),
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'gone-uid', blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'user', uid: 'user-uid' },
    ];
    const patch = bookkeepingPatch(applyOf(planBundle(planInput(b, { cm: was })).resources[0]).desired, was);
    expect(patch).toContainEqual({ op: 'add', path: `/metadata/annotations/smith.atlassian.com~1deletionDelay`, value: '1h' });
    expect(patch).toContainEqual({ op: 'remove', path: `/metadata/annotations/smith.atlassian.com~1dependencyReferences` });
    const refs = patch.find((op) => op.path === '/metadata/ownerReferences');
    expect(refs !== undefined && 'value' in refs ? (refs.value as { uid: string }[]).map((r) => r.uid) : []).toEqual([
      BUNDLE_UID,
      'user-uid',
    ]);
  });
});

describe('drift: Warn', () => {
  const b = bundle(
    'b',
    withResource(
      resource(
        'cm',
        configMap(
          'cm',
          withData({ a: '1', b: '2', c: '3' }),
          withAnnotation(Annotations.drift, 'Warn'),
          withAnnotation(Annotations.ignore, '/data/c'),
        ),
      ),
    ),
  );

  it('reports the drifted fields (not the ignored ones, not the bookkeeping) and writes none of them', () => {
    const was = applied(b, 'cm');
    was['data'] = { a: 'x', c: 'theirs' };
    const plan = planBundle(planInput(b, { cm: was }));
    const a = applyOf(plan.resources[0]);
    expect(a).toMatchObject({ needed: false, bookkeeping: [], drifted: ['/data/a', '/data/b'] });
    // Still Ready: drift is information.
    expect(plan.resources[0]).toMatchObject({ readiness: { state: 'ready' } });
    const status = buildBundleStatus(plan, {}, undefined, '2026-01-01T00:00:00Z');
    const drifted = status.resourceStatuses?.[0]?.conditions?.find((c) => c.type === ResourceConditionTypes.Drifted);
    expect(drifted).toMatchObject({
      status: 'True',
      reason: 'FieldsDrifted',
      message: '2 fields differ from the manifest (drift: Warn, not written): /data/a, /data/b',
    });
    expect(status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(transitionEvents(undefined, status, 'X').filter((e) => e.reason === 'Drifted')).toEqual([
      {
        type: 'Warning',
        reason: 'Drifted',
        message: 'resource "cm": 2 fields differ from the manifest (drift: Warn, not written): /data/a, /data/b',
      },
    ]);
    // The same drift on the next pass: no second event.
    expect(
      transitionEvents(status, buildBundleStatus(plan, {}, status, '2026-01-01T00:01:00Z'), 'X').filter((e) => e.reason === 'Drifted'),
    ).toEqual([]);
  });

  it('no drift: Drifted False', () => {
    const plan = planBundle(planInput(b, { cm: applied(b, 'cm') }));
    const status = buildBundleStatus(plan, {}, undefined, '2026-01-01T00:00:00Z');
    expect(status.resourceStatuses?.[0]?.conditions?.find((c) => c.type === ResourceConditionTypes.Drifted)).toMatchObject({
      status: 'False',
      reason: 'NoDrift',
    });
  });

  it('an edit of the manifest is applied whole', () => {
    const was = applied(b, 'cm');
    was['data'] = { a: 'x', b: '2', c: '3' };
    const edited = bundle(
      'b',
      withResource(
        resource(
          'cm',
          configMap(
            'cm',
            withData({ a: '1', b: 'new', c: '3' }),
            withAnnotation(Annotations.drift, 'Warn'),
            withAnnotation(Annotations.ignore, '/data/c'),
          ),
        ),
      ),
    );
    const a = applyOf(planBundle(planInput(edited, { cm: was })).resources[0]);
    expect(a.bookkeeping).toBeUndefined();
    expect(a.needed).toBe(true);
    expect(a.desired['data']).toEqual({ a: '1', b: 'new', c: '3' });
  });

  it('names the drifted fields up to a cap', () => {
    const many = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${String(i).padStart(2, '0')}`, 'v']));
    const desired = configMap('cm', withData(many));
    expect(driftedFields(desired, live(configMap('cm', withData({}))))).toHaveLength(15);
  });
});
