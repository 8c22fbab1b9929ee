import { API_VERSION, Annotations, BUNDLE_KIND } from '../../../src/api/names.js';
import type { OwnerReference } from '../../../src/api/resource.js';
import type { ClaimEntry } from '../../../src/api/bundle-status.js';
import {
  claimRecordAhead,
  claimRecordsOf,
  formatClaimRecord,
  nextClaimRecord,
  recordedClaimants,
  statusClaimsOf,
  type ClaimPass,
} from '../../../src/core/bundle/claim-record.js';
import { claimWithdrawal } from '../../../src/core/bundle/ownership.js';
import { hasClaimReference, userReferences } from '../../../src/core/bundle/owner-references.js';
import { configMap, live, withAnnotation, withOwner } from './builders.js';

const bundleRef = (uid: string, controller: boolean): OwnerReference => ({
  apiVersion: API_VERSION,
  kind: BUNDLE_KIND,
  name: `b-${uid}`,
  uid,
  controller,
  blockOwnerDeletion: controller,
});

const entry = (name: string): ClaimEntry => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid: `${name}-uid` });

describe('the claim record in the Bundle status', () => {
  it('reads status.claims leniently; a Bundle with the field (even empty) is recording', () => {
    expect(statusClaimsOf(undefined)).toBeUndefined();
    expect(statusClaimsOf({ claims: 'x' })).toBeUndefined();
    expect(statusClaimsOf({ claims: [] })).toEqual([]);
    expect(statusClaimsOf({ claims: [entry('a'), 3, 'b', { ...entry('c'), uid: '' }, { uid: 'd' }] })).toEqual([entry('a')]);
    const records = claimRecordsOf([
      { metadata: { uid: 'l1' }, status: { claims: [entry('x'), { ...entry('y'), pending: true }] } },
      { metadata: { uid: 'l2' }, status: { claims: [entry('x')] } },
      { metadata: { uid: 'l3' }, status: {} },
      { metadata: {}, status: { claims: [entry('z')] } },
    ]);
    expect([...(records.entries.get('x-uid') ?? [])]).toEqual([
      ['l1', true],
      ['l2', true],
    ]);
    expect([...(records.entries.get('y-uid') ?? [])]).toEqual([['l1', false]]);
    expect(records.entries.has('z-uid')).toBe(false);
    expect([...records.recording]).toEqual(['l1', 'l2']);
  });

  it('when a reference is the claim: a confirmed entry; the annotation while an entry names the object; the annotation alone for a Bundle keeping no record', () => {
    const records = claimRecordsOf([
      { metadata: { uid: 'confirmed' }, status: { claims: [entry('x')] } },
      { metadata: { uid: 'pending' }, status: { claims: [{ ...entry('x'), pending: true }] } },
      { metadata: { uid: 'dropped' }, status: { claims: [] } },
    ]);
    const annotated = (...uids: string[]) => recordedClaimants('x-uid', new Set(uids), records);
    // Red team 16: the annotation blanked, the confirmed entry still counts.
    expect([...annotated()]).toEqual(['confirmed']);
    // Red team 18: a pending entry alone is no evidence (the claim may never have landed)...
    expect(annotated().has('pending')).toBe(false);
    // ...but it lets the annotation written with the claim count.
    expect(annotated('pending').has('pending')).toBe(true);
    // Red team 18: an earlier annotation written back after the claim was withdrawn (the entry dropped) is no evidence.
    expect(annotated('dropped').has('dropped')).toBe(false);
    // A Bundle whose status keeps no record (an earlier version): the annotation decides.
    expect(annotated('legacy').has('legacy')).toBe(true);
    // No records at hand: the annotation decides.
    expect([...recordedClaimants('x-uid', new Set(['dropped']), undefined)]).toEqual(['dropped']);
  });

  it('writes ahead, pending, only what it lacks', () => {
    expect(claimRecordAhead([entry('a')], [entry('a')])).toBeUndefined();
    expect(claimRecordAhead([entry('c'), entry('a')], [entry('b'), entry('b')])).toEqual([
      entry('a'),
      { ...entry('b'), pending: true },
      entry('c'),
    ]);
    expect(claimRecordAhead(undefined, [])).toBeUndefined();
    expect(claimRecordAhead(undefined, [entry('a')])).toEqual([{ ...entry('a'), pending: true }]);
    expect(formatClaimRecord([{ ...entry('a'), pending: true }, entry('a')])).toEqual([entry('a')]);
  });

  const pass = (p: Partial<ClaimPass>): ClaimPass => ({
    previous: [],
    claimed: [],
    seen: new Set(),
    gone: new Set(),
    landed: [],
    unknown: [],
    withdrawn: new Set(),
    ...p,
  });

  it('at the end of a pass: what carried the claim and what landed, confirmed; what may have landed, pending; less what it withdrew', () => {
    const claimed = [live(configMap('x')), live(configMap('y'))];
    const seen = new Set(['x-uid', 'y-uid', 'z-uid', 'u-uid']);
    expect(nextClaimRecord(pass({ claimed, seen, landed: [entry('z')], unknown: [entry('u')], withdrawn: new Set(['y-uid']) }))).toEqual([
      { ...entry('u'), pending: true },
      entry('x'),
      entry('z'),
    ]);
    expect(nextClaimRecord(pass({ previous: undefined }))).toEqual([]);
  });

  // Red team 17 and 18: an entry stays only while its object carries the claim, or the pass could not see the object.
  it('drops an entry whose object was seen without the claim (a pending one included), or found gone; keeps one whose object was not seen', () => {
    const previous = [entry('seen-without'), { ...entry('pending-unlanded'), pending: true }, entry('gone'), entry('unseen')];
    const seen = new Set(['seen-without-uid', 'pending-unlanded-uid']);
    expect(nextClaimRecord(pass({ previous, seen, gone: new Set(['gone-uid']) }))).toEqual([entry('unseen')]);
  });

  // Red team 16: another tool blanks the claimReferences annotation; the status record still names the claim.
  it('a claim the annotation no longer records but the status does is still the claim', () => {
    const o = live(
      configMap('x'),
      withOwner(bundleRef('w', true)),
      withOwner(bundleRef('l', false)),
      withAnnotation(Annotations.claimReferences, ''),
    );
    const records = claimRecordsOf([{ metadata: { uid: 'l' }, status: { claims: [entry('x')] } }]);
    expect(hasClaimReference(o, 'l')).toBe(false);
    expect(hasClaimReference(o, 'l', records)).toBe(true);
    // Withdrawn when l stops listing x: only the claim goes, the controlling lister's reference stays.
    const patch = claimWithdrawal(o, 'l', [{ name: 'b-w', uid: 'w' }], records);
    expect(patch?.find((op) => op.op === 'replace')).toEqual({
      op: 'replace',
      path: '/metadata/ownerReferences',
      value: [bundleRef('w', true)],
    });
    // Released (w lets go, l no longer lists it): the claim is the operator's and goes with the release.
    expect(userReferences(o.metadata, { claimRecords: records }).map((r) => r.uid)).toEqual([]);
    expect(userReferences(o.metadata).map((r) => r.uid)).toEqual(['l']);
  });

  it("another Bundle's record names no claim on an object it does not reference", () => {
    const o = live(configMap('x'), withOwner(bundleRef('w', true)));
    const records = claimRecordsOf([{ metadata: { uid: 'l' }, status: { claims: [entry('x')] } }]);
    expect(hasClaimReference(o, 'l', records)).toBe(false);
  });
});
