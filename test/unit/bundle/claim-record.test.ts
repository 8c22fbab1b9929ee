import { API_VERSION, Annotations, BUNDLE_KIND } from '../../../src/api/names.js';
import type { OwnerReference } from '../../../src/api/resource.js';
import {
  claimRecordAhead,
  claimRecordsOf,
  formatClaimRecord,
  nextClaimRecord,
  statusClaimsOf,
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

describe('the claim record in the Bundle status', () => {
  it('reads status.claims leniently and indexes it by object uid', () => {
    expect(statusClaimsOf(undefined)).toEqual([]);
    expect(statusClaimsOf({ claims: 'x' })).toEqual([]);
    expect(statusClaimsOf({ claims: ['a', 3, '', 'b'] })).toEqual(['a', 'b']);
    const records = claimRecordsOf([
      { metadata: { uid: 'l1' }, status: { claims: ['x', 'y'] } },
      { metadata: { uid: 'l2' }, status: { claims: ['x'] } },
      { metadata: {}, status: { claims: ['z'] } },
    ]);
    expect([...(records.get('x') ?? [])].sort()).toEqual(['l1', 'l2']);
    expect([...(records.get('y') ?? [])]).toEqual(['l1']);
    expect(records.has('z')).toBe(false);
  });

  it('writes ahead only what it lacks, sorted and once', () => {
    expect(claimRecordAhead(['a'], ['a'])).toBeUndefined();
    expect(claimRecordAhead(['c', 'a'], ['b', 'b'])).toEqual(['a', 'b', 'c']);
    expect(formatClaimRecord([])).toBeUndefined();
  });

  it('at the end of a pass: what carried the claim, what it claimed, less what it withdrew', () => {
    const claimed = [live(configMap('x')), live(configMap('y'))];
    expect(nextClaimRecord({ claimed, claiming: ['z'], withdrawn: new Set(['y-uid']) })).toEqual(['x-uid', 'z']);
    expect(nextClaimRecord({ claimed: [], claiming: [], withdrawn: new Set() })).toBeUndefined();
  });

  // Red team 16: another tool blanks the claimReferences annotation; the status record still names the claim.
  it('a claim the annotation no longer records but the status does is still the claim', () => {
    const o = live(
      configMap('x'),
      withOwner(bundleRef('w', true)),
      withOwner(bundleRef('l', false)),
      withAnnotation(Annotations.claimReferences, ''),
    );
    const records = claimRecordsOf([{ metadata: { uid: 'l' }, status: { claims: ['x-uid'] } }]);
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
    const records = claimRecordsOf([{ metadata: { uid: 'l' }, status: { claims: ['x-uid'] } }]);
    expect(hasClaimReference(o, 'l', records)).toBe(false);
  });
});
