/**
 * The record of a release's latest signing (red team 27): every patch that
 * signs a release states the stamp it signs, and the sweep reads a stamp
 * other than the recorded one as none, so an earlier (stamp, proof) pair
 * written back never ends a countdown, and a countdown a listing cancelled
 * never counts again.
 */
import { Annotations, Labels } from '../../../src/api/names.js';
import { cancelReleasedCountdownPatch, keptReleasePatch, releasePatch, restampReleasePatch } from '../../../src/core/bundle/release.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { releaseFactsOf, releaseSigner, signRelease } from '../../../src/core/softdelete/provenance.js';
import { readWithRecord, signedStampOf } from '../../../src/core/softdelete/release-record.js';
import { decideReleasedSweep } from '../../../src/core/softdelete/sweep.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';

const KEY = new Uint8Array(32).fill(9);
const sign = releaseSigner(KEY);
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const S1 = formatRfc3339(NOW - 3_600_000);
const S2 = formatRfc3339(NOW - 60_000);

function released(stamp: string | undefined, extra: Record<string, string> = {}) {
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
  annotations[Annotations.releaseProof] = signRelease(KEY, facts);
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

describe('signedStampOf: what a patch signs, read off the patch', () => {
  test('a release that starts its countdown signs the new stamp', () => {
    const patch = releasePatch(held(), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign);
    expect(signedStampOf(patch)).toBe(formatRfc3339(NOW));
  });

  test('a release of an object counting down states the stamp it signs, though it is there already', () => {
    const patch = releasePatch(held(S2), { name: 'b1' }, {}, { now: NOW, stampAt: NOW }, sign);
    expect(signedStampOf(patch)).toBe(S2);
  });

  test('the sweep cancelling a countdown signs no stamp', () => {
    const patch = cancelReleasedCountdownPatch(released(S1), sign);
    expect(patch).toBeDefined();
    expect(signedStampOf(patch ?? [])).toBe('');
  });

  test('the sweep starting a new countdown signs its stamp', () => {
    expect(signedStampOf(restampReleasePatch(released(undefined), S2, sign))).toBe(S2);
  });

  test('a patch signing no release records nothing', () => {
    expect(signedStampOf(keptReleasePatch(held(S1), 'b1', {}))).toBeUndefined();
  });
});

describe('readWithRecord: a stamp counts only when it is the recorded one', () => {
  test('no record (a release signed before releases were recorded): read as it is', () => {
    const o = released(S1);
    expect(readWithRecord(o.metadata, undefined)).toBe(o.metadata);
  });

  test('the recorded stamp counts, with its approval', () => {
    const o = released(S1, { [Annotations.deletionApproved]: S2 });
    expect(readWithRecord(o.metadata, S1)).toBe(o.metadata);
  });

  test('an earlier stamp written back (a later signing recorded) reads as none: the sweep marks a new countdown', () => {
    const o = released(S1, { [Annotations.deletionApproved]: S2 });
    const read = readWithRecord(o.metadata, S2);
    expect(read.annotations[Annotations.deletionTimestamp]).toBeUndefined();
    expect(read.annotations[Annotations.deletionApproved]).toBeUndefined();
    expect(decideReleasedSweep(o.metadata, NOW).action).toBe('expired');
    expect(decideReleasedSweep(read, NOW).action).toBe('mark');
  });

  test('a countdown a listing cancelled (recorded as none) never counts again', () => {
    const read = readWithRecord(released(S1).metadata, '');
    expect(decideReleasedSweep(read, NOW).action).toBe('mark');
  });

  test('an object with no stamp is read as it is (the sweep marks one)', () => {
    const o = released(undefined);
    expect(readWithRecord(o.metadata, S1)).toBe(o.metadata);
  });
});
