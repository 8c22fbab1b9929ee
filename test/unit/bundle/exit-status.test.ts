import { describe, expect, it } from '@jest/globals';
import type { BundleStatus } from '../../../src/api/bundle-status.js';
import { BundleConditionTypes, EventReasons, Reasons } from '../../../src/api/names.js';
import {
  errorEventReason,
  errorStatus,
  finalizingStatus,
  interruptedStatus,
  staleReadMessage,
  transitionEvents,
} from '../../../src/core/bundle/exit-status.js';
import type { FinalizeStep } from '../../../src/core/bundle/finalize-types.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:01:00Z';
const ready: BundleStatus = {
  observedGeneration: 2,
  managedKinds: ['v1/ConfigMap'],
  conditions: [
    { type: BundleConditionTypes.InProgress, status: 'False', lastTransitionTime: T0 },
    { type: BundleConditionTypes.Ready, status: 'True', reason: Reasons.AllResourcesReady, lastTransitionTime: T0 },
    { type: BundleConditionTypes.Error, status: 'False', lastTransitionTime: T0 },
  ],
};
const cond = (s: BundleStatus, type: string) => s.conditions?.find((c) => c.type === type);
const target = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns1', name, uid: `${name}-uid` });

describe('errorStatus', () => {
  it('sets Error and Ready=False with the reason, observes the generation, keeps the rest', () => {
    const s = errorStatus({ metadata: { generation: 3 }, status: ready }, Reasons.RetriableError, 'boom', T1);
    expect(s.observedGeneration).toBe(3);
    expect(s.managedKinds).toEqual(['v1/ConfigMap']);
    expect(cond(s, BundleConditionTypes.Error)).toEqual({
      type: 'Error',
      status: 'True',
      reason: Reasons.RetriableError,
      message: 'boom',
      observedGeneration: 3,
      lastTransitionTime: T1,
    });
    expect(cond(s, BundleConditionTypes.Ready)).toMatchObject({ status: 'False', reason: Reasons.RetriableError, lastTransitionTime: T1 });
  });

  it('drops the count of ready resources when it observes a newer generation than the pass that counted them (deleteWhen BundleReady reads it)', () => {
    const counted: BundleStatus = { ...ready, resourcesReady: '2/2' };
    expect(
      errorStatus({ metadata: { generation: 3 }, status: counted }, Reasons.RetriableError, 'boom', T1).resourcesReady,
    ).toBeUndefined();
    expect(errorStatus({ metadata: { generation: 2 }, status: counted }, Reasons.RetriableError, 'boom', T1).resourcesReady).toBe('2/2');
    expect(errorStatus({ metadata: {}, status: counted }, Reasons.RetriableError, 'boom', T1).resourcesReady).toBe('2/2');
  });
});

describe('interruptedStatus', () => {
  it('says why in InProgress and keeps Ready, Error and observedGeneration as they were', () => {
    const s = interruptedStatus({ metadata: { generation: 3 }, status: ready }, 'waiting', T1);
    expect(s.observedGeneration).toBe(2);
    expect(cond(s, BundleConditionTypes.InProgress)).toEqual({
      type: 'InProgress',
      status: 'True',
      reason: Reasons.Working,
      message: 'waiting',
      observedGeneration: 3,
      lastTransitionTime: T1,
    });
    expect(cond(s, BundleConditionTypes.Reconciling)).toMatchObject({
      status: 'True',
      reason: Reasons.Working,
      message: 'waiting',
      observedGeneration: 3,
    });
    expect(cond(s, BundleConditionTypes.Ready)).toEqual(cond(ready, BundleConditionTypes.Ready));
    expect(cond(s, BundleConditionTypes.Error)).toEqual(cond(ready, BundleConditionTypes.Error));
  });
  it('a Bundle without status is not ready yet', () => {
    const s = interruptedStatus({ metadata: {} }, 'finalizer added; reconciling', T1);
    expect(cond(s, BundleConditionTypes.Ready)).toMatchObject({ status: 'False', reason: Reasons.ResourcesNotReady });
    expect(s.observedGeneration).toBeUndefined();
  });
  it('the same stop twice is the same status (no second write)', () => {
    const once = interruptedStatus({ metadata: {}, status: ready }, 'waiting', T0);
    expect(interruptedStatus({ metadata: {}, status: once }, 'waiting', T1)).toEqual(once);
  });
});

describe('finalizingStatus', () => {
  const steps: FinalizeStep[] = [
    { action: 'delete', target: target('a'), event: { reason: 'Pruned', message: '' } },
    { action: 'release', target: target('b'), patch: [], event: { reason: 'Released', message: '' } },
    { action: 'leave', target: target('c'), reason: 'terminating' },
  ];
  it('names what the pass wrote and what is terminating; no failure, no Error', () => {
    const s = finalizingStatus({ metadata: {}, status: ready }, { propagation: 'Background', steps, changed: [], failures: [] }, T1);
    expect(cond(s, BundleConditionTypes.Ready)).toMatchObject({
      status: 'False',
      reason: Reasons.BeingDeleted,
      message:
        'being deleted (background propagation): deleting ConfigMap a; releasing with a countdown ConfigMap b; terminating: ConfigMap c; the finalizer goes once a pass on fresh lists finds nothing left to write',
    });
    expect(cond(s, BundleConditionTypes.Error)?.status).toBe('False');
  });
  it('a failed step sets Error with the failure; a changed object is named', () => {
    const s = finalizingStatus(
      { metadata: {} },
      {
        propagation: 'Orphan',
        steps: [],
        changed: [target('x')],
        failures: [{ target: target('a'), action: 'delete', message: 'forbidden' }],
      },
      T1,
    );
    expect(cond(s, BundleConditionTypes.Error)).toMatchObject({
      status: 'True',
      reason: Reasons.RetriableError,
      message: 'being deleted: delete ConfigMap a failed: forbidden',
    });
    expect(cond(s, BundleConditionTypes.InProgress)?.message).toContain('changed since read (deciding again): ConfigMap x');
  });
  it('an orphan step held back is named as waiting, not as orphaned', () => {
    const orphanSteps: FinalizeStep[] = ['e', 't'].map((n) => ({
      action: 'orphan',
      target: target(n),
      patch: [],
      event: { reason: 'Orphaned', message: '' },
    }));
    const held = orphanSteps[1]?.target;
    if (held === undefined) throw new Error('no step');
    const s = finalizingStatus(
      { metadata: {} },
      { propagation: 'Orphan', steps: orphanSteps, changed: [], failures: [], heldBack: [held] },
      T1,
    );
    const message = cond(s, BundleConditionTypes.InProgress)?.message ?? '';
    expect(message).toContain('orphaning ConfigMap e;');
    expect(message).toContain('their marks waiting for the steps before them: ConfigMap t');
  });
  it('lists at most five objects by name', () => {
    const many: FinalizeStep[] = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => ({
      action: 'delete',
      target: target(n),
      event: { reason: '', message: '' },
    }));
    const s = finalizingStatus({ metadata: {} }, { propagation: 'Background', steps: many, changed: [], failures: [] }, T1);
    expect(cond(s, BundleConditionTypes.InProgress)?.message).toContain(
      'deleting ConfigMap a, ConfigMap b, ConfigMap c, ConfigMap d, ConfigMap e and 2 more;',
    );
  });
});

describe('staleReadMessage', () => {
  it.each([
    ['another incarnation', { uid: 'u2', generation: 1 }, /cache to show this Bundle/],
    ['being deleted', { uid: 'u1', generation: 1, deletionTimestamp: T0 }, /being deleted/],
    ['a newer spec', { uid: 'u1', generation: 2 }, /generation 1 read, 2 now/],
  ])('%s', (_name, fresh, expected) => {
    expect(staleReadMessage({ metadata: fresh }, { uid: 'u1', generation: 1 })).toMatch(expected);
  });
});

describe('errorEventReason', () => {
  const none = { issues: [], resources: [], prune: [] };
  it.each([
    ['an invalid spec', { ...none, issues: [{ message: 'x', retriable: false }] }, EventReasons.InvalidSpec],
    [
      'a conflict',
      { ...none, resources: [{ name: 'a', action: 'conflict', message: 'm', event: { reason: '', message: '' } }] },
      EventReasons.Conflict,
    ],
    [
      'an unreadable delay',
      { ...none, prune: [{ action: 'invalid', target: target('a'), message: 'm', event: { reason: '', message: '' } }] },
      EventReasons.InvalidDeletionDelay,
    ],
    ['anything else', none, EventReasons.ReconcileError],
  ] as const)('%s', (_name, plan, expected) => {
    expect(errorEventReason(plan as unknown as Parameters<typeof errorEventReason>[0])).toBe(expected);
  });
});

describe('transitionEvents', () => {
  const withConds = (readyStatus: 'True' | 'False', error?: string): BundleStatus => ({
    resourcesReady: '2/2',
    conditions: [
      { type: BundleConditionTypes.Ready, status: readyStatus },
      error === undefined
        ? { type: BundleConditionTypes.Error, status: 'False' }
        : { type: BundleConditionTypes.Error, status: 'True', message: error },
    ],
  });
  it.each<[string, BundleStatus | undefined, BundleStatus, string[]]>([
    ['becoming ready', withConds('False'), withConds('True'), ['Normal Ready']],
    ['staying ready', withConds('True'), withConds('True'), []],
    ['a new error', withConds('False'), withConds('False', 'x'), ['Warning R']],
    ['the same error again', withConds('False', 'x'), withConds('False', 'x'), []],
    ['another error message', withConds('False', 'x'), withConds('False', 'y'), ['Warning R']],
  ])('%s', (_name, before, after, expected) => {
    expect(transitionEvents(before, after, 'R').map((e) => `${e.type} ${e.reason}`)).toEqual(expected);
  });
});
