import { changedPaths } from '../../../src/cli/diff.js';
import { comparePending, formatDue, formatPendingTable, type PendingObject } from '../../../src/cli/pending.js';

describe('changedPaths', () => {
  it.each([
    [{ data: { v: '1' } }, { data: { v: '1' } }, []],
    [{ data: { v: '1' } }, { data: { v: '2' } }, ['data.v']],
    [{ metadata: { resourceVersion: '1', labels: { a: 'b' } } }, { metadata: { resourceVersion: '2', labels: { a: 'c' } } }, ['metadata.labels.a']],
    [{ status: { x: 1 } }, { status: { x: 2 } }, []],
    [{ spec: { a: { b: { c: { d: 1 } } } } }, { spec: { a: { b: { c: { d: 2 } } } } }, ['spec.a.b']],
    [{ spec: { list: [1] } }, { spec: { list: [1, 2] } }, ['spec.list']],
  ])('%j -> %j', (before, after, want) => {
    expect(changedPaths(before, after)).toEqual(want);
  });
});

describe('pending table', () => {
  const NOW = Date.UTC(2026, 10, 21, 12);
  it.each([
    ['2026-11-21T13:30:00.000Z', 'in 1h30m0s'],
    ['2026-11-21T11:59:57.000Z', 'overdue by 3s'],
    [undefined, '-'],
  ])('due %s', (deleteAfter, want) => {
    expect(formatDue(deleteAfter, NOW)).toBe(want);
  });

  it('sorts the soonest first and rows without a time (kept) last', () => {
    const row = (name: string, deleteAfter?: string): PendingObject => ({ namespace: 'ns', apiVersion: 'v1', kind: 'ConfigMap', name, bundle: 'b', state: 'pending', deletionTimestamp: '', ...(deleteAfter ? { deleteAfter } : {}) });
    const rows = [row('kept'), row('late', '2026-11-21T13:00:00.000Z'), row('early', '2026-11-21T12:00:00.000Z')];
    expect(rows.sort(comparePending).map((r) => r.name)).toEqual(['early', 'late', 'kept']);
  });

  it('a due deletion held by a gate says what it waits for, not how overdue it is', () => {
    expect(formatDue('2026-11-21T11:00:00.000Z', NOW, 'Approval')).toBe('when approved');
    expect(formatDue('2026-11-21T11:00:00.000Z', NOW, 'BundleReady')).toBe('when its Bundle is Ready');
    expect(formatDue('2026-11-21T13:00:00.000Z', NOW, 'Delay')).toBe('in 1h0m0s');
  });

  it('prints an aligned table whose OBJECT column cancel accepts', () => {
    const lines = formatPendingTable([{ namespace: 'team', apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', bundle: 'app', state: 'pending', deletionTimestamp: '2026-11-21T12:00:00Z', deleteAfter: '2026-11-21T13:00:00.000Z' }], NOW);
    expect(lines).toEqual([
      'NAMESPACE  OBJECT               BUNDLE  STATE    WAITING-FOR  DELETE-AFTER              DUE',
      'team       Deployment.apps/web  app     pending  -            2026-11-21T13:00:00.000Z  in 1h0m0s',
    ]);
  });
});
