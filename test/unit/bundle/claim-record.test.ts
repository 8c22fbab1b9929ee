import { API_VERSION, Annotations, BUNDLE_KIND } from '../../../src/api/names.js';
import type { OwnerReference } from '../../../src/api/resource.js';
import type { ClaimEntry } from '../../../src/api/bundle-status.js';
import {
  claimRecordAhead,
  claimRecordsOf,
  formatClaimRecord,
  nextClaimRecord,
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
  it('reads status.claims leniently and indexes it by object uid', () => {
    expect(statusClaimsOf(undefined)).toEqual([]);
    expect(statusClaimsOf({ claims: 'x' })).toEqual([]);
    expect(statusClaimsOf({ claims: [entry('a'), 3, 'b', { ...entry('c'), uid: '' }, { uid: 'd' }] })).toEqual([entry('a')]);
    const records = claimRecordsOf([
      { metadata: { uid: 'l1' }, status: { claims: [entry('x'), entry('y')] } },
      { metadata: { uid: 'l2' }, status: { claims: [entry('x')] } },
      { metadata: {}, status: { claims: [entry('z')] } },
    ]);
    expect([...(records.get('x-uid') ?? [])].sort()).toEqual(['l1', 'l2']);
    expect([...(records.get('y-uid') ?? [])]).toEqual(['l1']);
    expect(records.has('z-uid')).toBe(false);
  });

  it('writes ahead only what it lacks, sorted by uid and once', () => {
    expect(claimRecordAhead([entry('a')], [entry('a')])).toBeUndefined();
    expect(claimRecordAhead([entry('c'), entry('a')], [entry('b'), entry('b')])).toEqual([entry('a'), entry('b'), entry('c')]);
    expect(formatClaimRecord([])).toBeUndefined();
  });

  const pass = (p: Partial<ClaimPass>): ClaimPass => ({
    previous: [],
    claimed: [],
    seen: new Set(),
    gone: new Set(),
    claimedNow: [],
    withdrawn: new Set(),
    ...p,
  });

  it('at the end of a pass: what carried the claim, what it claimed and landed, less what it withdrew', () => {
    const claimed = [live(configMap('x')), live(configMap('y'))];
    const seen = new Set(['x-uid', 'y-uid', 'z-uid']);
    expect(nextClaimRecord(pass({ claimed, seen, claimedNow: [entry('z')], withdrawn: new Set(['y-uid']) }))).toEqual([
      entry('x'),
      entry('z'),
    ]);
    expect(nextClaimRecord(pass({}))).toBeUndefined();
  });

  // Red team 17: an entry stays only while its object carries the claim, or the pass could not see the object.
  it('drops an entry whose object was seen without the claim, or found gone; keeps one whose object was not seen', () => {
    const previous = [entry('seen-without'), entry('gone'), entry('unseen')];
    expect(nextClaimRecord(pass({ previous, seen: new Set(['seen-without-uid']), gone: new Set(['gone-uid']) }))).toEqual([
      entry('unseen'),
    ]);
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
