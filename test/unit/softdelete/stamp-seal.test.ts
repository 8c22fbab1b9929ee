/**
 * A countdown stamp counts only when this operator wrote it (issue 23, a
 * red-team find: a stamp backdated by hand while the operator was down made
 * an object go at once when it left its Bundle, or when its Bundle was
 * deleted).
 */
import { describe, expect, it } from '@jest/globals';
import { Annotations } from '../../../src/api/names.js';
import { planPrune, redecideDelete } from '../../../src/core/bundle/prune.js';
import { planFinalize } from '../../../src/core/bundle/finalize.js';
import { stampSeal, withProvenStamp } from '../../../src/core/softdelete/stamp-seal.js';
import { releaseSigner } from '../../../src/core/softdelete/provenance.js';
import { BUNDLE_UID, configMap, controlledByBundle, live, NOW, withAnnotation, withUid } from '../bundle/builders.js';

const seal = stampSeal(new Uint8Array(32).fill(7));
const otherSeal = stampSeal(new Uint8Array(32).fill(8));
const OLD = '2020-01-01T00:00:00Z';

describe('stampSeal', () => {
  it('verifies its own proofs only, for that uid and that stamp', () => {
    const proof = seal.sign('u1', OLD);
    expect(seal.verify('u1', OLD, proof)).toBe(true);
    expect(seal.verify('u2', OLD, proof)).toBe(false);
    expect(seal.verify('u1', '2020-01-01T00:00:01Z', proof)).toBe(false);
    expect(otherSeal.verify('u1', OLD, proof)).toBe(false);
    expect(seal.verify('u1', OLD, undefined)).toBe(false);
    expect(seal.verify('u1', OLD, 'v1:')).toBe(false);
  });
  it('an unproven stamp reads as none (its approval with it); a proven one, and anything without a seal, as written', () => {
    const forged = { [Annotations.deletionDelay]: '1h', [Annotations.deletionTimestamp]: OLD, [Annotations.deletionApproved]: OLD };
    expect(withProvenStamp(forged, 'u1', seal)).toEqual({ [Annotations.deletionDelay]: '1h' });
    const proven = { ...forged, [Annotations.stampProof]: seal.sign('u1', OLD) };
    expect(withProvenStamp(proven, 'u1', seal)).toBe(proven);
    expect(withProvenStamp(forged, 'u1', undefined)).toBe(forged);
  });
});

describe('prune and finalizer on a stamp written by hand', () => {
  const handStamped = live(configMap('a'), controlledByBundle(), withUid('a-uid'), withAnnotation(Annotations.deletionDelay, '1h'), withAnnotation(Annotations.deletionTimestamp, OLD));
  const proven = live(configMap('a'), controlledByBundle(), withUid('a-uid'), withAnnotation(Annotations.deletionDelay, '1h'), withAnnotation(Annotations.deletionTimestamp, OLD), withAnnotation(Annotations.stampProof, seal.sign('a-uid', OLD)));

  it('prune: a backdated stamp by hand starts the countdown now (stamped again, with a proof); a proven one has expired', () => {
    const [forged] = planPrune({ controlled: [handStamped], inSpec: new Set(), now: NOW, stampSeal: seal });
    expect(forged?.action).toBe('mark');
    if (forged?.action !== 'mark') return;
    const proofOp = forged.patch.find((op) => op.path.endsWith('stamp-proof'));
    expect(proofOp).toMatchObject({ op: 'add', value: seal.sign('a-uid', forged.deletionTimestamp) });
    const [ours] = planPrune({ controlled: [proven], inSpec: new Set(), now: NOW, stampSeal: seal });
    expect(ours?.action).toBe('delete');
  });

  it('the fresh read before an expired delete refuses a stamp written by hand', () => {
    const target = { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns1', uid: 'a-uid', resourceVersion: '1' };
    expect(redecideDelete({ fresh: handStamped, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal })).toBeUndefined();
    expect(redecideDelete({ fresh: proven, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal })).toBe(proven.metadata.resourceVersion);
  });

  it('finalizer: the release signs a countdown started now, not the stamp written by hand', () => {
    const plan = planFinalize({
      propagation: 'background',
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [handStamped],
      coordinates: new Set(),
      claims: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(new Uint8Array(32)),
      stampSeal: seal,
    });
    const step = plan.steps.find((s) => s.action === 'release');
    expect(step).toBeDefined();
    if (step?.action !== 'release') return;
    const stamp = step.patch.find((op) => op.path.endsWith('deletionTimestamp'));
    expect(stamp).toMatchObject({ op: 'add', value: new Date(NOW).toISOString() });
  });
});

describe('an approval dated in the future is not given yet (red-team find d)', () => {
  it('waits for an approval dated well ahead of the server (2099); one a little ahead (an approver\'s clock) counts', () => {
    const approve = (approved: string) =>
      planPrune({
        controlled: [live(configMap('a'), controlledByBundle(), withUid('a-uid'), withAnnotation(Annotations.deletionPolicy, 'Approve'), withAnnotation(Annotations.deletionDelay, '0s'), withAnnotation(Annotations.deletionTimestamp, OLD), withAnnotation(Annotations.stampProof, seal.sign('a-uid', OLD)), withAnnotation(Annotations.deletionApproved, approved))],
        inSpec: new Set(),
        now: NOW,
        stampSeal: seal,
      })[0]?.action;
    expect(approve('2099-01-01T00:00:00Z')).toBe('await');
    expect(approve('2025-06-01T00:00:00Z')).toBe('delete');
    expect(approve(new Date(NOW + 30_000).toISOString())).toBe('delete');
  });
});

describe('finalizer: the manifest\'s deletion rules stand in for any the live object lacks (red-team find: policy taken off by hand while the finalizer held)', () => {
  const plain = live(configMap('a'), controlledByBundle(), withUid('a-uid'));
  const plan = (declared: Record<string, string>) =>
    planFinalize({
      propagation: 'background',
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [plain],
      coordinates: new Set(['/ConfigMap/ns1/a']),
      claims: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(new Uint8Array(32)),
      stampSeal: seal,
      declared: new Map([['/ConfigMap/ns1/a', declared]]),
    }).steps[0];
  it.each([
    ['Orphan', { [Annotations.deletionPolicy]: 'Orphan' }, 'release'],
    ['Approve', { [Annotations.deletionPolicy]: 'Approve' }, 'release'],
    ['a delay', { [Annotations.deletionDelay]: '1h' }, 'release'],
    ['nothing', {}, 'delete'],
  ])('declared %s: %s', (_name, declared, expected) => {
    expect(plan(declared)?.action).toBe(expected);
  });
  it('an Orphan release writes the policy back onto the object', () => {
    const step = plan({ [Annotations.deletionPolicy]: 'Orphan' });
    expect(step?.action === 'release' ? step.patch : []).toContainEqual({ op: 'add', path: `/metadata/annotations/${Annotations.deletionPolicy.replace('/', '~1')}`, value: 'Orphan' });
  });
});
