import { changedPaths, classifyApply } from '../../../src/cli/diff.js';
import { expiryOf, formatDue, formatPendingTable } from '../../../src/cli/pending.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';

const BUNDLE_UID = 'bundle-uid';

function live(modify: (o: LiveObject) => void = () => undefined): LiveObject {
  const o: LiveObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', uid: 'c-uid', resourceVersion: '5', managedFields: [] }, data: { v: '1' } };
  modify(o);
  return o;
}
const ownedBy = (uid: string, kind = 'Bundle') => (o: LiveObject) => {
  o.metadata.ownerReferences = [{ apiVersion: kind === 'Bundle' ? 'smith.atlassian.com/v1' : 'v1', kind, name: 'owner', uid, controller: true }];
};
const withData = (v: string) => (o: LiveObject) => {
  o.data = { v };
};

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

describe('classifyApply', () => {
  it.each([
    ['create', undefined, live(), BUNDLE_UID, 'create', undefined],
    ['unchanged', live(ownedBy(BUNDLE_UID)), live(ownedBy(BUNDLE_UID)), BUNDLE_UID, 'unchanged', undefined],
    ['change', live(ownedBy(BUNDLE_UID)), live((o) => [ownedBy(BUNDLE_UID)(o), withData('2')(o)]), BUNDLE_UID, 'change', 'data.v'],
    ['adopt', live(), live(ownedBy(BUNDLE_UID)), BUNDLE_UID, 'adopt', 'then changes metadata.ownerReferences'],
    ['refuse another controller', live(ownedBy('x', 'Deployment')), live(), BUNDLE_UID, 'refuse', 'controlled by Deployment owner'],
    ['refuse when the Bundle does not exist yet', live(ownedBy('old-bundle')), live(), undefined, 'refuse', 'controlled by Bundle owner'],
  ])('%s', (_case, liveObject, dryRun, bundleUid, action, detail) => {
    expect(classifyApply({ live: liveObject, dryRun, bundleUid })).toEqual(detail === undefined ? { action } : { action, detail });
  });
});

describe('pending expiry', () => {
  const NOW = Date.UTC(2026, 10, 21, 12);
  it.each([
    [{ 'smith.atlassian.com/deletionTimestamp': '2026-11-21T12:00:00Z', 'smith.atlassian.com/deletionDelay': '1h30m' }, { deleteAfter: '2026-11-21T13:30:00.000Z' }],
    [{ 'smith.atlassian.com/deletionTimestamp': '2026-11-21T12:00:00Z' }, { problem: 'no smith.atlassian.com/deletionDelay: the operator keeps it' }],
    [{ 'smith.atlassian.com/deletionTimestamp': 'yesterday', 'smith.atlassian.com/deletionDelay': '1h' }, { problem: 'unreadable smith.atlassian.com/deletionTimestamp "yesterday": the operator restarts the countdown' }],
  ])('%j', (annotations, want) => {
    expect(expiryOf(annotations)).toEqual(want);
  });

  it.each([
    ['2026-11-21T13:30:00.000Z', 'in 1h30m0s'],
    ['2026-11-21T11:59:57.000Z', 'overdue by 3s'],
    [undefined, '-'],
  ])('due %s', (deleteAfter, want) => {
    expect(formatDue(deleteAfter, NOW)).toBe(want);
  });

  it('prints an aligned table whose OBJECT column cancel accepts', () => {
    const lines = formatPendingTable([{ namespace: 'team', apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', bundle: 'app', state: 'pending', deletionTimestamp: '2026-11-21T12:00:00Z', deleteAfter: '2026-11-21T13:00:00.000Z' }], NOW);
    expect(lines).toEqual([
      'NAMESPACE  OBJECT               BUNDLE  STATE    DELETE-AFTER              DUE',
      'team       Deployment.apps/web  app     pending  2026-11-21T13:00:00.000Z  in 1h0m0s',
    ]);
  });
});
