/**
 * `bundlesmith tree` and `status`, pure parts: the tree's shape (by
 * references, what the collector sees owned, pending deletions) and its
 * plain rendering, against golden text with the time frozen.
 */
import { BundleSchema, type Bundle } from '../../../src/api/bundle.js';
import { formatSummaryTable, summarize, describeStatus } from '../../../src/cli/status.js';
import { buildTree, palette, renderTree, type TreeObject } from '../../../src/cli/tree.js';

const NOW = Date.parse('2026-11-23T12:00:00Z');
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
const ready = [{ type: 'Ready', status: 'True' as const }];

function bundle(): Bundle {
  return BundleSchema.parse({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'web', namespace: 'team', uid: 'b-uid', generation: 3 },
    spec: {
      resources: [
        { name: 'cfg', spec: { object: cm('cfg') } },
        { name: 'db', spec: { object: cm('db') } },
        {
          name: 'app',
          references: [{ resource: 'cfg' }, { resource: 'db' }],
          spec: { object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'app' } } },
        },
        {
          name: 'svc',
          references: [{ resource: 'app' }],
          spec: { object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'app' } } },
        },
      ],
    },
    status: {
      observedGeneration: 3,
      conditions: [
        { type: 'Ready', status: 'False', reason: 'DependenciesNotReady', message: '1 resource blocked' },
        { type: 'InProgress', status: 'True' },
      ],
      resourcesReady: '3/4',
      resourceStatuses: [
        { name: 'cfg', conditions: ready },
        { name: 'db', conditions: ready },
        { name: 'app', conditions: ready },
        { name: 'svc', conditions: [{ type: 'Blocked', status: 'True', reason: 'DependenciesNotReady', message: 'waiting for app' }] },
      ],
      pendingDeletions: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'old',
          deletionTimestamp: '2026-11-23T11:59:00Z',
          deleteAfter: '2026-11-23T12:03:12Z',
        },
      ],
    },
  });
}

const obj = (kind: string, name: string, uid: string, owners: string[] = []): TreeObject => ({
  apiVersion: 'v1',
  kind,
  metadata: { name, uid, ownerReferences: owners.map((o) => ({ uid: o })) },
});

describe('bundlesmith tree', () => {
  const live = new Map<string, TreeObject>([
    ['cfg', obj('ConfigMap', 'cfg', 'cfg-uid', ['b-uid'])],
    ['db', obj('ConfigMap', 'db', 'db-uid', ['b-uid'])],
    ['app', obj('Deployment', 'app', 'app-uid', ['b-uid', 'cfg-uid', 'db-uid'])],
  ]);
  const owners = [
    ...live.values(),
    obj('ReplicaSet', 'app-5d8f', 'rs-uid', ['app-uid']),
    obj('Pod', 'app-5d8f-x1', 'pod-uid', ['rs-uid']),
    obj('Pod', 'loop', 'loop-uid', ['loop-uid']),
  ];

  it("hangs each resource under its first dependency, the collector's view under each object, the countdowns last (golden)", () => {
    const lines = renderTree(buildTree({ bundle: bundle(), live, owners, now: NOW }), palette(false));
    expect(lines).toEqual([
      'Bundle team/web  InProgress  3/4 ready  1 pending deletion',
      '├─ ConfigMap/cfg  Ready',
      '│  └─ Deployment/app  Ready  also needs db',
      '│     ├─ ReplicaSet/app-5d8f',
      '│     │  └─ Pod/app-5d8f-x1',
      '│     └─ Service/app  Blocked  (not created)  waiting for app',
      '└─ ConfigMap/db  Ready',
      'pending deletion (put the resource back in the Bundle to keep it):',
      '└─ ConfigMap/old  deletes in 3m12s  (after 2026-11-23T12:03:12Z)',
    ]);
  });

  it('a due deletion held by a gate says what it waits for instead of a countdown', () => {
    const b = bundle();
    const status = b.status as { pendingDeletions: { waitingFor?: string; deleteAfter: string }[] };
    status.pendingDeletions = [
      { ...(status.pendingDeletions[0] as { deleteAfter: string }), waitingFor: 'Approval' },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'older',
        deletionTimestamp: '2026-11-23T11:00:00Z',
        deleteAfter: '2026-11-23T11:00:00Z',
        waitingFor: 'BundleReady',
      } as never,
    ];
    const lines = renderTree(buildTree({ bundle: b, live, owners, now: NOW }), palette(false));
    expect(lines.slice(-2)).toEqual([
      '├─ ConfigMap/old  waits for approval (bundlesmith approve)  (after 2026-11-23T12:03:12Z)',
      "└─ ConfigMap/older  waits for the Bundle's resources to be Ready  (after 2026-11-23T11:00:00Z)",
    ]);
  });

  it('colours only when asked', () => {
    const lines = renderTree(buildTree({ bundle: bundle(), live, owners, now: NOW }), palette(true));
    expect(lines[1]).toContain('\x1b[32mReady\x1b[0m');
  });

  it('a reference cycle (an invalid spec) still renders every resource once', () => {
    const b = bundle();
    const first = b.spec.resources[0];
    if (first) first.references = [{ resource: 'svc' }];
    const tree = buildTree({ bundle: b, live: new Map(), owners: [], now: NOW });
    const names = JSON.stringify(tree)
      .match(/"resource":"[a-z]+"/g)
      ?.sort();
    expect(names).toEqual(['"resource":"app"', '"resource":"cfg"', '"resource":"db"', '"resource":"svc"']);
  });
});

describe('bundlesmith status', () => {
  it('one line per Bundle, with the soonest pending deletion', () => {
    expect(formatSummaryTable([summarize(bundle(), NOW)])).toEqual([
      'NAMESPACE  BUNDLE  STATE       READY  ERRORS  PENDING  SOONEST',
      'team       web     InProgress  3/4    0       1        ConfigMap/old deletes in 3m12s',
    ]);
  });

  it('a deletion held by a gate says what it waits for, and one that time alone will delete is the soonest', () => {
    const b = bundle();
    b.status = {
      ...b.status,
      pendingDeletions: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'held',
          deletionTimestamp: '2026-11-23T10:00:00Z',
          deleteAfter: '2026-11-23T11:00:00Z',
          waitingFor: 'Approval',
        },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'old',
          deletionTimestamp: '2026-11-23T11:59:00Z',
          deleteAfter: '2026-11-23T12:03:12Z',
          waitingFor: 'Delay',
        },
      ],
    };
    expect(summarize(b, NOW).soonest).toEqual({ object: 'ConfigMap/old', remainingMs: 192_000, waitingFor: 'Delay' });
    expect(describeStatus(b, NOW).slice(-2)).toEqual([
      '  ConfigMap/held waits for approval (bundlesmith approve) (after 2026-11-23T11:00:00Z)',
      '  ConfigMap/old deletes in 3m12s (after 2026-11-23T12:03:12Z)',
    ]);
    b.status = {
      ...b.status,
      pendingDeletions: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'held',
          deletionTimestamp: '2026-11-23T10:00:00Z',
          deleteAfter: '2026-11-23T11:00:00Z',
          waitingFor: 'BundleReady',
        },
      ],
    };
    expect(formatSummaryTable([summarize(b, NOW)])[1]).toContain("ConfigMap/held waits for the Bundle's resources to be Ready");
  });

  it('Ready only for the generation the status observed', () => {
    const b = bundle();
    b.status = { ...b.status, conditions: ready };
    expect(summarize(b, NOW).ready).toBe(true);
    b.metadata.generation = 4;
    expect(summarize(b, NOW)).toMatchObject({ ready: false, state: 'InProgress' });
    expect(describeStatus(b, NOW)[1]).toBe('  the operator has not yet observed generation 4 (last observed: 3)');
  });

  it('conditions in words, what is not ready and why', () => {
    expect(describeStatus(bundle(), NOW)).toEqual([
      'Bundle team/web: InProgress, 3/4 resources ready',
      '  Ready: False (DependenciesNotReady): 1 resource blocked',
      '  InProgress: True',
      'resources not ready:',
      '  svc: Blocked: waiting for app',
      'pending deletions (put the resource back in the Bundle to keep it):',
      '  ConfigMap/old deletes in 3m12s (after 2026-11-23T12:03:12Z)',
    ]);
  });
});
