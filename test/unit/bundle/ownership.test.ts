import { API_VERSION, Annotations, BUNDLE_KIND } from '../../../src/api/names.js';
import type { OwnerReference } from '../../../src/api/resource.js';
import {
  claimWithdrawal,
  listingsByObject,
  decideOwnership,
  listedObjectKeys,
  withdrawClaimPatch,
  type BundleListing,
  type BundleLike,
} from '../../../src/core/bundle/ownership.js';
import { hasClaimReference, operatorWrittenReferences, userReferences } from '../../../src/core/bundle/owner-references.js';
import { configMap, controlledBy, controlledByBundle, live, withAnnotation, withOwner, type Mod, type Obj } from './builders.js';

const bundleRef = (uid: string, controller = true): OwnerReference => ({
  apiVersion: API_VERSION,
  kind: BUNDLE_KIND,
  name: `b-${uid}`,
  uid,
  controller,
  blockOwnerDeletion: true,
});
const depRef = (uid: string): OwnerReference => ({ apiVersion: 'v1', kind: 'ConfigMap', name: `cm-${uid}`, uid, blockOwnerDeletion: true });
const userRef = (uid: string): OwnerReference => ({ apiVersion: 'example.com/v1', kind: 'Owner', name: `o-${uid}`, uid });
const recorded = (...uids: string[]): Record<string, string> => ({ [Annotations.dependencyReferences]: uids.join(',') });
/** The claims the operator wrote, as it records them with each claim. */
const claimed = (...uids: string[]): Record<string, string> => ({ [Annotations.claimReferences]: uids.join(',') });

describe('operatorWrittenReferences / userReferences', () => {
  it.each<[string, OwnerReference[], Record<string, string> | undefined, string[], string[]]>([
    [
      'the Bundle controller reference and the recorded dependencies',
      [bundleRef('b1'), depRef('cfg'), userRef('u')],
      recorded('cfg'),
      [],
      ['b1', 'cfg'],
    ],
    ["a dependency not recorded is the user's", [bundleRef('b1'), depRef('cfg'), depRef('mine')], recorded('cfg'), [], ['b1', 'cfg']],
    ['no annotation: only the Bundle reference', [bundleRef('b1'), depRef('cfg')], undefined, [], ['b1']],
    ["another Bundle's claim is the operator's too", [bundleRef('b1'), bundleRef('b2', false)], claimed('b2'), [], ['b1', 'b2']],
    // Red team 13 and 14: a reference to a Bundle the operator recorded no claim of (the manifest's, another tool's) is the user's.
    [
      "a reference to another Bundle that no claim recorded is the user's",
      [bundleRef('b1'), bundleRef('b2', false)],
      undefined,
      [],
      ['b1'],
    ],
    ['the claim of a live Bundle listing the object stays', [bundleRef('b1'), bundleRef('b2', false)], claimed('b2'), ['b2'], ['b1']],
    [
      'a controller reference goes even if that Bundle lists the object',
      [bundleRef('b1'), bundleRef('b2', false)],
      undefined,
      ['b1', 'b2'],
      ['b1'],
    ],
    [
      'a recorded uid on a controller reference that is not a Bundle stays',
      [{ ...depRef('rs'), controller: true }],
      recorded('rs'),
      [],
      [],
    ],
    ['nothing', [], undefined, [], []],
    [
      'no annotation and no managedFields (cleared by hand): nothing says the operator applied a blocking reference to a sibling',
      [bundleRef('b1'), depRef('sib'), userRef('sib2'), depRef('stranger')],
      undefined,
      [],
      ['b1'],
    ],
    // Red team 5: a stale annotation (written back from an older copy) must not turn the operator's reference into the user's.
    [
      "a stale annotation and no managedFields: a blocking reference to a sibling is the user's (with them: below)",
      [bundleRef('b1'), depRef('sib'), depRef('mine')],
      recorded('other'),
      [],
      ['b1'],
    ],
    ["a non-blocking reference to a sibling is the user's", [bundleRef('b1'), userRef('sib2')], recorded('other'), [], ['b1']],
  ])('%s', (_name, refs, annotations, liveClaims, expected) => {
    const meta = { ownerReferences: refs, ...(annotations ? { annotations } : {}) };
    const ctx = { liveClaimUids: new Set(liveClaims), siblingUids: new Set(['sib', 'sib2']) };
    const ours = operatorWrittenReferences(meta, ctx);
    expect(ours.map((r) => r.uid)).toEqual(expected);
    // The two halves partition the list, in order.
    expect(userReferences(meta, ctx).map((r) => r.uid)).toEqual(refs.filter((r) => !expected.includes(r.uid)).map((r) => r.uid));
  });

  // Red team 6: another tool's blocking reference to a sibling is the user's; the one the operator applied is its own.
  const managed = (manager: string, ...uids: string[]) => ({
    manager,
    operation: 'Apply',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:ownerReferences': Object.fromEntries(uids.map((u) => [`k:{"uid":"${u}"}`, { '.': {} }])) } },
  });
  it.each<[string, unknown[], string[]]>([
    ['applied by the operator: its own', [managed('bundlesmith', 'b1', 'sib')], ['b1', 'sib']],
    ["written by another tool: the user's", [managed('bundlesmith', 'b1'), managed('another-tool', 'sib')], ['b1']],
    ["managedFields with no entry of the operator's: the user's", [], ['b1']],
  ])('a blocking reference to a sibling, with managedFields: %s', (_name, managedFields, expected) => {
    const meta = { ownerReferences: [bundleRef('b1'), depRef('sib')], annotations: recorded('stale'), managedFields };
    expect(operatorWrittenReferences(meta, { siblingUids: new Set(['sib']) }).map((r) => r.uid)).toEqual(expected);
  });

  // Red team 7: a reference the manifest names itself (its uid a "!{...}" reference) is the user's, though the operator applied it.
  it("a reference the manifest names is the user's, by uid or by kind and name", () => {
    const meta = { ownerReferences: [bundleRef('b1'), depRef('sib')], managedFields: [managed('bundlesmith', 'b1', 'sib')] };
    const ctx = { siblingUids: new Set(['sib']) };
    expect(operatorWrittenReferences(meta, ctx).map((r) => r.uid)).toEqual(['b1', 'sib']);
    expect(
      operatorWrittenReferences(meta, {
        ...ctx,
        namedByManifest: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-sib', uid: '!{owner-uid}' }],
      }).map((r) => r.uid),
    ).toEqual(['b1']);
    expect(operatorWrittenReferences(meta, { ...ctx, namedByManifest: [{ uid: 'sib' }] }).map((r) => r.uid)).toEqual(['b1']);
    expect(
      operatorWrittenReferences(meta, { ...ctx, namedByManifest: [{ apiVersion: 'apps/v1', kind: 'ConfigMap', name: 'cm-sib' }] }).map(
        (r) => r.uid,
      ),
    ).toEqual(['b1', 'sib']);
  });
});

describe('withdrawClaimPatch', () => {
  it('takes out only the claim, guarded by the list as read', () => {
    const refs = [bundleRef('b1'), bundleRef('b2', false), userRef('u')];
    const o = live(configMap('cm'), ...refs.map((r) => withOwner(r)), withAnnotation(Annotations.claimReferences, 'b2'));
    expect(withdrawClaimPatch(o, 'b2')).toEqual([
      { op: 'test', path: '/metadata/ownerReferences', value: refs },
      { op: 'replace', path: '/metadata/ownerReferences', value: [refs[0], refs[2]] },
      { op: 'remove', path: '/metadata/annotations/smith.atlassian.com~1claimReferences' },
    ]);
    expect(hasClaimReference(o, 'b2')).toBe(true);
  });

  it("a reference to the Bundle that no claim recorded (the manifest's, another tool's) is no claim: never withdrawn", () => {
    const o = live(configMap('cm'), withOwner(bundleRef('b1')), withOwner(bundleRef('b2', false)));
    expect(hasClaimReference(o, 'b2')).toBe(false);
    expect(claimWithdrawal(o, 'b2', [])).toBeUndefined();
  });

  it('never takes a controller reference, and has nothing to do without a claim', () => {
    const o = live(configMap('cm'), withOwner(bundleRef('b1')));
    expect(withdrawClaimPatch(o, 'b1')).toBeUndefined();
    expect(hasClaimReference(o, 'b1')).toBe(false);
    expect(withdrawClaimPatch(o, 'b9')).toBeUndefined();
  });
});

describe('claimWithdrawal', () => {
  const claim = (uid: string): BundleListing => ({ name: `b-${uid}`, uid });
  const after = (o: Obj, patch: ReturnType<typeof claimWithdrawal>): string[] | undefined => {
    const replace = patch?.find((op) => op.op === 'replace');
    return replace === undefined || replace.op !== 'replace' ? undefined : (replace.value as OwnerReference[]).map((r) => r.uid);
  };
  it.each<[string, OwnerReference[], string[], string[] | undefined]>([
    [
      'a controlling Bundle that lists it holds it: only the claim goes',
      [bundleRef('b1'), bundleRef('me', false), bundleRef('b2', false)],
      ['me', 'b1', 'b2'],
      ['b1', 'b2'],
    ],
    [
      'a controller that is not a Bundle holds it: only the claim goes',
      [{ ...userRef('rs'), controller: true }, bundleRef('me', false)],
      ['b2'],
      ['rs'],
    ],
    ['nobody else lists it: only the claim goes', [bundleRef('me', false), bundleRef('gone', false)], ['me'], ['gone']],
    // Fuzz seed 3041: the claim left alone on an uncontrolled object is its only owner; once this Bundle goes, the collector deletes it.
    [
      "no controller and another lister: every operator reference goes, the lister's claim stays",
      [bundleRef('me', false), bundleRef('gone', false), bundleRef('b2', false), userRef('u')],
      ['b2'],
      ['b2', 'u'],
    ],
    [
      'a controlling Bundle that dropped it and another lister: its reference goes too',
      [bundleRef('b1'), bundleRef('me', false), userRef('u')],
      ['b2'],
      ['u'],
    ],
    ['no claim of this Bundle: nothing to do', [bundleRef('b1')], ['b2'], undefined],
  ])('%s', (_name, refs, listers, expected) => {
    // Every claim in these lists was written by the operator, and recorded with it.
    const claims = refs.filter((r) => r.kind === BUNDLE_KIND && r.controller !== true).map((r) => r.uid);
    const o = live(configMap('cm'), ...refs.map((r) => withOwner(r)), withAnnotation(Annotations.claimReferences, claims.join(',')));
    const patch = claimWithdrawal(o, 'me', listers.map(claim));
    expect(after(o, patch)).toEqual(expected);
    if (patch !== undefined) expect(patch[0]).toEqual({ op: 'test', path: '/metadata/ownerReferences', value: refs });
  });
});

describe('listedObjectKeys / claimsByObject', () => {
  const b = (name: string, created: string | undefined, resources: unknown, extra: Partial<BundleLike['metadata']> = {}): BundleLike => ({
    metadata: { name, namespace: 'ns1', uid: `${name}-uid`, ...(created ? { creationTimestamp: created } : {}), ...extra },
    spec: { resources },
  });
  const cm = (name: string, apiVersion = 'v1'): unknown => ({
    name: `r-${name}`,
    spec: { object: { apiVersion, kind: 'ConfigMap', metadata: { name, namespace: 'elsewhere' } } },
  });

  it("reads what it can of a spec, in the Bundle's namespace, whatever the version", () => {
    expect(
      listedObjectKeys(b('x', undefined, [cm('a'), { name: 'broken' }, { spec: { object: { kind: 'ConfigMap' } } }, cm('b', 'v2')])),
    ).toEqual(['/ConfigMap/ns1/a', '/ConfigMap/ns1/b']);
    expect(listedObjectKeys({ metadata: { name: 'x' }, spec: 'nonsense' })).toEqual([]);
  });

  it('counts live Bundles only, oldest claim first', () => {
    const claims = listingsByObject([
      b('young', '2026-01-02T00:00:00Z', [cm('a')]),
      b('old', '2026-01-01T00:00:00Z', [cm('a'), cm('a')]),
      b('deleting', '2025-01-01T00:00:00Z', [cm('a')], { deletionTimestamp: '2026-01-03T00:00:00Z' }),
      b('undated', undefined, [cm('a')]),
    ]);
    expect(claims.get('/ConfigMap/ns1/a')?.map((c) => c.name)).toEqual(['old', 'young', 'undated']);
  });
});

describe('decideOwnership', () => {
  const self: BundleListing = { name: 'b2', uid: 'b2-uid', creationTimestamp: '2026-01-02T00:00:00Z' };
  const older: BundleListing = { name: 'b0', uid: 'b0-uid', creationTimestamp: '2026-01-01T00:00:00Z' };
  const b1: BundleListing = { name: 'b1', uid: 'b1-uid', creationTimestamp: '2025-12-01T00:00:00Z' };
  const obj = (...mods: Mod<Obj>[]): Obj => live(configMap('cm'), ...mods);

  it.each<[string, Obj | undefined, BundleListing[], string]>([
    ['no object', undefined, [self], 'absent'],
    ['ours', obj(controlledByBundle('b2-uid', 'b2')), [self], 'own'],
    ['uncontrolled, only claim', obj(), [self], 'adopt'],
    ['uncontrolled, this claim not passed in', obj(), [], 'adopt'],
    ['uncontrolled, an older claim exists', obj(), [older, self], 'conflict'],
    ['controlled by a Bundle that dropped it', obj(controlledByBundle('b1-uid', 'b1')), [self], 'hand-over'],
    ['controlled by a Bundle that dropped it, an older claim exists', obj(controlledByBundle('b1-uid', 'b1')), [older, self], 'conflict'],
    ['controlled by a Bundle that still lists it', obj(controlledByBundle('b1-uid', 'b1')), [b1, self], 'conflict'],
    ['controlled by something else', obj(controlledBy('ReplicaSet', 'rs')), [self], 'conflict'],
    [
      'uncontrolled, with a user owner',
      obj(withOwner({ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'p-uid' }), withAnnotation('x', 'y')),
      [self],
      'adopt',
    ],
  ])('%s -> %s', (_name, o, claims, expected) => {
    expect(decideOwnership({ live: o, self, listings: claims }).kind).toBe(expected);
  });

  it('names the older claim in the conflict', () => {
    expect(decideOwnership({ live: obj(), self, listings: [self, older] })).toEqual({
      kind: 'conflict',
      message: 'ConfigMap ns1/cm is also listed by Bundle b0 (uid b0-uid), whose listing is older',
    });
  });
});
