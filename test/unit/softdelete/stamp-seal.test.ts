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
import { provenCountdown, stampSeal } from '../../../src/core/softdelete/stamp-seal.js';
import { createHmac } from 'node:crypto';
import { releaseSigner } from '../../../src/core/softdelete/provenance.js';
import { BUNDLE_UID, configMap, controlledByBundle, live, NOW, recordOf, withAnnotation, withUid } from '../bundle/builders.js';

const seal = stampSeal(new Uint8Array(32).fill(7));
const otherSeal = stampSeal(new Uint8Array(32).fill(8));
const OLD = '2020-01-01T00:00:00Z';

const HOUR = 3_600_000;
const DELETE_1H = { delayMs: HOUR, policy: 'Delete' } as const;
const sign = (uid: string, stamp: string) => seal.sign(uid, stamp, DELETE_1H);

describe('stampSeal', () => {
  it('opens its own proofs only, for that uid and that stamp, and gives back the rules sealed', () => {
    const proof = sign('u1', OLD);
    expect(seal.open('u1', OLD, proof)).toEqual({ rules: DELETE_1H });
    expect(seal.open('u2', OLD, proof)).toBeUndefined();
    expect(seal.open('u1', '2020-01-01T00:00:01Z', proof)).toBeUndefined();
    expect(otherSeal.open('u1', OLD, proof)).toBeUndefined();
    expect(seal.open('u1', OLD, undefined)).toBeUndefined();
    expect(seal.open('u1', OLD, 'v1:')).toBeUndefined();
    expect(seal.open('u1', OLD, 'v2:')).toBeUndefined();
    const gated = seal.sign('u1', OLD, { delayMs: 0, policy: 'Approve', deleteWhen: 'BundleReady' });
    expect(seal.open('u1', OLD, gated)).toEqual({ rules: { delayMs: 0, policy: 'Approve', deleteWhen: 'BundleReady' } });
  });
  it('refuses a proof whose rules in clear were edited (1h to 1s, Approve to Delete)', () => {
    const proof = seal.sign('u1', OLD, { delayMs: HOUR, policy: 'Approve' });
    expect(seal.open('u1', OLD, proof.replace(`:${HOUR}:`, ':1000:'))).toBeUndefined();
    expect(seal.open('u1', OLD, proof.replace(':Approve:', ':Delete:'))).toBeUndefined();
  });
  it('still opens a v1 proof (written before rules were sealed), with no floor', () => {
    const v1 = `v1:${createHmac('sha256', new Uint8Array(32).fill(7))
      .update(JSON.stringify(['stamp', 'v1', 'u1', OLD]))
      .digest()
      .toString('base64url')}`;
    expect(seal.open('u1', OLD, v1)).toEqual({});
  });
  it('an unproven stamp reads as none (its approval with it); a proven one as written, with its floor; anything without a seal as written', () => {
    const forged = { [Annotations.deletionDelay]: '1h', [Annotations.deletionTimestamp]: OLD, [Annotations.deletionApproved]: OLD };
    expect(provenCountdown(forged, 'u1', seal)).toEqual({ annotations: { [Annotations.deletionDelay]: '1h' } });
    const proven = { ...forged, [Annotations.stampProof]: sign('u1', OLD) };
    expect(provenCountdown(proven, 'u1', seal)).toMatchObject({ annotations: proven, floor: { delayMs: HOUR, policy: 'Delete' } });
    expect(provenCountdown(forged, 'u1', undefined)).toEqual({ annotations: forged });
  });
});

describe('prune and finalizer on a stamp written by hand', () => {
  const handStamped = live(
    configMap('a'),
    controlledByBundle(),
    withUid('a-uid'),
    withAnnotation(Annotations.deletionDelay, '1h'),
    withAnnotation(Annotations.deletionTimestamp, OLD),
  );
  const proven = live(
    configMap('a'),
    controlledByBundle(),
    withUid('a-uid'),
    withAnnotation(Annotations.deletionDelay, '1h'),
    withAnnotation(Annotations.deletionTimestamp, OLD),
    withAnnotation(Annotations.stampProof, sign('a-uid', OLD)),
  );

  it('prune: a backdated stamp by hand starts the countdown now (stamped again, with a proof); a proven one has expired', () => {
    const [forged] = planPrune({ controlled: [handStamped], inSpec: new Set(), now: NOW, stampSeal: seal });
    expect(forged?.action).toBe('mark');
    if (forged?.action !== 'mark') return;
    const proofOp = forged.patch.find((op) => op.path.endsWith('stamp-proof'));
    expect(proofOp).toMatchObject({ op: 'add', value: sign('a-uid', forged.deletionTimestamp) });
    const [ours] = planPrune({ controlled: [proven], inSpec: new Set(), now: NOW, stampSeal: seal, countdownRecord: recordOf(proven) });
    // The same proven stamp the record does not hold (cleared by another status writer: red team 9): the countdown starts again.
    expect(planPrune({ controlled: [proven], inSpec: new Set(), now: NOW, stampSeal: seal })[0]?.action).toBe('mark');
    expect(ours?.action).toBe('delete');
  });

  it('the fresh read before an expired delete refuses a stamp written by hand', () => {
    const target = { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns1', uid: 'a-uid', resourceVersion: '1' };
    expect(redecideDelete({ fresh: handStamped, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal })).toBeUndefined();
    expect(
      redecideDelete({ fresh: proven, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal, countdownRecord: recordOf(proven) }),
    ).toBe(proven.metadata.resourceVersion);
    expect(redecideDelete({ fresh: proven, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal })).toBeUndefined();
  });

  it('finalizer: the release signs a countdown started now, not the stamp written by hand', () => {
    const plan = planFinalize({
      propagation: 'Background',
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [handStamped],
      coordinates: new Set(),
      listings: new Map(),
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
  it("waits for an approval dated well ahead of the server (2099); one a little ahead (an approver's clock) counts", () => {
    const approve = (approved: string) => {
      const o = live(
        configMap('a'),
        controlledByBundle(),
        withUid('a-uid'),
        withAnnotation(Annotations.deletionPolicy, 'Approve'),
        withAnnotation(Annotations.deletionDelay, '0s'),
        withAnnotation(Annotations.deletionTimestamp, OLD),
        withAnnotation(Annotations.stampProof, sign('a-uid', OLD)),
        withAnnotation(Annotations.deletionApproved, approved),
      );
      return planPrune({ controlled: [o], inSpec: new Set(), now: NOW, stampSeal: seal, countdownRecord: recordOf(o) })[0]?.action;
    };
    expect(approve('2099-01-01T00:00:00Z')).toBe('await');
    expect(approve('2025-06-01T00:00:00Z')).toBe('delete');
    expect(approve(new Date(NOW + 30_000).toISOString())).toBe('delete');
  });
});

describe("finalizer: the manifest's deletion rules stand in for any the live object lacks (red-team find: policy taken off by hand while the finalizer held)", () => {
  const plain = live(configMap('a'), controlledByBundle(), withUid('a-uid'));
  const plan = (declared: Record<string, string>) =>
    planFinalize({
      propagation: 'Background',
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [plain],
      coordinates: new Set(['/ConfigMap/ns1/a']),
      listings: new Map(),
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
    expect(step?.action === 'release' ? step.patch : []).toContainEqual({
      op: 'add',
      path: `/metadata/annotations/${Annotations.deletionPolicy.replace('/', '~1')}`,
      value: 'Orphan',
    });
  });
});

describe("a countdown's rules are sealed with its stamp: an edit can put the deletion off, never bring it forward (red-team find: deletionDelay 1h shortened to 1s by hand)", () => {
  const STAMP = new Date(NOW - 10 * 60_000).toISOString();
  const counting = (liveRules: Record<string, string>, sealed: Parameters<typeof seal.sign>[2]) => {
    let o = live(
      configMap('a'),
      controlledByBundle(),
      withUid('a-uid'),
      withAnnotation(Annotations.deletionTimestamp, STAMP),
      withAnnotation(Annotations.stampProof, seal.sign('a-uid', STAMP, sealed)),
    );
    for (const [k, v] of Object.entries(liveRules)) o = live(o, withAnnotation(k, v));
    return o;
  };
  const prune = (o: ReturnType<typeof counting>) =>
    planPrune({ controlled: [o], inSpec: new Set(), now: NOW, stampSeal: seal, countdownRecord: recordOf(o) })[0];
  const target = { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: 'ns1', uid: 'a-uid', resourceVersion: '1' };

  it('a delay shortened by hand (1h sealed, 1s live): the countdown still ends an hour after its stamp', () => {
    const o = counting({ [Annotations.deletionDelay]: '1s' }, DELETE_1H);
    expect(prune(o)).toMatchObject({ action: 'wait', deleteAfter: new Date(Date.parse(STAMP) + HOUR).toISOString() });
    expect(
      redecideDelete({ fresh: o, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal, countdownRecord: recordOf(o) }),
    ).toBeUndefined();
  });
  it('a delay lengthened by hand (1h sealed, 2h live) is followed', () => {
    expect(prune(counting({ [Annotations.deletionDelay]: '2h' }, DELETE_1H))).toMatchObject({
      action: 'wait',
      deleteAfter: new Date(Date.parse(STAMP) + 2 * HOUR).toISOString(),
    });
  });
  it('deletionPolicy Approve overwritten with Delete: still waits for approval once due', () => {
    const o = counting({ [Annotations.deletionDelay]: '0s', [Annotations.deletionPolicy]: 'Delete' }, { delayMs: 0, policy: 'Approve' });
    expect(prune(o)).toMatchObject({ action: 'await', waitingFor: 'Approval' });
    expect(
      redecideDelete({ fresh: o, target, bundleUid: BUNDLE_UID, now: NOW, stampSeal: seal, countdownRecord: recordOf(o) }),
    ).toBeUndefined();
  });
  it('the sealed rules agree with the live ones: unchanged (expired at stamp + delay)', () => {
    expect(prune(counting({ [Annotations.deletionDelay]: '1m' }, { delayMs: 60_000, policy: 'Delete' }))).toMatchObject({
      action: 'delete',
      afterDelay: true,
    });
  });
  it('a stamp written with its rules seals the rules the countdown starts under', () => {
    const [marked] = planPrune({
      controlled: [
        live(
          configMap('a'),
          controlledByBundle(),
          withUid('a-uid'),
          withAnnotation(Annotations.deletionDelay, '90m'),
          withAnnotation(Annotations.deletionPolicy, 'Approve'),
        ),
      ],
      inSpec: new Set(),
      now: NOW,
      stampSeal: seal,
    });
    expect(marked?.action).toBe('mark');
    if (marked?.action !== 'mark') return;
    const proof = marked.patch.find((op) => op.path.endsWith('stamp-proof'));
    expect(proof?.op === 'add' ? seal.open('a-uid', marked.deletionTimestamp, String(proof.value)) : undefined).toEqual({
      rules: { delayMs: 90 * 60_000, policy: 'Approve' },
    });
  });
  it("the finalizer's release carries the sealed delay, not the shortened one (the sweeper reads only the object)", () => {
    const plan = planFinalize({
      propagation: 'Background',
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [counting({ [Annotations.deletionDelay]: '1s' }, DELETE_1H)],
      coordinates: new Set(),
      listings: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(new Uint8Array(32)),
      stampSeal: seal,
    });
    const step = plan.steps[0];
    expect(step?.action).toBe('release');
    expect(step?.action === 'release' ? step.patch : []).toContainEqual({
      op: 'add',
      path: `/metadata/annotations/${Annotations.deletionDelay.replace('/', '~1')}`,
      value: '1h0m0s',
    });
  });
});

describe("finalizer: the stricter of the live rules and the manifest's (red-team find: deletionPolicy Delete written over the manifest's Orphan or Approve while the finalizer held)", () => {
  const withRules = (rules: Record<string, string>) => {
    let o = live(configMap('a'), controlledByBundle(), withUid('a-uid'));
    for (const [k, v] of Object.entries(rules)) o = live(o, withAnnotation(k, v));
    return o;
  };
  const step = (
    liveRules: Record<string, string>,
    declared: Record<string, string>,
    propagation: 'Background' | 'Foreground' = 'Background',
  ) =>
    planFinalize({
      propagation,
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [withRules(liveRules)],
      coordinates: new Set(['/ConfigMap/ns1/a']),
      listings: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(new Uint8Array(32)),
      stampSeal: seal,
      declared: new Map([['/ConfigMap/ns1/a', declared]]),
    }).steps[0];
  const policyOp = (value: string) => ({
    op: 'add',
    path: `/metadata/annotations/${Annotations.deletionPolicy.replace('/', '~1')}`,
    value,
  });
  it.each([
    ['Orphan declared, Delete live', { [Annotations.deletionPolicy]: 'Delete' }, { [Annotations.deletionPolicy]: 'Orphan' }, 'Orphan'],
    ['Approve declared, Delete live', { [Annotations.deletionPolicy]: 'Delete' }, { [Annotations.deletionPolicy]: 'Approve' }, 'Approve'],
    [
      'Approve declared, Delete live, foreground',
      { [Annotations.deletionPolicy]: 'Delete' },
      { [Annotations.deletionPolicy]: 'Approve' },
      'Approve',
    ],
  ])('%s: released, the stricter policy written onto it', (name, liveRules, declared, policy) => {
    const s = step(liveRules, declared, name.endsWith('foreground') ? 'Foreground' : 'Background');
    expect(s?.action).toBe('release');
    expect(s?.action === 'release' ? s.patch : []).toContainEqual(policyOp(policy));
  });
  it('a delay shortened by hand (1h declared, 1s live): released with 1h', () => {
    const s = step({ [Annotations.deletionDelay]: '1s' }, { [Annotations.deletionDelay]: '1h' });
    expect(s?.action === 'release' ? s.patch : []).toContainEqual({
      op: 'add',
      path: `/metadata/annotations/${Annotations.deletionDelay.replace('/', '~1')}`,
      value: '1h',
    });
  });
  it('a delay lengthened by hand (1h declared, 2h live) is kept', () => {
    const s = step({ [Annotations.deletionDelay]: '2h' }, { [Annotations.deletionDelay]: '1h' });
    expect(s?.action === 'release' ? s.patch.filter((op) => op.path.endsWith('deletionDelay')) : ['?']).toEqual([]);
  });
  it('nothing declared, nothing live: deleted as before', () => {
    expect(step({}, {})?.action).toBe('delete');
  });
  // Red team 8: a manifest whose rules cannot be read (a typo beside an Orphan) was not applied; its object is kept.
  it.each(['Background', 'Foreground'] as const)(
    "%s: the manifest's rules cannot be read: kept (released, Orphan written)",
    (propagation) => {
      const s = step({}, { [Annotations.deletionPolicy]: 'Orphan', [Annotations.deletionDelay]: '1h30' }, propagation);
      expect(s?.action).toBe('release');
      expect(s?.action === 'release' ? s.patch : []).toContainEqual(policyOp('Orphan'));
    },
  );
});

describe('a sealed countdown whose delay or gate was taken off by hand', () => {
  const STAMP = new Date(NOW - 10 * 60_000).toISOString();
  const o = (sealed: Parameters<typeof seal.sign>[2], extra: Record<string, string> = {}) => {
    let x = live(
      configMap('a'),
      controlledByBundle(),
      withUid('a-uid'),
      withAnnotation(Annotations.deletionTimestamp, STAMP),
      withAnnotation(Annotations.stampProof, seal.sign('a-uid', STAMP, sealed)),
    );
    for (const [k, v] of Object.entries(extra)) x = live(x, withAnnotation(k, v));
    return x;
  };
  it('a delay taken off is kept and reported, as before (the floor never makes an object deletable that was kept)', () => {
    expect(
      planPrune({ controlled: [o(DELETE_1H)], inSpec: new Set(), now: NOW, stampSeal: seal, countdownRecord: recordOf(o(DELETE_1H)) })[0]
        ?.action,
    ).toBe('invalid');
  });
  it('an Approve countdown whose policy was overwritten with Delete still waits for its approval', () => {
    const approveToDelete = o({ delayMs: 0, policy: 'Approve' }, { [Annotations.deletionPolicy]: 'Delete' });
    expect(
      planPrune({
        controlled: [approveToDelete],
        inSpec: new Set(),
        now: NOW,
        stampSeal: seal,
        countdownRecord: recordOf(approveToDelete),
      })[0],
    ).toMatchObject({ action: 'await', waitingFor: 'Approval' });
  });
  it('an unproven stamp with no delay is kept as before (the delay meant is unknown)', () => {
    const forged = live(configMap('a'), controlledByBundle(), withUid('a-uid'), withAnnotation(Annotations.deletionTimestamp, STAMP));
    expect(planPrune({ controlled: [forged], inSpec: new Set(), now: NOW })[0]?.action).toBe('invalid');
  });
});

describe("the manifest's deletion rules are sealed onto the applied object (a rule written or overwritten by hand before the object leaves its Bundle)", () => {
  const identity = { group: '', kind: 'ConfigMap', namespace: 'ns1', name: 'a' };
  it("seals and opens the deletion annotations, bound to the object's group, kind, namespace and name", () => {
    const proof = seal.sealDeclared(identity, { [Annotations.deletionDelay]: '1h', other: 'x' });
    expect(proof).toBeDefined();
    expect(seal.openDeclared(identity, proof)).toEqual({ [Annotations.deletionDelay]: '1h' });
    expect(seal.openDeclared({ ...identity, name: 'b' }, proof)).toEqual({});
    expect(seal.openDeclared({ ...identity, kind: 'Secret' }, proof)).toEqual({});
    expect(otherSeal.openDeclared(identity, proof)).toEqual({});
    expect(seal.openDeclared(identity, proof?.replace(':1h:', ':1s:'))).toEqual({});
    expect(seal.openDeclared(identity, undefined)).toEqual({});
    expect(seal.sealDeclared(identity, { other: 'x' })).toBeUndefined();
  });
  it('carries values with colons and any text intact', () => {
    const rules = {
      [Annotations.deletionDelay]: '1h30m',
      [Annotations.deletionPolicy]: 'Approve',
      [Annotations.deleteWhen]: 'BundleReady',
    };
    expect(seal.openDeclared(identity, seal.sealDeclared(identity, rules))).toEqual(rules);
  });

  const leaving = (declared: Record<string, string>, liveRules: Record<string, string>, withProof = true) => {
    const proof = seal.sealDeclared(identity, declared);
    let o = live(configMap('a'), controlledByBundle(), withUid('a-uid'));
    for (const [k, v] of Object.entries({ ...declared, ...liveRules })) o = live(o, withAnnotation(k, v));
    if (withProof && proof !== undefined) o = live(o, withAnnotation(Annotations.declaredRules, proof));
    return o;
  };
  const prune = (o: ReturnType<typeof leaving>, defaults?: { deletionDelay?: string; deletionPolicy?: 'Delete' | 'Orphan' | 'Approve' }) =>
    planPrune({ controlled: [o], inSpec: new Set(), now: NOW, stampSeal: seal, defaults })[0];

  it('the manifest said 1h, the live delay was overwritten with 1s: the countdown starts with 1h (and seals 1h)', () => {
    const marked = prune(leaving({ [Annotations.deletionDelay]: '1h' }, { [Annotations.deletionDelay]: '1s' }));
    expect(marked).toMatchObject({ action: 'mark', deleteAfter: new Date(NOW + HOUR).toISOString() });
  });
  it('the manifest said Approve, the live policy was overwritten with Delete: still waits for an approval', () => {
    expect(prune(leaving({ [Annotations.deletionPolicy]: 'Approve' }, { [Annotations.deletionPolicy]: 'Delete' }))).toMatchObject({
      action: 'mark',
      gates: ['Approval'],
    });
  });
  it('the manifest said Orphan, the live policy was overwritten with Delete: kept (released)', () => {
    expect(prune(leaving({ [Annotations.deletionPolicy]: 'Orphan' }, { [Annotations.deletionPolicy]: 'Delete' }))?.action).toBe('release');
  });
  it("the manifest said nothing, a delay of 0s was added by hand: the Bundle's default delay (1h) holds", () => {
    expect(prune(leaving({}, { [Annotations.deletionDelay]: '0s' }), { deletionDelay: '1h' })).toMatchObject({
      action: 'mark',
      deleteAfter: new Date(NOW + HOUR).toISOString(),
    });
  });
  it("the manifest said nothing, Delete added by hand over the Bundle's default Approve: still gated", () => {
    expect(prune(leaving({}, { [Annotations.deletionPolicy]: 'Delete' }), { deletionPolicy: 'Approve' })).toMatchObject({
      action: 'mark',
      gates: ['Approval'],
    });
  });
  it("the manifest's own shorter delay (0s over a default of 1h) is followed", () => {
    expect(prune(leaving({ [Annotations.deletionDelay]: '0s' }, {}), { deletionDelay: '1h' })).toMatchObject({
      action: 'mark',
      deleteAfter: new Date(NOW).toISOString(),
    });
  });
  it('a lengthened delay (manifest 1h, live 2h) is followed', () => {
    expect(prune(leaving({ [Annotations.deletionDelay]: '1h' }, { [Annotations.deletionDelay]: '2h' }))).toMatchObject({
      action: 'mark',
      deleteAfter: new Date(NOW + 2 * HOUR).toISOString(),
    });
  });
  it("no proof (applied before proofs, or taken off by hand): the Bundle's defaults are the floor", () => {
    expect(
      prune(leaving({ [Annotations.deletionDelay]: '1h' }, { [Annotations.deletionDelay]: '1s' }, false), { deletionDelay: '10m' }),
    ).toMatchObject({ action: 'mark', deleteAfter: new Date(NOW + 10 * 60_000).toISOString() });
  });
});

describe('prune: an object whose UID the spec lists is never a candidate, whatever key it was read under', () => {
  it('listedUids keeps it', () => {
    const o = live(configMap('a'), controlledByBundle(), withUid('a-uid'));
    expect(planPrune({ controlled: [o], inSpec: new Set(), now: NOW })).toHaveLength(1);
    expect(planPrune({ controlled: [o], inSpec: new Set(), listedUids: new Set(['a-uid']), now: NOW })).toHaveLength(0);
  });
});
