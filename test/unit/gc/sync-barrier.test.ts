import {
  decideSyncBarrier,
  barrierAllows,
  needsCompleteGraph,
  type GcAction,
  type InformerSyncFacts,
  type SyncBarrier,
} from '../../../src/core/gc/sync-barrier.js';

const informer = (resource: string, synced: boolean, waitingSince = 0): InformerSyncFacts => ({ resource, synced, waitingSince });
const NOW = 100_000;
const BOUND = 30_000;

describe('decideSyncBarrier', () => {
  it.each<[string, boolean, InformerSyncFacts[], SyncBarrier]>([
    ['before discovery: held', false, [], { phase: 'held', waitingFor: ['discovery'] }],
    ['every informer listed: complete', true, [informer('v1/configmaps', true), informer('v1/secrets', true)], { phase: 'complete' }],
    ['discovered, no informer at all: complete', true, [], { phase: 'complete' }],
    [
      'one informer still within its bound: held until the bound passes',
      true,
      [informer('v1/configmaps', true), informer('v1/secrets', false, NOW - 10_000)],
      { phase: 'held', waitingFor: ['v1/secrets'], recheckAfterMs: 20_000 },
    ],
    [
      'an informer past its bound: partial',
      true,
      [informer('v1/configmaps', true), informer('metrics/v1/pods', false, NOW - BOUND)],
      { phase: 'partial', unsynced: ['metrics/v1/pods'] },
    ],
    [
      'one past its bound, one new (re-discovery): held for the new one',
      true,
      [informer('metrics/v1/pods', false, 0), informer('x/v1/widgets', false, NOW - 1_000)],
      { phase: 'held', waitingFor: ['x/v1/widgets'], recheckAfterMs: 29_000 },
    ],
  ])('%s', (_name, discovered, informers, want) => {
    expect(decideSyncBarrier({ discovered, informers, now: NOW, holdBoundMs: BOUND })).toEqual(want);
  });
});

describe('barrierAllows', () => {
  const actions: GcAction[] = ['verify-virtual', 'delete-dependent', 'remove-refs', 'finish-foreground', 'orphan-dependents'];
  it.each<[SyncBarrier['phase'], string[]]>([
    ['held', []],
    ['partial', ['verify-virtual', 'delete-dependent', 'remove-refs']],
    ['complete', actions],
  ])('%s barrier allows %j', (phase, allowed) => {
    const barrier: SyncBarrier =
      phase === 'held' ? { phase, waitingFor: [] } : phase === 'partial' ? { phase, unsynced: ['x'] } : { phase };
    expect(actions.filter((a) => barrierAllows(barrier, a))).toEqual(allowed);
  });

  it('only "nothing depends on it any more" decisions need a complete graph', () => {
    expect(actions.filter(needsCompleteGraph)).toEqual(['finish-foreground', 'orphan-dependents']);
  });
});
