/**
 * A released object listed again by a Bundle that cannot take hold of it
 * (a version no longer served; fuzz softdelete 20284): the sweep cancels its
 * countdown, the release stays proven, and the countdown started when it is
 * dropped again is a proven one that runs from then.
 */
import { Annotations, Labels } from '../../../src/api/names.js';
import { cancelReleasedCountdownPatch, restampReleasePatch } from '../../../src/core/bundle/release.js';
import type { JsonPatchOperation } from '../../../src/core/bundle/objects.js';
import { checkReleaseProof, releaseFactsOf, releaseSigner, signRelease } from '../../../src/core/softdelete/provenance.js';
import { decideListedRelease, decideReleasedSweep, TAKE_HOLD_GRACE_MS } from '../../../src/core/softdelete/sweep.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';

const KEY = new Uint8Array(32).fill(7);
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const FIRST_STAMP = formatRfc3339(NOW - 3_600_000);

interface Meta {
  uid: string;
  namespace: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences?: Array<{ controller?: boolean }>;
}

function released(extra: Record<string, string> = {}): { metadata: Meta } {
  const metadata: Meta = {
    uid: 'uid-1',
    namespace: 'team-a',
    resourceVersion: '10',
    labels: { [Labels.formerBundle]: 'b1' },
    annotations: { [Annotations.deletionDelay]: '10m', [Annotations.deletionTimestamp]: FIRST_STAMP, ...extra },
  };
  const facts = releaseFactsOf(metadata);
  if (facts === undefined) throw new Error('not a release');
  metadata.annotations[Annotations.releaseProof] = signRelease(KEY, facts);
  return { metadata };
}

/** The patch applied to the annotations (the only paths these patches write besides the resourceVersion test). */
function applied(o: { metadata: Meta }, ops: readonly JsonPatchOperation[]): { metadata: Meta } {
  const annotations = { ...o.metadata.annotations };
  for (const op of ops) {
    if (op.op === 'test') {
      expect(op.path).toBe('/metadata/resourceVersion');
      expect(op.value).toBe(o.metadata.resourceVersion);
      continue;
    }
    const name = op.path.replace('/metadata/annotations/', '').replace('~1', '/');
    if (op.op === 'remove') delete annotations[name];
    else annotations[name] = String(op.value);
  }
  return { metadata: { ...o.metadata, annotations, resourceVersion: String(Number(o.metadata.resourceVersion) + 1) } };
}

describe('decideListedRelease', () => {
  it('leaves the object to a Bundle that lists it at a served version (its pass takes hold), and looks again later', () => {
    expect(decideListedRelease(released().metadata, [{ bundle: 'b1', served: true }]).action).toBe('recheck');
  });

  it('cancels it where the listing Bundle, at a served version, has not taken hold within the grace (a refused take-hold)', () => {
    const listings = [{ bundle: 'b1', served: true }];
    expect(decideListedRelease(released().metadata, listings, TAKE_HOLD_GRACE_MS - 1).action).toBe('recheck');
    expect(decideListedRelease(released().metadata, listings, TAKE_HOLD_GRACE_MS)).toEqual({ action: 'cancel', bundle: 'b1' });
  });

  it('cancels the countdown when a listing Bundle lists it at a version no longer served', () => {
    const listings = [
      { bundle: 'b2', served: true },
      { bundle: 'b1', served: false },
    ];
    expect(decideListedRelease(released().metadata, listings)).toEqual({ action: 'cancel', bundle: 'b1' });
  });

  it('cancels a stale approval with no stamp, and skips an object with neither', () => {
    const approvedOnly = released({ [Annotations.deletionApproved]: 'true' });
    delete approvedOnly.metadata.annotations[Annotations.deletionTimestamp];
    expect(decideListedRelease(approvedOnly.metadata, [{ bundle: 'b1', served: false }]).action).toBe('cancel');
    delete approvedOnly.metadata.annotations[Annotations.deletionApproved];
    expect(decideListedRelease(approvedOnly.metadata, [{ bundle: 'b1', served: false }]).action).toBe('skip');
  });

  it('skips an object adopted since (a controller owner)', () => {
    const adopted = released();
    adopted.metadata.ownerReferences = [{ controller: true }];
    expect(decideListedRelease(adopted.metadata, [{ bundle: 'b1', served: false }]).action).toBe('skip');
  });
});

describe('a cancelled released countdown', () => {
  const sign = releaseSigner(KEY);

  it('stays proven, loses its stamp and approval, and is not deleted', () => {
    const patch = cancelReleasedCountdownPatch(released({ [Annotations.deletionApproved]: 'true' }), sign);
    if (patch === undefined) throw new Error('no patch');
    const cancelled = applied(released({ [Annotations.deletionApproved]: 'true' }), patch);
    expect(cancelled.metadata.annotations[Annotations.deletionTimestamp]).toBeUndefined();
    expect(cancelled.metadata.annotations[Annotations.deletionApproved]).toBeUndefined();
    expect(checkReleaseProof(KEY, cancelled.metadata)).toEqual({ proven: true });
    // No Bundle lists it any more: the sweep starts a new countdown from now.
    const decision = decideReleasedSweep(cancelled.metadata, NOW);
    expect(decision.action).toBe('mark');
  });

  it('dropped again: a new proven countdown from the drop, due after the whole delay', () => {
    const cancelled = applied(released(), cancelReleasedCountdownPatch(released(), sign) ?? []);
    const decision = decideReleasedSweep(cancelled.metadata, NOW);
    if (decision.action !== 'mark') throw new Error(`expected mark, got ${decision.action}`);
    const restamped = applied(cancelled, restampReleasePatch(cancelled, decision.deletionTimestamp, sign));
    expect(checkReleaseProof(KEY, restamped.metadata)).toEqual({ proven: true });
    expect(decideReleasedSweep(restamped.metadata, NOW + 60_000)).toMatchObject({ action: 'wait' });
    expect(decideReleasedSweep(restamped.metadata, NOW + 600_000).action).not.toBe('wait');
  });

  it('an unproven object gets no patch that would prove it: none without the facts of a release', () => {
    const handMade = { metadata: { ...released().metadata, labels: {} } };
    expect(cancelReleasedCountdownPatch(handMade, sign)).toBeUndefined();
  });
});
