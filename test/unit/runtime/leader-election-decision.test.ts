import {
  decideLeaderElection,
  formatMicroTime,
  observeLease,
  releaseLease,
  type LeaderElectionDecision,
  type LeaderElectionInput,
  type LeaseSpec,
} from '../../../src/runtime/leader-election-decision.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const NOW_MICRO = '2026-11-21T12:00:00.000000Z';
const EARLIER_MICRO = '2026-11-21T11:00:00.000000Z';
const ME = 'bundlesmith-0';
const OTHER = 'bundlesmith-1';

type LeaseModifier = (lease: LeaseSpec) => void;
const heldBy =
  (holder: string): LeaseModifier =>
  (l) => {
    l.holderIdentity = holder;
  };
const duration =
  (seconds: number | undefined): LeaseModifier =>
  (l) => {
    l.leaseDurationSeconds = seconds;
  };
const transitions =
  (count: number | undefined): LeaseModifier =>
  (l) => {
    l.leaseTransitions = count;
  };
const acquired =
  (time: string | undefined): LeaseModifier =>
  (l) => {
    l.acquireTime = time;
  };
function lease(...modifiers: LeaseModifier[]): LeaseSpec {
  const spec: LeaseSpec = {
    holderIdentity: OTHER,
    leaseDurationSeconds: 15,
    acquireTime: EARLIER_MICRO,
    renewTime: EARLIER_MICRO,
    leaseTransitions: 3,
  };
  for (const modify of modifiers) modify(spec);
  return spec;
}

/** Input with the lease first observed `observedSecondsAgo` before NOW (undefined: never observed). */
function input(
  current: LeaseSpec | undefined,
  observedSecondsAgo: number | undefined,
  extra: Partial<LeaderElectionInput> = {},
): LeaderElectionInput {
  const observation = observedSecondsAgo === undefined ? undefined : observeLease(undefined, current, NOW - observedSecondsAgo * 1000);
  return { identity: ME, now: NOW, leaseDurationSeconds: 15, lease: current, observation, ...extra };
}

const mine = (fields: Partial<LeaseSpec>): LeaseSpec => ({
  holderIdentity: ME,
  leaseDurationSeconds: 15,
  acquireTime: NOW_MICRO,
  renewTime: NOW_MICRO,
  leaseTransitions: 0,
  ...fields,
});

describe('decideLeaderElection', () => {
  it.each<[string, LeaderElectionInput, LeaderElectionDecision]>([
    ['no Lease: create it', input(undefined, undefined), { action: 'acquire', create: true, lease: mine({}) }],
    [
      'held by me: renew, keeping acquireTime and transitions',
      input(lease(heldBy(ME)), 5),
      { action: 'renew', lease: mine({ acquireTime: EARLIER_MICRO, leaseTransitions: 3 }) },
    ],
    [
      'held by me with my configured duration changed: renew writes the new one',
      input(lease(heldBy(ME), duration(60)), 5),
      { action: 'renew', lease: mine({ acquireTime: EARLIER_MICRO, leaseTransitions: 3 }) },
    ],
    [
      'held by me without acquireTime or transitions',
      input(lease(heldBy(ME), acquired(undefined), transitions(undefined)), 5),
      { action: 'renew', lease: mine({}) },
    ],
    [
      'held by another, observed 5 s ago: wait out the 15 s',
      input(lease(), 5),
      { action: 'wait-until', atMs: NOW + 10_000, holderIdentity: OTHER },
    ],
    [
      'held by another, never observed: a full lease from now, however old renewTime is',
      input(lease(), undefined),
      { action: 'wait-until', atMs: NOW + 15_000, holderIdentity: OTHER },
    ],
    [
      'held by another with a longer lease: their duration counts, not mine',
      input(lease(duration(60)), 20),
      { action: 'wait-until', atMs: NOW + 40_000, holderIdentity: OTHER },
    ],
    [
      'held by another with an unreadable duration: mine counts',
      input(lease(duration(0)), 5),
      { action: 'wait-until', atMs: NOW + 10_000, holderIdentity: OTHER },
    ],
    [
      'held by another, unchanged for exactly 15 s: expired, take over',
      input(lease(), 15),
      { action: 'acquire', create: false, lease: mine({ leaseTransitions: 4 }) },
    ],
    [
      'held by another, unchanged for long: take over',
      input(lease(transitions(undefined)), 3600),
      { action: 'acquire', create: false, lease: mine({ leaseTransitions: 1 }) },
    ],
    [
      'released (empty holder): take at once',
      input(lease(heldBy('')), 0),
      { action: 'acquire', create: false, lease: mine({ leaseTransitions: 4 }) },
    ],
    [
      'no holder field: take at once',
      input(lease(heldBy('')), undefined),
      { action: 'acquire', create: false, lease: mine({ leaseTransitions: 4 }) },
    ],
    [
      'leading, renewed 2 s ago, lease mine: renew',
      input(lease(heldBy(ME)), 2, { leading: { lastRenewMs: NOW - 2_000, renewDeadlineMs: 10_000 } }),
      { action: 'renew', lease: mine({ acquireTime: EARLIER_MICRO, leaseTransitions: 3 }) },
    ],
    [
      'leading, renewed exactly at the deadline: still renew',
      input(lease(heldBy(ME)), 10, { leading: { lastRenewMs: NOW - 10_000, renewDeadlineMs: 10_000 } }),
      { action: 'renew', lease: mine({ acquireTime: EARLIER_MICRO, leaseTransitions: 3 }) },
    ],
    [
      'leading, not renewed past the deadline: lost, even though the Lease still names me',
      input(lease(heldBy(ME)), 11, { leading: { lastRenewMs: NOW - 10_001, renewDeadlineMs: 10_000 } }),
      { action: 'lost', reason: 'not renewed for 10001 ms, past the renew deadline of 10000 ms' },
    ],
    [
      'leading, but another holds the Lease: lost',
      input(lease(), 1, { leading: { lastRenewMs: NOW - 1_000, renewDeadlineMs: 10_000 } }),
      { action: 'lost', reason: `the Lease is held by ${OTHER}` },
    ],
    [
      'leading, but the Lease was released: lost',
      input(lease(heldBy('')), 1, { leading: { lastRenewMs: NOW - 1_000, renewDeadlineMs: 10_000 } }),
      { action: 'lost', reason: 'the Lease was released' },
    ],
    [
      'leading, but the Lease was deleted: lost',
      input(undefined, undefined, { leading: { lastRenewMs: NOW - 1_000, renewDeadlineMs: 10_000 } }),
      { action: 'lost', reason: 'the Lease was deleted' },
    ],
  ])('%s', (_name, electionInput, want) => {
    expect(decideLeaderElection(electionInput)).toEqual(want);
  });

  it('ignores an observation of a different Lease state', () => {
    const seenLongAgo = observeLease(undefined, lease(), NOW - 3_600_000);
    const renewed = lease((l) => {
      l.renewTime = NOW_MICRO;
    });
    expect(decideLeaderElection({ ...input(renewed, undefined), observation: seenLongAgo })).toEqual({
      action: 'wait-until',
      atMs: NOW + 15_000,
      holderIdentity: OTHER,
    });
  });

  it.each<[string, Partial<LeaderElectionInput>]>([
    ['empty identity', { identity: '' }],
    ['zero duration', { leaseDurationSeconds: 0 }],
    ['fractional duration', { leaseDurationSeconds: 1.5 }],
  ])('refuses %s', (_name, extra) => {
    expect(() => decideLeaderElection(input(undefined, undefined, extra))).toThrow(RangeError);
  });
});

describe('observeLease', () => {
  it.each<[string, LeaseSpec | undefined, LeaseSpec | undefined, number]>([
    ['first sight', undefined, lease(), NOW],
    ['unchanged: keeps the first sight', lease(), lease(), NOW - 5_000],
    ['renewed: restarts', lease(), lease((l) => (l.renewTime = NOW_MICRO)), NOW],
    ['new holder: restarts', lease(), lease(heldBy(ME)), NOW],
    ['deleted: restarts', lease(), undefined, NOW],
  ])('%s', (_name, before, after, wantAtMs) => {
    const previous = before === undefined ? undefined : observeLease(undefined, before, NOW - 5_000);
    expect(observeLease(previous, after, NOW).atMs).toBe(wantAtMs);
  });
});

describe('releaseLease', () => {
  it.each<[string, LeaseSpec | undefined, LeaseSpec | undefined]>([
    [
      'mine: empty holder, 1 s, transitions kept',
      lease(heldBy(ME)),
      { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: NOW_MICRO, renewTime: NOW_MICRO, leaseTransitions: 3 },
    ],
    ["another's: left alone", lease(), undefined],
    ['already released: left alone', lease(heldBy('')), undefined],
    ['no Lease', undefined, undefined],
  ])('%s', (_name, current, want) => {
    expect(releaseLease(current, ME, NOW)).toEqual(want);
  });
});

describe('formatMicroTime', () => {
  it.each<[number, string]>([
    [NOW, NOW_MICRO],
    [NOW + 1, '2026-11-21T12:00:00.001000Z'],
    [NOW + 123.456, '2026-11-21T12:00:00.123456Z'],
    [0, '1970-01-01T00:00:00.000000Z'],
  ])('%d -> %s', (ms, want) => {
    expect(formatMicroTime(ms)).toBe(want);
  });
});
