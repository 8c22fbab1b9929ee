import type { BundleStatus, Condition } from '../../../src/api/bundle-status.js';
import { Annotations, Reasons } from '../../../src/api/names.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { planBundle, type BundlePlan } from '../../../src/core/bundle/plan.js';
import { buildBundleStatus, statusEqual, type PassResults } from '../../../src/core/bundle/status.js';
import {
  bundle,
  configMap,
  controlledBy,
  controlledByBundle,
  live,
  object,
  planInput,
  resource,
  withAnnotation,
  withData,
  withRef,
  withResource,
  terminating,
  withUid,
  type Mod,
  type Obj,
  type TestBundle,
} from './builders.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:05:00Z';

function applied(b: TestBundle, name: string, liveSoFar: Record<string, LiveObject> = {}, ...mods: Mod<Obj>[]): Obj {
  const r = planBundle(planInput(b, liveSoFar)).resources.find((p) => p.name === name);
  if (r === undefined || !('apply' in r)) throw new Error(`resource ${name} is not applied`);
  return live(structuredClone(r.apply.desired), controlledByBundle(), ...mods);
}

/** "Type=Status(Reason)" per condition: the shape of a status at a glance. */
const brief = (conditions: readonly Condition[] | undefined): string[] =>
  (conditions ?? []).map((c) => `${c.type}=${c.status}${c.reason === undefined ? '' : `(${c.reason})`}`);
const resourceBrief = (status: BundleStatus, name: string): string[] =>
  brief(status.resourceStatuses?.find((r) => r.name === name)?.conditions).filter((c) => c.includes('=True'));

const two = bundle('b', withResource(resource('a', configMap('a')), resource('b', configMap('b'), withRef('a'))));
const a = applied(two, 'a');
const bLive = applied(two, 'b', { a });
const readyPlan = planBundle(planInput(two, { a, b: bLive }));

describe('buildBundleStatus', () => {
  it('all resources ready', () => {
    const status = buildBundleStatus(readyPlan, {}, undefined, T0);
    expect(status).toEqual({
      observedGeneration: 1,
      conditions: [
        { type: 'InProgress', status: 'False', observedGeneration: 1, lastTransitionTime: T0 },
        {
          type: 'Ready',
          status: 'True',
          reason: Reasons.AllResourcesReady,
          message: '2/2 resources ready',
          observedGeneration: 1,
          lastTransitionTime: T0,
        },
        { type: 'Error', status: 'False', observedGeneration: 1, lastTransitionTime: T0 },
        {
          type: 'Reconciling',
          status: 'False',
          reason: Reasons.Reconciled,
          message: 'all 2 resources ready',
          observedGeneration: 1,
          lastTransitionTime: T0,
        },
        {
          type: 'Stalled',
          status: 'False',
          reason: Reasons.CanProgress,
          message: 'nothing blocks progress',
          observedGeneration: 1,
          lastTransitionTime: T0,
        },
      ],
      message: 'Ready',
      resourceStatuses: ['a', 'b'].map((name) => ({
        name,
        conditions: [
          { type: 'Blocked', status: 'False', lastTransitionTime: T0 },
          { type: 'InProgress', status: 'False', lastTransitionTime: T0 },
          { type: 'Ready', status: 'True', reason: Reasons.Ready, lastTransitionTime: T0 },
          { type: 'Error', status: 'False', lastTransitionTime: T0 },
        ],
      })),
      objectsToDelete: [],
      pendingDeletions: [],
      declaredRules: [],
      pendingDeletionCount: 0,
      awaitingApprovalCount: 0,
      resourcesReady: '2/2',
    });
  });

  it.each<[string, () => BundlePlan, PassResults, string[], Record<string, string[]>, string]>([
    [
      'creating',
      () => planBundle(planInput(two)),
      {},
      [
        'InProgress=True(Working)',
        'Ready=False(ResourcesNotReady)',
        'Error=False',
        'Reconciling=True(Working)',
        'Stalled=False(CanProgress)',
      ],
      { a: ['InProgress=True(Working)'], b: ['Blocked=True(DependenciesNotReady)'] },
      '0/2',
    ],
    [
      'an apply failed (retriable)',
      () => planBundle(planInput(two, { a })),
      { applyFailures: new Map([['b', { message: 'connection refused' }]]) },
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(RetriableError)',
        'Reconciling=True(RetriableError)',
        'Stalled=False(CanProgress)',
      ],
      { a: ['Ready=True(Ready)'], b: ['Error=True(RetriableError)'] },
      '1/2',
    ],
    [
      'an apply rejected (terminal)',
      () => planBundle(planInput(two, { a })),
      { applyFailures: new Map([['b', { message: 'spec.x: Invalid value', terminal: true }]]) },
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(TerminalError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ],
      { a: ['Ready=True(Ready)'], b: ['Error=True(TerminalError)'] },
      '1/2',
    ],
    [
      'a conflict',
      () => planBundle(planInput(two, { a: live(configMap('a'), controlledBy('ReplicaSet', 'rs')) })),
      {},
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(TerminalError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ],
      { a: ['Error=True(Conflict)'], b: ['Blocked=True(DependenciesNotReady)'] },
      '0/2',
    ],
    [
      'an invalid spec',
      () =>
        planBundle(
          planInput(bundle('b', withResource(resource('a', configMap('a', withData({ x: '!{x}' }))), resource('b', configMap('b'))))),
        ),
      {},
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(TerminalError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ],
      { a: ['Error=True(TerminalError)'], b: ['Blocked=True(InvalidSpec)'] },
      '0/2',
    ],
    [
      'only an unknown kind (retriable)',
      () => planBundle(planInput(bundle('b', withResource(resource('g', object('example.com/v1', 'Gadget', 'g')))))),
      {},
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(RetriableError)',
        'Reconciling=True(RetriableError)',
        'Stalled=False(CanProgress)',
      ],
      { g: ['Error=True(RetriableError)'] },
      '0/1',
    ],
    [
      'an object being deleted by the API server: waited for',
      () =>
        planBundle(
          planInput(bundle('b', withResource(resource('a', configMap('a')))), {
            a: live(configMap('a'), controlledByBundle(), terminating('2025-12-31T23:00:00Z')),
          }),
        ),
      {},
      [
        'InProgress=True(Working)',
        'Ready=False(ResourcesNotReady)',
        'Error=False',
        'Reconciling=True(Working)',
        'Stalled=False(CanProgress)',
      ],
      { a: ['InProgress=True(BeingDeleted)'] },
      '0/1',
    ],
  ])('%s', (_name, plan, results, bundleConditions, resources, ready) => {
    const status = buildBundleStatus(plan(), results, undefined, T0);
    expect(brief(status.conditions)).toEqual(bundleConditions);
    for (const [name, conditions] of Object.entries(resources)) expect(resourceBrief(status, name)).toEqual(conditions);
    expect(status.resourcesReady).toBe(ready);
  });

  it('names each problem in the Error message', () => {
    const plan = planBundle(planInput(two, { a }));
    const status = buildBundleStatus(
      plan,
      {
        applyFailures: new Map([['b', { message: 'boom' }]]),
        pruneFailures: [{ target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }, message: 'forbidden' }],
      },
      undefined,
      T0,
    );
    expect(status.conditions?.find((c) => c.type === 'Error')?.message).toBe('resource "b": boom; ConfigMap x: forbidden');
  });

  describe('deletions', () => {
    const one = bundle('b', withResource(resource('a', configMap('a'))));
    const keep = applied(one, 'a');
    const old = (name: string, ...mods: Mod<Obj>[]): Obj =>
      live(object('apps/v1', 'Deployment', name), controlledByBundle(), withUid(`${name}-uid`), ...mods);
    const delayed = (name: string, stamp?: string): Obj =>
      old(
        name,
        withAnnotation(Annotations.deletionDelay, '1h'),
        ...(stamp === undefined ? [] : [withAnnotation(Annotations.deletionTimestamp, stamp)]),
      );
    const controlled = [
      keep,
      old('gone'),
      delayed('counting', '2025-12-31T23:30:00.000Z'),
      delayed('starting'),
      live(configMap('cm-gone'), controlledByBundle()),
    ];

    it('stays Ready while soft deletions are pending, and lists them', () => {
      const status = buildBundleStatus(planBundle(planInput(one, { a: keep }, { controlled })), {}, undefined, T0);
      expect(brief(status.conditions)).toEqual([
        'InProgress=False',
        'Ready=True(AllResourcesReady)',
        'Error=False',
        'Reconciling=False(Reconciled)',
        'Stalled=False(CanProgress)',
      ]);
      expect(status.objectsToDelete).toEqual([
        { group: 'apps', version: 'v1', kind: 'Deployment', name: 'gone' },
        { version: 'v1', kind: 'ConfigMap', name: 'cm-gone' },
      ]);
      expect(status.pendingDeletions).toEqual([
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'counting',
          deletionTimestamp: '2025-12-31T23:30:00.000Z',
          deleteAfter: '2026-01-01T00:30:00.000Z',
          waitingFor: 'Delay',
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'starting',
          deletionTimestamp: '2026-01-01T00:00:00.000Z',
          deleteAfter: '2026-01-01T01:00:00.000Z',
          waitingFor: 'Delay',
        },
      ]);
      expect(status.pendingDeletionCount).toBe(2);
    });

    it('lists withheld objects to delete when an apply failed, and does not start countdowns', () => {
      const plan = planBundle(planInput(one, { a: keep }, { controlled }));
      const status = buildBundleStatus(plan, { applyFailures: new Map([['a', { message: 'boom' }]]) }, undefined, T0);
      expect(status.objectsToDelete?.map((o) => o.name)).toEqual(['gone', 'starting', 'cm-gone']);
      expect(status.pendingDeletions?.map((p) => p.name)).toEqual(['counting']);
    });

    it('reports an unreadable deletion delay as a terminal error, keeping Ready false', () => {
      const bad = old('bad', withAnnotation(Annotations.deletionDelay, 'tomorrow'));
      const status = buildBundleStatus(planBundle(planInput(one, { a: keep }, { controlled: [keep, bad] })), {}, undefined, T0);
      expect(brief(status.conditions)).toEqual([
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(TerminalError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ]);
      expect(status.conditions?.[2]?.message).toMatch(/^Deployment ns1\/bad is kept: .*"tomorrow"/);
    });
  });

  it('keeps transition times across passes, so an unchanged state is an equal status', () => {
    const first = buildBundleStatus(readyPlan, {}, undefined, T0);
    const second = buildBundleStatus(readyPlan, {}, first, T1);
    expect(statusEqual(first, second)).toBe(true);
  });

  it('moves transition times only for conditions that changed', () => {
    const before = buildBundleStatus(planBundle(planInput(two, { a })), {}, undefined, T0);
    const after = buildBundleStatus(readyPlan, {}, before, T1);
    expect(after.conditions?.map((c) => `${c.type}:${c.lastTransitionTime ?? ''}`)).toEqual([
      `InProgress:${T1}`,
      `Ready:${T1}`,
      `Error:${T0}`,
      `Reconciling:${T1}`,
      `Stalled:${T0}`,
    ]);
    const aConditions = after.resourceStatuses?.find((r) => r.name === 'a')?.conditions;
    expect(aConditions?.every((c) => c.lastTransitionTime === T0)).toBe(true);
    expect(statusEqual(before, after)).toBe(false);
  });
});

describe('statusEqual', () => {
  it.each<[string, BundleStatus | undefined, BundleStatus | undefined, boolean]>([
    ['both absent', undefined, undefined, true],
    ['absent vs empty', undefined, {}, true],
    ['key order', { observedGeneration: 1, resourcesReady: '1/1' }, { resourcesReady: '1/1', observedGeneration: 1 }, true],
    ['undefined member vs missing', { observedGeneration: 1, resourcesReady: undefined }, { observedGeneration: 1 }, true],
    ['different values', { observedGeneration: 1 }, { observedGeneration: 2 }, false],
    [
      'condition order matters',
      {
        conditions: [
          { type: 'A', status: 'True' },
          { type: 'B', status: 'True' },
        ],
      },
      {
        conditions: [
          { type: 'B', status: 'True' },
          { type: 'A', status: 'True' },
        ],
      },
      false,
    ],
  ])('%s', (_name, x, y, expected) => {
    expect(statusEqual(x, y)).toBe(expected);
  });
});
