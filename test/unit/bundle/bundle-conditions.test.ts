import { describe, expect, it } from '@jest/globals';
import type { Condition } from '../../../src/api/bundle-status.js';
import { Reasons } from '../../../src/api/names.js';
import { decideBundleConditions, summaryOf, type PassProblem, type PassResult } from '../../../src/core/bundle/bundle-conditions.js';

/** "Type=Status(Reason)" per condition, in order. */
const brief = (conditions: readonly Condition[]): string[] =>
  conditions.map((c) => `${c.type}=${c.status}${c.reason === undefined ? '' : `(${c.reason})`}`);

const retriable = { message: 'connection refused', terminal: false };
const terminal = { message: 'spec.x: Invalid value', terminal: true };
const forbidden = { message: 'configmaps is forbidden', terminal: false, reason: Reasons.Forbidden };
const reconciled = (ready: number, total: number, problems: PassProblem[] = [], notReady: string[] = []): PassResult => ({
  kind: 'reconciled',
  ready,
  total,
  notReady,
  problems,
});

/**
 * How kstatus reads the conditions (sigs.k8s.io/cli-utils
 * pkg/kstatus/status, generic.go and status.go, for a kind without legacy
 * rules and with observedGeneration current): the first Reconciling=True or
 * Stalled=True in the list decides, else Ready.
 */
function kstatus(conditions: readonly Condition[]): 'InProgress' | 'Failed' | 'Current' {
  for (const c of conditions) {
    if (c.type === 'Reconciling' && c.status === 'True') return 'InProgress';
    if (c.type === 'Stalled' && c.status === 'True') return 'Failed';
  }
  const ready = conditions.find((c) => c.type === 'Ready');
  return ready === undefined || ready.status === 'True' ? 'Current' : 'InProgress';
}

describe('decideBundleConditions', () => {
  it.each<[string, PassResult, string[], ReturnType<typeof kstatus>]>([
    [
      'all ready',
      reconciled(2, 2),
      ['InProgress=False', 'Ready=True(AllResourcesReady)', 'Error=False', 'Reconciling=False(Reconciled)', 'Stalled=False(CanProgress)'],
      'Current',
    ],
    [
      'an empty Bundle',
      reconciled(0, 0),
      ['InProgress=False', 'Ready=True(AllResourcesReady)', 'Error=False', 'Reconciling=False(Reconciled)', 'Stalled=False(CanProgress)'],
      'Current',
    ],
    [
      'waiting for a resource',
      reconciled(1, 2, [], ['job']),
      [
        'InProgress=True(Working)',
        'Ready=False(ResourcesNotReady)',
        'Error=False',
        'Reconciling=True(Working)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'a retriable error',
      reconciled(1, 2, [retriable]),
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(RetriableError)',
        'Reconciling=True(RetriableError)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'a terminal error',
      reconciled(1, 2, [terminal]),
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(TerminalError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ],
      'Failed',
    ],
    [
      'Forbidden under its identity',
      reconciled(0, 1, [forbidden]),
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(Forbidden)',
        'Reconciling=False(Stalled)',
        'Stalled=True(Forbidden)',
      ],
      'Failed',
    ],
    [
      'a terminal and a retriable error: stalled on the terminal one',
      reconciled(0, 2, [retriable, terminal]),
      [
        'InProgress=False',
        'Ready=False(ResourcesNotReady)',
        'Error=True(RetriableError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ],
      'Failed',
    ],
    [
      'the schema refused the spec',
      { kind: 'failed', problem: { reason: Reasons.TerminalError, message: 'spec.resources: required', terminal: true } },
      [
        'InProgress=False',
        'Ready=False(TerminalError)',
        'Error=True(TerminalError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(TerminalError)',
      ],
      'Failed',
    ],
    [
      'a pass that failed',
      { kind: 'failed', problem: { reason: Reasons.RetriableError, message: 'listing: timeout', terminal: false } },
      [
        'InProgress=False',
        'Ready=False(RetriableError)',
        'Error=True(RetriableError)',
        'Reconciling=True(RetriableError)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'interrupted, never reconciled',
      { kind: 'interrupted', message: 'finalizer added; reconciling' },
      [
        'InProgress=True(Working)',
        'Ready=False(ResourcesNotReady)',
        'Error=False',
        'Reconciling=True(Working)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'interrupted after a Ready pass: Ready kept, still in progress',
      {
        kind: 'interrupted',
        message: 'the spec changed since it was read',
        ready: { type: 'Ready', status: 'True', reason: Reasons.AllResourcesReady },
        error: { type: 'Error', status: 'False' },
      },
      [
        'InProgress=True(Working)',
        'Ready=True(AllResourcesReady)',
        'Error=False',
        'Reconciling=True(Working)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'being deleted',
      { kind: 'finalizing', message: 'being deleted', failures: [] },
      [
        'InProgress=True(BeingDeleted)',
        'Ready=False(BeingDeleted)',
        'Error=False',
        'Reconciling=True(BeingDeleted)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'being deleted, a step failed',
      { kind: 'finalizing', message: 'being deleted', failures: [retriable] },
      [
        'InProgress=True(BeingDeleted)',
        'Ready=False(BeingDeleted)',
        'Error=True(RetriableError)',
        'Reconciling=True(BeingDeleted)',
        'Stalled=False(CanProgress)',
      ],
      'InProgress',
    ],
    [
      'a deletion blocked for good (Forbidden)',
      { kind: 'finalizing', message: 'being deleted', failures: [retriable, forbidden] },
      [
        'InProgress=True(BeingDeleted)',
        'Ready=False(BeingDeleted)',
        'Error=True(RetriableError)',
        'Reconciling=False(Stalled)',
        'Stalled=True(Forbidden)',
      ],
      'Failed',
    ],
  ])('%s', (_name, result, want, kstatusReads) => {
    const conditions = decideBundleConditions(result, 4);
    expect(brief(conditions)).toEqual(want);
    expect(kstatus(conditions)).toBe(kstatusReads);
    // Never Reconciling and Stalled at once: kstatus would take whichever comes first.
    expect(conditions.filter((c) => (c.type === 'Reconciling' || c.type === 'Stalled') && c.status === 'True').length).toBeLessThanOrEqual(
      1,
    );
    for (const c of conditions.filter((x) => x.type === 'Reconciling' || x.type === 'Stalled')) {
      expect(c).toMatchObject({ observedGeneration: 4, reason: expect.any(String), message: expect.any(String) });
    }
  });

  it('keeps the generation Ready and Error were decided on when a pass is interrupted', () => {
    const conditions = decideBundleConditions(
      { kind: 'interrupted', message: 'stale', ready: { type: 'Ready', status: 'True', observedGeneration: 2, lastTransitionTime: 'T' } },
      3,
    );
    expect(conditions.find((c) => c.type === 'Ready')).toEqual({ type: 'Ready', status: 'True', observedGeneration: 2 });
    expect(conditions.find((c) => c.type === 'Reconciling')?.observedGeneration).toBe(3);
  });

  it('says what is stalled, retried and waited for in the messages', () => {
    const stalled = decideBundleConditions(reconciled(0, 2, [retriable, terminal]), 1);
    expect(stalled.find((c) => c.type === 'Stalled')?.message).toBe('spec.x: Invalid value');
    expect(stalled.find((c) => c.type === 'Error')?.message).toBe('connection refused; spec.x: Invalid value');
    expect(decideBundleConditions(reconciled(0, 2, [], ['a', 'b']), 1).find((c) => c.type === 'Reconciling')?.message).toBe(
      'waiting for a, b',
    );
  });
});

describe('summaryOf', () => {
  it.each<[string, PassResult, string]>([
    ['ready', reconciled(1, 1), 'Ready'],
    ['waiting', reconciled(0, 1, [], ['job']), 'waiting for job'],
    ['stalled', reconciled(0, 1, [terminal]), 'Stalled: spec.x: Invalid value'],
    ['retrying', reconciled(0, 1, [retriable]), 'Error: connection refused'],
    ['long messages are cut', reconciled(0, 1, [{ message: 'x'.repeat(200), terminal: true }]), `Stalled: ${'x'.repeat(70)}…`],
  ])('%s', (_name, result, want) => {
    expect(summaryOf(decideBundleConditions(result, 1))).toBe(want);
  });
});
