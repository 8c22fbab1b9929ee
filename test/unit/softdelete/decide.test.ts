import { Annotations, Labels } from '../../../src/api/names.js';
import { decideSoftDelete, deletesNow, pendingDeletionOf, type SoftDeleteDecision } from '../../../src/core/softdelete/decide.js';
import { decideReleasedSweep, isReleasedByBundle, type ReleasedObjectMeta } from '../../../src/core/softdelete/sweep.js';
import { formatRfc3339, parseRfc3339 } from '../../../src/core/rfc3339.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0); // 2026-11-21T12:00:00.000Z
const SECOND = 1_000;
const HOUR = 3_600_000;
const iso = (ms: number): string => formatRfc3339(ms);

type AnnotationModifier = (annotations: Record<string, string>) => void;
const delay =
  (value: string): AnnotationModifier =>
  (a) => {
    a[Annotations.deletionDelay] = value;
  };
const stamp =
  (value: string): AnnotationModifier =>
  (a) => {
    a[Annotations.deletionTimestamp] = value;
  };
const other =
  (key: string, value: string): AnnotationModifier =>
  (a) => {
    a[key] = value;
  };
function annotations(...modifiers: AnnotationModifier[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (const modify of modifiers) modify(result);
  return result;
}

describe('decideSoftDelete', () => {
  describe('object still in spec', () => {
    it.each<[string, Record<string, string> | undefined, SoftDeleteDecision]>([
      ['no annotations', undefined, { action: 'keep' }],
      ['unrelated annotations', annotations(other('a', 'b')), { action: 'keep' }],
      ['a delay, no countdown', annotations(delay('24h')), { action: 'keep' }],
      ['a running countdown', annotations(delay('24h'), stamp(iso(NOW - HOUR))), { action: 'cancel' }],
      ['an expired countdown', annotations(delay('1h'), stamp(iso(NOW - 2 * HOUR))), { action: 'cancel' }],
      ['a stamp without a delay', annotations(stamp(iso(NOW))), { action: 'cancel' }],
      ['an unparsable stamp', annotations(delay('1h'), stamp('yesterday')), { action: 'cancel' }],
      ['an invalid delay (reported elsewhere, object stays)', annotations(delay('1d')), { action: 'keep' }],
    ])('%s', (_name, objectAnnotations, want) => {
      expect(decideSoftDelete({ inSpec: true, annotations: objectAnnotations, now: NOW })).toEqual(want);
    });
  });

  describe('object out of spec', () => {
    it.each<[string, Record<string, string> | undefined, SoftDeleteDecision]>([
      ['no annotations at all', undefined, { action: 'delete' }],
      ['no soft-delete annotations', annotations(other('a', 'b')), { action: 'delete' }],
      [
        'a delay, no countdown yet',
        annotations(delay('24h')),
        {
          action: 'mark',
          deletionTimestamp: iso(NOW),
          deleteAfter: iso(NOW + 24 * HOUR),
          deleteAtMs: NOW + 24 * HOUR,
          sealed: { delayMs: 24 * HOUR, policy: 'Delete' },
        },
      ],
      [
        'a composite delay',
        annotations(delay('1h30m')),
        {
          action: 'mark',
          deletionTimestamp: iso(NOW),
          deleteAfter: iso(NOW + 1.5 * HOUR),
          deleteAtMs: NOW + 1.5 * HOUR,
          sealed: { delayMs: 1.5 * HOUR, policy: 'Delete' },
        },
      ],
      [
        'a zero delay "0": marked first so the stamp is visible',
        annotations(delay('0')),
        { action: 'mark', deletionTimestamp: iso(NOW), deleteAfter: iso(NOW), deleteAtMs: NOW, sealed: { delayMs: 0, policy: 'Delete' } },
      ],
      [
        'a zero delay "0s", already stamped: expired',
        annotations(delay('0s'), stamp(iso(NOW))),
        {
          action: 'expired',
          deletionTimestamp: iso(NOW),
          deleteAfter: iso(NOW),
        },
      ],
      [
        'a sub-millisecond delay rounds the deletion up',
        annotations(delay('1500us')),
        {
          action: 'mark',
          deletionTimestamp: iso(NOW),
          deleteAfter: iso(NOW + 2),
          deleteAtMs: NOW + 2,
          sealed: { delayMs: 2, policy: 'Delete' },
        },
      ],
      [
        'a running countdown',
        annotations(delay('24h'), stamp(iso(NOW - HOUR))),
        { action: 'wait', deletionTimestamp: iso(NOW - HOUR), deleteAfter: iso(NOW + 23 * HOUR), deleteAtMs: NOW + 23 * HOUR },
      ],
      [
        'one millisecond before the end',
        annotations(delay('1h'), stamp(iso(NOW - HOUR + 1))),
        { action: 'wait', deletionTimestamp: iso(NOW - HOUR + 1), deleteAfter: iso(NOW + 1), deleteAtMs: NOW + 1 },
      ],
      [
        'exactly at the end',
        annotations(delay('1h'), stamp(iso(NOW - HOUR))),
        { action: 'expired', deletionTimestamp: iso(NOW - HOUR), deleteAfter: iso(NOW) },
      ],
      [
        'long past the end',
        annotations(delay('1h'), stamp(iso(NOW - 48 * HOUR))),
        { action: 'expired', deletionTimestamp: iso(NOW - 48 * HOUR), deleteAfter: iso(NOW - 47 * HOUR) },
      ],
      [
        "Smith's stamp format (RFC 3339 without fraction) is reported as written",
        annotations(delay('24h'), stamp('2026-11-21T11:00:00Z')),
        { action: 'wait', deletionTimestamp: '2026-11-21T11:00:00Z', deleteAfter: iso(NOW + 23 * HOUR), deleteAtMs: NOW + 23 * HOUR },
      ],
      [
        'a stamp with an offset',
        annotations(delay('1h'), stamp('2026-11-21T13:30:00+02:00')),
        {
          action: 'wait',
          deletionTimestamp: '2026-11-21T13:30:00+02:00',
          deleteAfter: iso(NOW + 30 * 60 * SECOND),
          deleteAtMs: NOW + 30 * 60 * SECOND,
        },
      ],
      [
        'a stamp in the future (clock skew): waits for stamp + delay',
        annotations(delay('1h'), stamp(iso(NOW + 10 * SECOND))),
        {
          action: 'wait',
          deletionTimestamp: iso(NOW + 10 * SECOND),
          deleteAfter: iso(NOW + HOUR + 10 * SECOND),
          deleteAtMs: NOW + HOUR + 10 * SECOND,
        },
      ],
      [
        'a stamp in the future with a zero delay: waits for the stamp',
        annotations(delay('0s'), stamp(iso(NOW + 10 * SECOND))),
        { action: 'wait', deletionTimestamp: iso(NOW + 10 * SECOND), deleteAfter: iso(NOW + 10 * SECOND), deleteAtMs: NOW + 10 * SECOND },
      ],
      ...['yesterday', '', '2026-11-21', '2026-11-21T12:00:00', '2026-02-30T12:00:00Z', '2026-11-21 12:00:00Z', '1795262400000'].map(
        (badStamp): [string, Record<string, string>, SoftDeleteDecision] => [
          `an unparsable stamp ${JSON.stringify(badStamp)}: countdown restarts now`,
          annotations(delay('1h'), stamp(badStamp)),
          {
            action: 'mark',
            deletionTimestamp: iso(NOW),
            deleteAfter: iso(NOW + HOUR),
            deleteAtMs: NOW + HOUR,
            sealed: { delayMs: HOUR, policy: 'Delete' },
          },
        ],
      ),
    ])('%s', (_name, objectAnnotations, want) => {
      expect(decideSoftDelete({ inSpec: false, annotations: objectAnnotations, now: NOW })).toEqual(want);
    });

    it('marks with now rounded up to whole milliseconds', () => {
      expect(decideSoftDelete({ inSpec: false, annotations: annotations(delay('1s')), now: NOW + 0.25 })).toEqual({
        action: 'mark',
        deletionTimestamp: iso(NOW + 1),
        deleteAfter: iso(NOW + 1 + SECOND),
        deleteAtMs: NOW + 1 + SECOND,
        sealed: { delayMs: SECOND, policy: 'Delete' },
      });
    });

    it.each<[string, Record<string, string>, string[]]>([
      ['an empty delay', annotations(delay('')), [Annotations.deletionDelay, 'empty']],
      ['a delay without unit', annotations(delay('24')), ['"24"', 'time: missing unit in duration "24"']],
      ['a delay in days', annotations(delay('1d')), ['"1d"', 'time: unknown unit "d" in duration "1d"']],
      ['a delay with spaces', annotations(delay(' 24h')), ['" 24h"', 'time: invalid duration']],
      ['a negative delay', annotations(delay('-1h')), ['"-1h"', 'negative']],
      ['an overflowing delay', annotations(delay('3000000h')), ['"3000000h"', 'time: invalid duration']],
      ['a bad delay on a stamped object', annotations(delay('soon'), stamp(iso(NOW - 48 * HOUR))), ['"soon"']],
      ['a bad delay with a bad stamp', annotations(delay('-5s'), stamp('garbage')), ['"-5s"', 'negative']],
      [
        'a stamp whose delay annotation was removed',
        annotations(stamp(iso(NOW - 48 * HOUR))),
        [Annotations.deletionTimestamp, Annotations.deletionDelay, 'missing', iso(NOW - 48 * HOUR)],
      ],
      [
        'a deletion time past year 9999',
        annotations(delay('24h'), stamp('9999-12-31T12:00:00Z')),
        ['9999-12-31T12:00:00Z', '24h0m0s', 'year 9999'],
      ],
    ])('%s is invalid, never a deletion', (_name, objectAnnotations, messageParts) => {
      const decision = decideSoftDelete({ inSpec: false, annotations: objectAnnotations, now: NOW });
      expect(decision.action).toBe('invalid');
      if (decision.action !== 'invalid') return;
      for (const part of messageParts) expect(decision.message).toContain(part);
    });
  });

  it('walks a countdown from mark to expired, and re-adding cancels it', () => {
    const steps: SoftDeleteDecision['action'][] = [];
    let live = annotations(delay('2h'));
    let now = NOW;
    const pass = (inSpec: boolean): SoftDeleteDecision => {
      const decision = decideSoftDelete({ inSpec, annotations: live, now });
      steps.push(decision.action);
      if (decision.action === 'mark') live = { ...live, [Annotations.deletionTimestamp]: decision.deletionTimestamp };
      if (decision.action === 'cancel') {
        const { [Annotations.deletionTimestamp]: _removed, ...rest } = live;
        live = rest;
      }
      return decision;
    };
    pass(false);
    now += HOUR;
    pass(false);
    pass(true);
    pass(true);
    now += HOUR;
    pass(false);
    now += 2 * HOUR;
    pass(false);
    expect(steps).toEqual(['mark', 'wait', 'cancel', 'keep', 'mark', 'expired']);
  });
});

describe('pendingDeletionOf / deletesNow', () => {
  const countdown = { deletionTimestamp: iso(NOW), deleteAfter: iso(NOW + HOUR) };
  it.each<[SoftDeleteDecision, ReturnType<typeof pendingDeletionOf>, boolean]>([
    [{ action: 'keep' }, undefined, false],
    [{ action: 'cancel' }, undefined, false],
    [{ action: 'delete' }, undefined, true],
    [{ action: 'invalid', message: 'x' }, undefined, false],
    [
      { action: 'mark', ...countdown, deleteAtMs: NOW + HOUR, sealed: { delayMs: HOUR, policy: 'Delete' } },
      { ...countdown, waitingFor: 'Delay' },
      false,
    ],
    [{ action: 'wait', ...countdown, deleteAtMs: NOW + HOUR }, { ...countdown, waitingFor: 'Delay' }, false],
    [{ action: 'await', waitingFor: 'Approval', message: 'm', ...countdown }, { ...countdown, waitingFor: 'Approval' }, false],
    [{ action: 'await', waitingFor: 'BundleReady', message: 'm', ...countdown }, { ...countdown, waitingFor: 'BundleReady' }, false],
    [{ action: 'release' }, undefined, false],
    [{ action: 'expired', ...countdown }, countdown, true],
  ])('%j', (decision, pending, deletes) => {
    expect(pendingDeletionOf(decision)).toEqual(pending);
    expect(deletesNow(decision)).toBe(deletes);
  });
});

describe('orphan sweep', () => {
  const released = (meta: Partial<ReleasedObjectMeta> = {}): ReleasedObjectMeta => ({
    labels: { [Labels.formerBundle]: 'my-bundle' },
    ownerReferences: [],
    ...meta,
  });

  it.each<[string, ReleasedObjectMeta, boolean]>([
    ['released: label, no owners', released(), true],
    ['released: label, owners undefined', released({ ownerReferences: undefined }), true],
    ['released: label, non-controller owner', released({ ownerReferences: [{ controller: false }, {}] }), true],
    ['adopted again: controller owner', released({ ownerReferences: [{ controller: true }] }), false],
    ['never released: no label', { labels: { app: 'x' } }, false],
    ['no metadata', {}, false],
  ])('isReleasedByBundle: %s', (_name, meta, want) => {
    expect(isReleasedByBundle(meta)).toBe(want);
  });

  it.each<[string, ReleasedObjectMeta, ReturnType<typeof decideReleasedSweep>]>([
    ['not released', { labels: {} }, { action: 'skip', reason: `no ${Labels.formerBundle} label` }],
    [
      'adopted again',
      released({ ownerReferences: [{ controller: true }], annotations: annotations(delay('1h')) }),
      { action: 'skip', reason: 'has a controller owner' },
    ],
    [
      'no delay: a label alone is no permission to delete',
      released(),
      { action: 'skip', reason: `${Labels.formerBundle} label without a deletionDelay: not released by a Bundle, kept` },
    ],
    [
      'a delay, not stamped',
      released({ annotations: annotations(delay('1h')) }),
      {
        action: 'mark',
        deletionTimestamp: iso(NOW),
        deleteAfter: iso(NOW + HOUR),
        deleteAtMs: NOW + HOUR,
        sealed: { delayMs: HOUR, policy: 'Delete' },
      },
    ],
    [
      'a countdown running',
      released({ annotations: annotations(delay('2h'), stamp(iso(NOW - HOUR))) }),
      { action: 'wait', deletionTimestamp: iso(NOW - HOUR), deleteAfter: iso(NOW + HOUR), deleteAtMs: NOW + HOUR },
    ],
    [
      'a countdown over',
      released({ annotations: annotations(delay('1h'), stamp(iso(NOW - HOUR))) }),
      { action: 'expired', deletionTimestamp: iso(NOW - HOUR), deleteAfter: iso(NOW) },
    ],
  ])('decideReleasedSweep: %s', (_name, meta, want) => {
    expect(decideReleasedSweep(meta, NOW)).toEqual(want);
  });

  it('keeps a released object whose delay cannot be read', () => {
    expect(decideReleasedSweep(released({ annotations: annotations(delay('1d'), stamp(iso(NOW - 48 * HOUR))) }), NOW).action).toBe(
      'invalid',
    );
  });
});

describe('RFC 3339 helpers', () => {
  it.each<[string, number | undefined]>([
    ['2026-11-21T12:00:00Z', NOW],
    ['2026-11-21T12:00:00.000Z', NOW],
    ['2026-11-21T12:00:00.123456789Z', NOW + 123],
    ['2026-11-21T14:00:00+02:00', NOW],
    ['2026-11-21T12:00:00', undefined],
    ['2026-11-21t12:00:00z', undefined],
    ['2026-13-01T00:00:00Z', undefined],
    ['', undefined],
  ])('parseRfc3339(%j)', (text, want) => {
    expect(parseRfc3339(text)).toBe(want);
  });

  it.each<[number, string]>([
    [NOW, '2026-11-21T12:00:00.000Z'],
    [NOW + 1, '2026-11-21T12:00:00.001Z'],
    [0, '1970-01-01T00:00:00.000Z'],
  ])('formatRfc3339(%d)', (ms, want) => {
    expect(formatRfc3339(ms)).toBe(want);
  });

  it('refuses instants past year 9999', () => {
    expect(() => formatRfc3339(Date.UTC(10000, 0, 1))).toThrow(RangeError);
  });
});

describe('decideSoftDelete with server-time bounds (issue 9)', () => {
  const NOW_MS = Date.parse('2026-01-01T00:00:00.000Z');
  const annotations = { [Annotations.deletionDelay]: '10s' };
  it.each<[string, number | undefined, string]>([
    ['stamps with the upper bound', NOW_MS + 1500, '2026-01-01T00:00:01.500Z'],
    ['never with less than the lower bound', NOW_MS - 1500, '2026-01-01T00:00:00.000Z'],
    ['with the lower bound when no upper bound is given', undefined, '2026-01-01T00:00:00.000Z'],
  ])('%s', (_name, stampAt, stamp) => {
    const d = decideSoftDelete({ inSpec: false, annotations, now: NOW_MS, ...(stampAt !== undefined ? { stampAt } : {}) });
    expect(d).toMatchObject({ action: 'mark', deletionTimestamp: stamp });
  });
  it('decides expiry on `now` only (the lower bound)', () => {
    const stamped = { ...annotations, [Annotations.deletionTimestamp]: '2026-01-01T00:00:00.000Z' };
    expect(decideSoftDelete({ inSpec: false, annotations: stamped, now: NOW_MS + 9_999, stampAt: NOW_MS + 60_000 }).action).toBe('wait');
    expect(decideSoftDelete({ inSpec: false, annotations: stamped, now: NOW_MS + 10_000, stampAt: NOW_MS + 10_000 }).action).toBe(
      'expired',
    );
  });
});
