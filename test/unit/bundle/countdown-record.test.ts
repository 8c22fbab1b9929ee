/**
 * The Bundle's status records its countdowns (red team 4: proofs on the
 * object bind its identity, not one moment, so an earlier copy of its own
 * annotations written back still checked and brought a deletion forward).
 * The record decides over them: status.declaredRules (what each listed
 * object's manifest declares) and status.pendingDeletions (each countdown's
 * stamp and deadline).
 */
import { describe, expect, it } from '@jest/globals';
import { Annotations } from '../../../src/api/names.js';
import {
  countdownRecordOf,
  declaredRulesOf,
  identityKey,
  latestStampsElsewhere,
  listedKeysOf,
  pendingRecordedAhead,
  withListedCountdownsCancelled,
  type CountdownRecord,
} from '../../../src/core/bundle/countdown-record.js';
import { planBundle } from '../../../src/core/bundle/plan.js';
import { planPrune } from '../../../src/core/bundle/prune.js';
import { buildBundleStatus } from '../../../src/core/bundle/status.js';
import { releasePatch } from '../../../src/core/bundle/release.js';
import { releaseSigner } from '../../../src/core/softdelete/provenance.js';
import { stampSeal } from '../../../src/core/softdelete/stamp-seal.js';
import {
  bundle,
  configMap,
  controlledByBundle,
  live,
  NOW,
  planInput,
  resource,
  withAnnotation,
  withRef,
  withResource,
  withUid,
} from './builders.js';

const seal = stampSeal(new Uint8Array(32).fill(7));
const HOUR = 3_600_000;
const NS = 'ns1';
const identity = { group: '', kind: 'ConfigMap', namespace: NS, name: 'a' };
const iso = (ms: number): string => new Date(ms).toISOString();

/** Object a, controlled, with these annotations (a declared-rules proof of `proofOf` when given). */
function object(annotations: Record<string, string>, proofOf?: Record<string, string>): ReturnType<typeof live> {
  let o = live(configMap('a'), controlledByBundle(), withUid('a-uid'));
  for (const [k, v] of Object.entries(annotations)) o = live(o, withAnnotation(k, v));
  const proof = proofOf === undefined ? undefined : seal.sealDeclared(identity, proofOf);
  if (proof !== undefined) o = live(o, withAnnotation(Annotations.declaredRules, proof));
  return o;
}

const record = (status: Parameters<typeof countdownRecordOf>[0]): CountdownRecord => countdownRecordOf(status, NS);
const prune = (o: ReturnType<typeof live>, countdownRecord: CountdownRecord | undefined, defaults?: { deletionDelay?: string }) =>
  planPrune({
    controlled: [o],
    inSpec: new Set(),
    now: NOW,
    stampSeal: seal,
    defaults,
    ...(countdownRecord ? { countdownRecord } : {}),
  })[0];

describe('status.declaredRules', () => {
  it('lists the resources whose manifest declares a rule, by group and kind', () => {
    const resources: Parameters<typeof declaredRulesOf>[0] = [
      {
        spec: {
          object: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'a', annotations: { [Annotations.deletionDelay]: '1h', other: 'x' } },
          },
        },
      },
      { spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' } } } },
      {
        spec: {
          object: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'd', annotations: { [Annotations.deletionPolicy]: 'Orphan', [Annotations.deleteWhen]: 'BundleReady' } },
          },
        },
      },
      { spec: {} },
    ];
    const declared = declaredRulesOf(resources);
    expect(declared).toEqual([
      { kind: 'ConfigMap', name: 'a', deletionDelay: '1h' },
      { group: 'apps', kind: 'Deployment', name: 'd', deletionPolicy: 'Orphan', deleteWhen: 'BundleReady' },
    ]);
    const read = record({ declaredRules: declared });
    expect(read.declared?.get(identityKey(identity))).toEqual({ [Annotations.deletionDelay]: '1h' });
    expect(read.declared?.get(identityKey({ group: 'apps', kind: 'Deployment', namespace: NS, name: 'd' }))).toEqual({
      [Annotations.deletionPolicy]: 'Orphan',
      [Annotations.deleteWhen]: 'BundleReady',
    });
    // A status written before the record existed holds none: the proofs alone decide.
    expect(record({}).declared).toBeUndefined();
  });

  it("an old proof written back (1s) over a manifest that now declares nothing: the Bundle's default (1h) holds", () => {
    const replayed = object({ [Annotations.deletionDelay]: '1s' }, { [Annotations.deletionDelay]: '1s' });
    expect(prune(replayed, record({ declaredRules: [] }), { deletionDelay: '1h' })).toMatchObject({
      action: 'mark',
      deleteAfter: iso(NOW + HOUR),
    });
    // Without a record, the proof is taken (a status written before it existed).
    expect(prune(replayed, undefined, { deletionDelay: '1h' })).toMatchObject({ action: 'mark', deleteAfter: iso(NOW + 1000) });
  });

  it('an old proof written back (1s) over a manifest that now declares 2h: 2h holds', () => {
    const replayed = object({ [Annotations.deletionDelay]: '1s' }, { [Annotations.deletionDelay]: '1s' });
    expect(prune(replayed, record({ declaredRules: [{ kind: 'ConfigMap', name: 'a', deletionDelay: '2h' }] }))).toMatchObject({
      action: 'mark',
      deleteAfter: iso(NOW + 2 * HOUR),
    });
  });

  it("the manifest's own shorter delay, recorded, is followed (0s over a default of 1h)", () => {
    const o = object({ [Annotations.deletionDelay]: '0s' }, { [Annotations.deletionDelay]: '0s' });
    expect(
      prune(o, record({ declaredRules: [{ kind: 'ConfigMap', name: 'a', deletionDelay: '0s' }] }), { deletionDelay: '1h' }),
    ).toMatchObject({ action: 'mark', deleteAfter: iso(NOW) });
  });

  it('a record that lost the entry but a genuine stricter proof: the proof still holds it back', () => {
    const o = object({ [Annotations.deletionDelay]: '1s' }, { [Annotations.deletionDelay]: '2h' });
    expect(prune(o, record({ declaredRules: [] }))).toMatchObject({ action: 'mark', deleteAfter: iso(NOW + 2 * HOUR) });
  });
});

describe('status.pendingDeletions', () => {
  // An earlier countdown (20s, cancelled) and the running one (1h, started 30 s ago).
  const earlier = iso(NOW - 10 * 60_000);
  const running = iso(NOW - 30_000);
  const replayed = object({
    [Annotations.deletionDelay]: '20s',
    [Annotations.deletionTimestamp]: earlier,
    [Annotations.stampProof]: seal.sign('a-uid', earlier, { delayMs: 20_000, policy: 'Delete' }),
  });
  const pending = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'a',
    deletionTimestamp: running,
    deleteAfter: iso(NOW - 30_000 + HOUR),
    waitingFor: 'Delay' as const,
  };

  it("an earlier countdown's stamp and proofs written back over a running 1h countdown: it starts again, with the recorded delay", () => {
    expect(prune(replayed, record({ pendingDeletions: [pending] }))).toMatchObject({
      action: 'mark',
      deletionTimestamp: iso(NOW),
      deleteAfter: iso(NOW + HOUR),
    });
    // The record cleared by another status writer (red team 9): a stamp it does not hold reads as none, the countdown
    // starts again from now (before, the replayed countdown had ended and the object was deleted).
    expect(prune(replayed, record({ pendingDeletions: [] }))).toMatchObject({
      action: 'mark',
      deletionTimestamp: iso(NOW),
      deleteAfter: iso(NOW + 20_000),
    });
    expect(prune(replayed, undefined)).toMatchObject({ action: 'mark', deletionTimestamp: iso(NOW) });
  });

  it('a stamp the record holds as written counts (the countdown ends); a later one counts too (it only puts the deletion off)', () => {
    const heldEntry = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'a',
      deletionTimestamp: earlier,
      deleteAfter: iso(NOW - 10 * 60_000 + 20_000),
      waitingFor: 'Delay' as const,
    };
    expect(prune(replayed, record({ pendingDeletions: [heldEntry] }))?.action).toBe('delete');
    const olderEntry = { ...heldEntry, deletionTimestamp: iso(NOW - 20 * 60_000), deleteAfter: iso(NOW - 20 * 60_000 + 20_000) };
    expect(prune(replayed, record({ pendingDeletions: [olderEntry] }))?.action).toBe('delete');
  });

  it('a countdown that waited for an approval waits for one again, an old approval written back with the old stamp not counting', () => {
    const approved = object({ ...replayed.metadata.annotations, [Annotations.deletionApproved]: iso(NOW - 5 * 60_000) });
    const due = { ...pending, deleteAfter: running, waitingFor: 'Approval' as const };
    expect(prune(approved, record({ pendingDeletions: [due] }))).toMatchObject({ action: 'mark', gates: ['Approval'] });
  });

  it('a later stamp than the record (a countdown started again) stands', () => {
    const later = object({
      [Annotations.deletionDelay]: '1h',
      [Annotations.deletionTimestamp]: running,
      [Annotations.stampProof]: seal.sign('a-uid', running, { delayMs: HOUR, policy: 'Delete' }),
    });
    expect(
      prune(
        later,
        record({ pendingDeletions: [{ ...pending, deletionTimestamp: earlier, deleteAfter: iso(NOW - 10 * 60_000 + 20_000) }] }),
      ),
    ).toMatchObject({ action: 'wait', deletionTimestamp: running });
  });

  it('a release starts the countdown again over a stamp written back, so the sweeper and the deletion guard read the new one', () => {
    const ops = releasePatch(replayed, { name: 'b' }, {}, { now: NOW, stampAt: NOW }, releaseSigner(new Uint8Array(32).fill(3)), {
      seal,
      record: record({ pendingDeletions: [pending] }),
    });
    expect(ops).toContainEqual({
      op: 'add',
      path: `/metadata/annotations/${Annotations.deletionTimestamp.replace('/', '~1')}`,
      value: iso(NOW),
    });
  });
});

describe('the countdowns a pass stamps are recorded first (pendingRecordedAhead)', () => {
  const entry = (name: string, stamp: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name,
    deletionTimestamp: stamp,
    deleteAfter: stamp,
    waitingFor: 'Delay' as const,
  });
  it("adds the new countdowns, replaces an object's older entry, keeps the others", () => {
    const recorded = [entry('a', iso(NOW - 1000)), entry('b', iso(NOW - 1000))];
    expect(pendingRecordedAhead(recorded, [entry('b', iso(NOW)), entry('c', iso(NOW))], 'ns1')).toEqual([
      entry('a', iso(NOW - 1000)),
      entry('b', iso(NOW)),
      entry('c', iso(NOW)),
    ]);
    expect(pendingRecordedAhead(undefined, [entry('c', iso(NOW))], 'ns1')).toEqual([entry('c', iso(NOW))]);
  });
  it('nothing to write when the record holds every one as given', () => {
    expect(pendingRecordedAhead([entry('a', iso(NOW))], [entry('a', iso(NOW))], 'ns1')).toBeUndefined();
    expect(pendingRecordedAhead([entry('a', iso(NOW))], [], 'ns1')).toBeUndefined();
  });
  it('one object at another version of its kind is the same entry (group and kind, not the version)', () => {
    const atV1 = { ...entry('x', iso(NOW - 1000)), apiVersion: 'example.com/v1', kind: 'Widget' };
    const atV2 = { ...entry('x', iso(NOW)), apiVersion: 'example.com/v2', kind: 'Widget' };
    expect(pendingRecordedAhead([atV1], [atV2], 'ns1')).toEqual([atV2]);
  });
});

describe('a pass that stops before deciding cancels the countdowns of what the spec lists again, in the record (red team 10)', () => {
  const entry = (name: string, waitingFor: 'Delay' | 'Approval' = 'Delay') => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name,
    deletionTimestamp: iso(NOW),
    deleteAfter: iso(NOW),
    waitingFor,
  });
  const listing = (...names: string[]) =>
    listedKeysOf(
      names.map((n) => ({ spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } } } })),
      'ns1',
    );
  it('drops the entries of listed objects and counts again; the others stay', () => {
    const status = {
      pendingDeletions: [entry('a'), entry('b', 'Approval'), entry('c', 'Approval')],
      pendingDeletionCount: 3,
      awaitingApprovalCount: 2,
    };
    expect(withListedCountdownsCancelled(status, listing('b', 'x'), 'ns1')).toEqual({
      pendingDeletions: [entry('a'), entry('c', 'Approval')],
      pendingDeletionCount: 2,
      awaitingApprovalCount: 1,
    });
  });
  it('an entry the caller knows is over (its object gone or no longer held) goes too; the counts follow', () => {
    const status = { pendingDeletions: [entry('a'), entry('b', 'Approval')], pendingDeletionCount: 2, awaitingApprovalCount: 1 };
    expect(withListedCountdownsCancelled(status, listing(), 'ns1', (p) => p.name === 'b')).toEqual({
      pendingDeletions: [entry('a')],
      pendingDeletionCount: 1,
      awaitingApprovalCount: 0,
    });
  });
  it('nothing listed again: the status as it was', () => {
    const status = { pendingDeletions: [entry('a')], pendingDeletionCount: 1 };
    expect(withListedCountdownsCancelled(status, listing('x'), 'ns1')).toBe(status);
  });
  it('a sealed stamp of a countdown cancelled in the record reads as none: a new countdown starts from now', () => {
    const stamp = iso(NOW - 60_000);
    const o = object({
      [Annotations.deletionDelay]: '20s',
      [Annotations.deletionTimestamp]: stamp,
      [Annotations.stampProof]: seal.sign('a-uid', stamp, { delayMs: 20_000, policy: 'Delete' }),
    });
    const held = {
      pendingDeletions: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'a',
          deletionTimestamp: stamp,
          deleteAfter: iso(NOW - 40_000),
          waitingFor: 'Delay' as const,
        },
      ],
    };
    expect(prune(o, record(held))?.action).toBe('delete');
    expect(prune(o, record(withListedCountdownsCancelled(held, listing('a'), 'ns1')))).toMatchObject({
      action: 'mark',
      deletionTimestamp: iso(NOW),
    });
  });
});

describe('a countdown another Bundle of the namespace records later cancels an earlier stamp (red team 10: a hand-over this Bundle did not see)', () => {
  const t1 = iso(NOW - 60_000);
  const t3 = iso(NOW - 10_000);
  const o = object({
    [Annotations.deletionDelay]: '20s',
    [Annotations.deletionTimestamp]: t1,
    [Annotations.stampProof]: seal.sign('a-uid', t1, { delayMs: 20_000, policy: 'Delete' }),
  });
  const own = {
    pendingDeletions: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'a',
        deletionTimestamp: t1,
        deleteAfter: iso(NOW - 40_000),
        waitingFor: 'Delay' as const,
      },
    ],
  };
  const other = {
    pendingDeletions: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'a',
        deletionTimestamp: t3,
        deleteAfter: iso(NOW + 10_000),
        waitingFor: 'Delay' as const,
      },
    ],
  };
  it("the latest stamp per object over the other Bundles' records", () => {
    expect(latestStampsElsewhere([own, other, undefined], NS)).toEqual(
      new Map([[identityKey({ group: '', kind: 'ConfigMap', namespace: NS, name: 'a' }), t3]]),
    );
  });
  it("this Bundle's record holds T1, another Bundle recorded T3 since: T1 reads as none, the countdown starts again from now", () => {
    expect(prune(o, countdownRecordOf(own, NS))?.action).toBe('delete');
    expect(prune(o, countdownRecordOf(own, NS, latestStampsElsewhere([other], NS)))).toMatchObject({
      action: 'mark',
      deletionTimestamp: iso(NOW),
    });
  });
  it("another Bundle's earlier countdown changes nothing", () => {
    expect(
      prune(
        o,
        countdownRecordOf(
          own,
          NS,
          latestStampsElsewhere([{ pendingDeletions: [{ ...other.pendingDeletions[0]!, deletionTimestamp: iso(NOW - 90_000) }] }], NS),
        ),
      )?.action,
    ).toBe('delete');
  });
});

describe('the record is carried on by a pass that does not decide an object (red team 7)', () => {
  const gone = live(configMap('gone'), controlledByBundle(), withUid('gone-uid'));
  const previous = {
    declaredRules: [{ kind: 'ConfigMap', name: 'gone', deletionDelay: '1h' }],
    pendingDeletions: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'gone',
        deletionTimestamp: iso(NOW - 60_000),
        deleteAfter: iso(NOW - 60_000 + HOUR),
        waitingFor: 'Delay' as const,
      },
    ],
  };
  const statusOf = (b: ReturnType<typeof bundle>, controlled: ReturnType<typeof live>[]) =>
    buildBundleStatus(
      planBundle(planInput(b, {}, { controlled, countdownRecord: countdownRecordOf(previous, NS), stampSeal: seal })),
      {},
      undefined,
      iso(NOW),
    );

  it('an invalid spec keeps both entries of an object the Bundle still holds', () => {
    const invalid = bundle('b', withResource(resource('a', configMap('a'), withRef('ghost'))));
    const status = statusOf(invalid, [gone]);
    expect(status.pendingDeletions).toEqual(previous.pendingDeletions);
    expect(status.declaredRules).toEqual(previous.declaredRules);
  });

  it('prunes held back by a failing resource keep them too', () => {
    const failing = bundle('b', withResource(resource('a', configMap('a', withAnnotation(Annotations.deletionDelay, '1hour')))));
    const status = statusOf(failing, [gone]);
    expect(status.pendingDeletions).toEqual(previous.pendingDeletions);
    expect(status.declaredRules).toEqual(previous.declaredRules);
  });

  it('an object no longer held (released, handed over, gone) or listed again leaves the record', () => {
    expect(statusOf(bundle('b', withResource(resource('a', configMap('a')))), [])).toMatchObject({
      pendingDeletions: [],
      declaredRules: [],
    });
    const relisted = statusOf(bundle('b', withResource(resource('gone', configMap('gone')))), [gone]);
    expect(relisted.pendingDeletions).toEqual([]);
    expect(relisted.declaredRules).toEqual([]);
  });
});
