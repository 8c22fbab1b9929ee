/**
 * The record of a release's latest signing (red teams 27 and 29): the sweep
 * counts a release only when the object carries the recorded proof, so an
 * earlier release written back (its stamp, its looser delay or policy)
 * never ends a countdown; a countdown a listing cancelled never counts
 * again; a release a take-hold ended never counts again.
 */
import { Annotations, Labels } from '../../../src/api/names.js';
import {
  cancelReleasedCountdownPatch,
  keptReleasePatch,
  recordedReleasePatch,
  releasePatch,
  restampReleasePatch,
} from '../../../src/core/bundle/release.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import {
  checkReleaseProof,
  releaseFactsOf,
  releaseSigner,
  signRelease,
  signedWithRecord,
} from '../../../src/core/softdelete/provenance.js';
import {
  asItStandsRecord,
  cancelledByListing,
  carriesRecordedRelease,
  carriesReleaseMarks,
  parseReleaseRecord,
  parseRecordedObject,
  readWithRecord,
  sameRecord,
  signedProofOf,
  withUnwritten,
  countsUnwritten,
  unreadDecided,
  type ReleaseRecord,
} from '../../../src/core/softdelete/release-record.js';
import { decideReleasedSweep } from '../../../src/core/softdelete/sweep.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';

const KEY = new Uint8Array(32).fill(9);
const sign = releaseSigner(KEY);
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const S1 = formatRfc3339(NOW - 3_600_000);
const S2 = formatRfc3339(NOW - 60_000);

/** A released object as the finalizer signs it (v3: recorded first); `version: 'v2'`: as an operator signed it before records. */
function released(stamp: string | undefined, extra: Record<string, string> = {}, version: 'v2' | 'v3' = 'v3') {
  const annotations: Record<string, string> = { [Annotations.deletionDelay]: '10m', ...extra };
  if (stamp !== undefined) annotations[Annotations.deletionTimestamp] = stamp;
  const metadata = {
    uid: 'uid-1',
    namespace: 'team-a',
    resourceVersion: '10',
    labels: { [Labels.formerBundle]: 'b1' },
    annotations,
  };
  const facts = releaseFactsOf(metadata);
  if (facts === undefined) throw new Error('not a release');
  annotations[Annotations.releaseProof] = signRelease(KEY, facts, version);
  return { metadata };
}

function held(stamp?: string): LiveObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'c',
      namespace: 'team-a',
      uid: 'uid-1',
      resourceVersion: '5',
      ownerReferences: [{ apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'b1', uid: 'b-uid', controller: true }],
      annotations: { [Annotations.deletionDelay]: '10m', ...(stamp ? { [Annotations.deletionTimestamp]: stamp } : {}) },
    },
  };
}

const proofOf = (o: { metadata: { annotations: Record<string, string> } }): string =>
  o.metadata.annotations[Annotations.releaseProof] ?? '';
const signed = (o: { metadata: { annotations: Record<string, string> } }): ReleaseRecord => ({ state: 'signed', proof: proofOf(o) });

describe('signedProofOf: the proof a patch signs, read off the patch', () => {
  test('a release signs one', () => {
    const patch = releasePatch(held(), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign);
    expect(signedProofOf(patch)).toMatch(/^v3:/);
  });

  test('a release of an object counting down states the stamp it signs, though it is there already', () => {
    const patch = releasePatch(held(S2), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign);
    expect(patch).toContainEqual({ op: 'add', path: expect.stringContaining('deletionTimestamp') as unknown, value: S2 });
  });

  test('the sweep cancelling a countdown, or starting a new one, signs again', () => {
    expect(signedProofOf(cancelReleasedCountdownPatch(released(S1), sign) ?? [])).toMatch(/^v3:/);
    expect(signedProofOf(restampReleasePatch(released(undefined), S2, sign))).toMatch(/^v3:/);
  });

  test('a release that stamps anew takes any approval off, whatever is there when the patch lands (red team 35)', () => {
    const approval = (ops: readonly { op: string; path: string }[]) => ops.filter((op) => op.path.endsWith('deletionApproved'));
    // Read without an approval: one written after the read (for the stamp this replaces) still goes, added then removed.
    expect(approval(releasePatch(held(), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign)).map((op) => op.op)).toEqual([
      'add',
      'remove',
    ]);
    // A countdown carried over (its stamp signed as it is) keeps its approval: it was given for that stamp.
    expect(approval(releasePatch(held(S2), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign))).toEqual([]);
  });

  test('a patch signing no release records nothing', () => {
    expect(signedProofOf(keptReleasePatch(held(S1), 'b1', {}))).toBeUndefined();
  });
});

describe('readWithRecord: a release counts only while it is the recorded one', () => {
  test('no record, a release signed before releases were recorded (v2): read as it is', () => {
    const o = released(S1, {}, 'v2');
    expect(readWithRecord(o.metadata, undefined)).toBe(o.metadata);
    expect(carriesRecordedRelease(o.metadata, undefined)).toBe(true);
  });

  test('no record, a release signed since (v3): its record is gone (deleted by hand), so it is kept, never signed again', () => {
    const o = released(S1);
    expect(o.metadata.annotations[Annotations.releaseProof]).toMatch(/^v3:/);
    expect(decideReleasedSweep(o.metadata, NOW).action).toBe('expired');
    expect(readWithRecord(o.metadata, undefined)).toBeUndefined();
    expect(carriesRecordedRelease(o.metadata, undefined)).toBe(false);
    // A v2 proof relabelled v3 (or the other way) does not check: the version is in the signed message.
    const relabelled = {
      ...o.metadata,
      annotations: { ...o.metadata.annotations, [Annotations.releaseProof]: proofOf(o).replace(/^v3:/, 'v2:') },
    };
    expect(checkReleaseProof(KEY, relabelled).proven).toBe(false);
    expect(checkReleaseProof(KEY, o.metadata).proven).toBe(true);
  });

  test('a release signed before records (v2) is signed again as it stands, as a recorded one (v3), on the state read', () => {
    const before = released(S1, { [Annotations.deletionPolicy]: 'Approve' }, 'v2');
    const ops = recordedReleasePatch(before, sign) ?? [];
    expect(ops[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '10' });
    const proof = signedProofOf(ops) ?? '';
    expect(proof).toMatch(/^v3:/);
    // The same facts (stamp, delay, policy): the new proof checks on the object as it stands.
    const after = { ...before.metadata, annotations: { ...before.metadata.annotations, [Annotations.releaseProof]: proof } };
    expect(checkReleaseProof(KEY, after).proven).toBe(true);
    expect(readWithRecord(after, { state: 'signed', proof })).toBe(after);
    // The v2 proof written back later is not the recorded one.
    expect(readWithRecord(before.metadata, { state: 'signed', proof })).toBeUndefined();
  });

  test("signing an earlier version's release again as it stands: only over no record, or the carried proof signed; again where it was recorded", () => {
    expect(asItStandsRecord(undefined, 'v2:p', 'v3:q')).toBe('write');
    expect(asItStandsRecord({ state: 'signed', proof: 'v2:p' }, 'v2:p', 'v3:q')).toBe('write');
    // An earlier try whose patch did not land: the same facts give the same proof, sent again.
    expect(asItStandsRecord({ state: 'signed', proof: 'v3:q' }, 'v2:p', 'v3:q')).toBe('recorded');
    // A listing's cancel is never signed over (red team 33), nor an ended release, nor another signing.
    expect(asItStandsRecord({ state: 'cancelled', proof: 'v2:p' }, 'v2:p', 'v3:q')).toBe('leave');
    expect(asItStandsRecord({ state: 'ended', proof: '' }, 'v2:p', 'v3:q')).toBe('leave');
    expect(asItStandsRecord({ state: 'signed', proof: 'v2:other' }, 'v2:p', 'v3:q')).toBe('leave');
  });

  test('only v1 and v2 proofs may stand without a record', () => {
    expect(signedWithRecord('v1:x')).toBe(false);
    expect(signedWithRecord('v2:x')).toBe(false);
    expect(signedWithRecord('v3:x')).toBe(true);
    expect(signedWithRecord('v4:x')).toBe(true);
  });

  test('what the finalizer signs now is a v3 proof', () => {
    const ops = releasePatch(held(S1), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign);
    expect(signedProofOf(ops)).toMatch(/^v3:/);
  });

  test('the recorded release counts, with its approval', () => {
    const o = released(S1, { [Annotations.deletionApproved]: S2 });
    expect(readWithRecord(o.metadata, signed(o))).toBe(o.metadata);
  });

  test("an earlier release written back (another signing recorded) is not the operator's: kept, never restamped", () => {
    const earlier = released(S1, { [Annotations.deletionDelay]: '20s' });
    const current = released(S2);
    expect(decideReleasedSweep(earlier.metadata, NOW).action).toBe('expired');
    expect(readWithRecord(earlier.metadata, signed(current))).toBeUndefined();
    expect(carriesRecordedRelease(earlier.metadata, signed(current))).toBe(false);
  });

  test('a countdown a listing cancelled never counts again: the sweep starts a new one', () => {
    const o = released(S1, { [Annotations.deletionApproved]: S2 });
    const read = readWithRecord(o.metadata, { state: 'cancelled', proof: proofOf(o) });
    expect(read?.annotations[Annotations.deletionTimestamp]).toBeUndefined();
    expect(read?.annotations[Annotations.deletionApproved]).toBeUndefined();
    expect(decideReleasedSweep(read ?? o.metadata, NOW).action).toBe('mark');
    expect(carriesRecordedRelease(o.metadata, { state: 'cancelled', proof: proofOf(o) })).toBe(true);
  });

  test('a release a take-hold ended never counts again, nor is signed again', () => {
    const o = released(S1);
    expect(readWithRecord(o.metadata, { state: 'ended', proof: '' })).toBeUndefined();
    expect(carriesRecordedRelease(o.metadata, { state: 'ended', proof: '' })).toBe(false);
  });
});

describe('the record a listing writes, and what a take-hold ends', () => {
  test('the recorded signing is cancelled, whatever the object shows; an ended one stays ended', () => {
    const o = released(S1);
    const current = released(S2);
    expect(cancelledByListing(o.metadata, signed(o))).toEqual({ state: 'cancelled', proof: proofOf(o) });
    // Another release written back, or the stamp taken off (red team 30): the recorded one is cancelled all the same.
    expect(cancelledByListing(o.metadata, signed(current))).toEqual({ state: 'cancelled', proof: proofOf(current) });
    expect(cancelledByListing(released(undefined).metadata, signed(current))).toEqual({ state: 'cancelled', proof: proofOf(current) });
    expect(cancelledByListing(o.metadata, { state: 'ended', proof: '' })).toBeUndefined();
    // No record, a release signed before records (v2): the stamped release the object carries.
    const before = released(S1, {}, 'v2');
    expect(cancelledByListing(before.metadata, undefined)).toEqual({ state: 'cancelled', proof: proofOf(before) });
    // Its stamp taken off while listed (the proof no longer checks), written back after the drop: cancelled all the same (red team 38).
    const stampless = released(undefined, {}, 'v2');
    expect(cancelledByListing(stampless.metadata, undefined)).toEqual({ state: 'cancelled', proof: proofOf(stampless) });
    // No record, marks without a proof (taken off while listed): ended, so no proof written back later counts (red team 39).
    const { [Annotations.releaseProof]: _proof, ...proofless } = released(S1, {}, 'v2').metadata.annotations;
    expect(cancelledByListing({ annotations: proofless }, undefined)).toEqual({ state: 'ended', proof: '' });
    // No record, a v3 release (its record is gone), or text that is no proof: ended, so nothing written back counts later,
    // and no text of the object's is copied into the operator's namespace.
    expect(cancelledByListing(o.metadata, undefined)).toEqual({ state: 'ended', proof: '' });
    for (const text of ['v2:short', 'v2:' + 'x'.repeat(4000), 'not a proof'])
      expect(cancelledByListing({ annotations: { [Annotations.releaseProof]: text } }, undefined)).toEqual({ state: 'ended', proof: '' });
  });

  test('an unreadable record reads as ended (nothing counts)', () => {
    expect(parseReleaseRecord({ state: 'signed' })).toEqual({ state: 'ended', proof: '' });
    expect(parseReleaseRecord(undefined)).toEqual({ state: 'ended', proof: '' });
    expect(parseReleaseRecord({ state: 'cancelled', proof: 'v2:x' })).toEqual({ state: 'cancelled', proof: 'v2:x' });
  });

  test('a take-hold ends a release when the object carries any of its marks (the stamp taken off too: red team 29)', () => {
    const o = released(undefined);
    expect(carriesReleaseMarks(o.metadata)).toBe(true);
    expect(carriesReleaseMarks({ labels: {}, annotations: { [Annotations.releaseProof]: 'v2:x' } })).toBe(true);
    expect(carriesReleaseMarks(held(S1).metadata)).toBe(false);
  });
});

describe('a listing cancel this process could not write (red team 36)', () => {
  test('counts as written while the record is as read when it was decided: the cancelled stamp does not count', () => {
    const o = released(S1);
    const unwritten = { from: signed(o), to: { state: 'cancelled' as const, proof: proofOf(o) } };
    const decided = withUnwritten(signed(o), unwritten);
    expect(decided).toEqual({ state: 'cancelled', proof: proofOf(o) });
    expect(readWithRecord(o.metadata, decided)?.annotations[Annotations.deletionTimestamp]).toBeUndefined();
    expect(decideReleasedSweep(readWithRecord(o.metadata, decided) ?? o.metadata, NOW).action).toBe('mark');
    // No record (a release signed before records, v2): the cancel decided over none counts while there is none.
    const before = released(S1, {}, 'v2');
    expect(withUnwritten(undefined, { from: undefined, to: { state: 'cancelled', proof: proofOf(before) } })).toEqual({
      state: 'cancelled',
      proof: proofOf(before),
    });
  });

  test('anything written since decides: a new signing, an end, the cancel itself', () => {
    const o = released(S1);
    const later = released(S2);
    const unwritten = { from: signed(o), to: { state: 'cancelled' as const, proof: proofOf(o) } };
    expect(withUnwritten(signed(later), unwritten)).toEqual(signed(later));
    expect(withUnwritten({ state: 'ended', proof: '' }, unwritten)).toEqual({ state: 'ended', proof: '' });
    expect(withUnwritten(undefined, unwritten)).toBeUndefined();
    expect(withUnwritten(signed(o), undefined)).toEqual(signed(o));
  });

  test('records compare by state and proof; none equals only none', () => {
    expect(sameRecord(undefined, undefined)).toBe(true);
    expect(sameRecord(undefined, { state: 'ended', proof: '' })).toBe(false);
    expect(sameRecord({ state: 'signed', proof: 'p' }, { state: 'cancelled', proof: 'p' })).toBe(false);
    expect(sameRecord({ state: 'signed', proof: 'p' }, { state: 'signed', proof: 'p' })).toBe(true);
  });

  test('the object a record names is read back from its data, anything else is no object', () => {
    expect(parseRecordedObject({ object: 'v1 ConfigMap ns/cm' })).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'ns',
      name: 'cm',
    });
    expect(parseRecordedObject({ object: 'v1 ConfigMap ns/' })).toBeUndefined();
    expect(parseRecordedObject({ object: 'v1 ConfigMap ns/cm extra' })).toBeUndefined();
    expect(parseRecordedObject({})).toBeUndefined();
  });
});

describe('what counts unwritten (red team 38)', () => {
  test('a cancel or an end counts in this process when it cannot be written; a signing never does', () => {
    expect(countsUnwritten({ state: 'cancelled', proof: 'p' })).toBe(true);
    expect(countsUnwritten({ state: 'ended', proof: '' })).toBe(true);
    expect(countsUnwritten({ state: 'signed', proof: 'p' })).toBe(false);
    const o = released(S1);
    expect(withUnwritten(signed(o), { from: signed(o), to: { state: 'ended', proof: '' } })).toEqual({ state: 'ended', proof: '' });
    expect(readWithRecord(o.metadata, withUnwritten(signed(o), { from: signed(o), to: { state: 'ended', proof: '' } }))).toBeUndefined();
  });
});

describe('cancels and ends decided while the record could not be read (red team 40)', () => {
  const end = (): ReleaseRecord => ({ state: 'ended', proof: '' });
  test('a listing cancel decided unread cancels the signing the record names once read: its stamp does not count', () => {
    const o = released(S1);
    const decided = unreadDecided(signed(o), [(r) => cancelledByListing(o.metadata, r)]);
    expect(decided).toEqual({ from: signed(o), to: { state: 'cancelled', proof: proofOf(o) } });
    expect(decideReleasedSweep(readWithRecord(o.metadata, withUnwritten(signed(o), decided)) ?? o.metadata, NOW).action).toBe('mark');
  });

  test('applied in the order decided: a cancel then an end is ended; an end then a cancel stays ended', () => {
    const o = released(S1);
    const cancel = (r: ReleaseRecord | undefined): ReleaseRecord | undefined => cancelledByListing(o.metadata, r);
    expect(unreadDecided(signed(o), [cancel, end])?.to).toEqual(end());
    expect(unreadDecided(signed(o), [end, cancel])?.to).toEqual(end());
  });

  test('nothing held where the record says as much already, or where the decisions leave it', () => {
    const o = released(S1);
    expect(unreadDecided({ state: 'ended', proof: '' }, [end])).toBeUndefined();
    expect(unreadDecided({ state: 'cancelled', proof: proofOf(o) }, [(r) => cancelledByListing(o.metadata, r)])).toBeUndefined();
    expect(unreadDecided(undefined, [(r) => (r === undefined ? undefined : end())])).toBeUndefined();
    // A signing decided unread is never held: it was not sent.
    expect(unreadDecided(undefined, [() => signed(o)])).toBeUndefined();
  });
});
