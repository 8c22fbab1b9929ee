import { fieldChanges, formatFieldChange, maskSecretValues, redactChanges } from '../../../src/cli/field-changes.js';
import { comparePending, formatDue, formatPendingTable, type PendingObject } from '../../../src/cli/pending-list.js';

describe('fieldChanges', () => {
  it.each([
    [{ data: { v: '1' } }, { data: { v: '1' } }, []],
    [{ data: { v: '1' } }, { data: { v: '2' } }, [{ path: 'data.v', old: '1', new: '2' }]],
    [{ data: {} }, { data: { v: '2' } }, [{ path: 'data.v', new: '2' }]],
    [{ data: { v: '1' } }, { data: {} }, [{ path: 'data.v', old: '1' }]],
    [
      { metadata: { resourceVersion: '1', labels: { a: 'b' } } },
      { metadata: { resourceVersion: '2', labels: { a: 'c' } } },
      [{ path: 'metadata.labels.a', old: 'b', new: 'c' }],
    ],
    [{ status: { x: 1 } }, { status: { x: 2 } }, []],
    [
      { spec: { a: { b: { c: { d: 1 } } } } },
      { spec: { a: { b: { c: { d: 2 } } } } },
      [{ path: 'spec.a.b.c', old: { d: 1 }, new: { d: 2 } }],
    ],
    [{ spec: { list: [1] } }, { spec: { list: [1, 2] } }, [{ path: 'spec.list', old: [1], new: [1, 2] }]],
  ])('%j -> %j', (before, after, want) => {
    expect(fieldChanges(before, after)).toEqual(want);
  });

  it('shows old → new', () => {
    expect(fieldChanges({ data: { v: '1' } }, { data: { v: '2', w: 'x' } }).map(formatFieldChange)).toEqual([
      'data.v: "1" → "2"',
      'data.w: (none) → "x"',
    ]);
  });

  it('never shows a Secret value, and shows what else changes in a Secret', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret' };
    const changes = maskSecretValues(
      secret,
      fieldChanges(
        { data: { pw: 'b2xk' }, metadata: { labels: { a: 'b' } } },
        { data: { pw: 'bmV3', added: 'eA==' }, stringData: { s: 'plain' }, metadata: { labels: { a: 'c' } } },
      ),
    );
    expect(changes.map(formatFieldChange)).toEqual([
      'data.added: (none) → *** (after)',
      'data.pw: *** (before) → *** (after)',
      'metadata.labels.a: "b" → "c"',
      'stringData: (none) → {"s":"*** (after)"}',
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/b2xk|bmV3|eA==|plain/);
    // A ConfigMap's values are shown.
    expect(maskSecretValues({ apiVersion: 'v1', kind: 'ConfigMap' }, fieldChanges({ data: { v: '1' } }, { data: { v: '2' } }))).toEqual([
      { path: 'data.v', old: '1', new: '2' },
    ]);
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
    const row = (name: string, deleteAfter?: string): PendingObject => ({
      namespace: 'ns',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name,
      bundle: 'b',
      state: 'pending',
      deletionTimestamp: '',
      ...(deleteAfter ? { deleteAfter } : {}),
    });
    const rows = [row('kept'), row('late', '2026-11-21T13:00:00.000Z'), row('early', '2026-11-21T12:00:00.000Z')];
    expect(rows.sort(comparePending).map((r) => r.name)).toEqual(['early', 'late', 'kept']);
  });

  it('a due deletion held by a gate says what it waits for, not how overdue it is', () => {
    expect(formatDue('2026-11-21T11:00:00.000Z', NOW, 'Approval')).toBe('when approved');
    expect(formatDue('2026-11-21T11:00:00.000Z', NOW, 'BundleReady')).toBe("when its Bundle's resources are Ready");
    expect(formatDue('2026-11-21T13:00:00.000Z', NOW, 'Delay')).toBe('in 1h0m0s');
  });

  it('prints an aligned table whose OBJECT column cancel accepts', () => {
    const lines = formatPendingTable(
      [
        {
          namespace: 'team',
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'web',
          bundle: 'app',
          state: 'pending',
          deletionTimestamp: '2026-11-21T12:00:00Z',
          deleteAfter: '2026-11-21T13:00:00.000Z',
        },
      ],
      NOW,
    );
    expect(lines).toEqual([
      'NAMESPACE  OBJECT               BUNDLE  STATE    WAITING-FOR  DELETE-AFTER              DUE',
      'team       Deployment.apps/web  app     pending  -            2026-11-21T13:00:00.000Z  in 1h0m0s',
    ]);
  });
});

describe('redactChanges', () => {
  it('blanks every value a reference substituted, wherever it lands', () => {
    const changes = fieldChanges(
      { data: { url: 'postgres://u:old@db' } },
      { data: { url: 'postgres://u:hunter22@db', pw: 'hunter22' }, spec: { port: 54321 } },
    );
    const redacted = redactChanges(changes, ['hunter22', '54321']);
    expect(redacted.map(formatFieldChange)).toEqual([
      'data.pw: (none) → "[redacted]"',
      'data.url: "postgres://u:old@db" → "postgres://u:[redacted]@db"',
      'spec: (none) → {"port":"[redacted]"}',
    ]);
  });
});
