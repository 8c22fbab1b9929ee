import type { KubeObjectManifest } from '../../../src/api/resource.js';
import { Annotations, ApplySetLabels, Labels } from '../../../src/api/names.js';
import { applySetId } from '../../../src/core/bundle/applyset.js';
import { APPLIED_HASH_ANNOTATION, buildDesired, isSubset, needsApply, type BundleIdentity } from '../../../src/core/bundle/desired.js';
import { canonicalJson, contentHash } from '../../../src/core/bundle/hash.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import {
  BUNDLE_UID,
  configMap,
  deployment,
  live,
  NAMESPACE,
  withAnnotation,
  withData,
  withField,
  withOwner,
  withSpec,
  withStatus,
  type Mod,
  type Obj,
} from './builders.js';

const B: BundleIdentity = { name: 'b', namespace: NAMESPACE, uid: BUNDLE_UID };
const bundleRef = {
  apiVersion: 'smith.atlassian.com/v1',
  kind: 'Bundle',
  name: 'b',
  uid: BUNDLE_UID,
  controller: true,
  blockOwnerDeletion: true,
};

describe('buildDesired', () => {
  it('sets namespace, the controller reference, the managed label and a hash annotation', () => {
    const { manifest, hash } = buildDesired({ bundle: B, object: configMap('cm', withData({ a: '1' })), dependencies: [] });
    expect(manifest).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: NAMESPACE,
        ownerReferences: [bundleRef],
        labels: { [Labels.managed]: 'true', [ApplySetLabels.partOf]: applySetId('b', NAMESPACE) },
        annotations: { [APPLIED_HASH_ANNOTATION]: hash },
      },
      data: { a: '1' },
    });
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('adds a blocking, non-controller reference per dependency, once each, and keeps user references', () => {
    const svc = live(configMap('svc'));
    const userRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'u', uid: 'user-uid' };
    const { manifest } = buildDesired({ bundle: B, object: configMap('cm', withOwner(userRef)), dependencies: [svc, svc] });
    expect(manifest.metadata.ownerReferences).toEqual([
      bundleRef,
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'svc', uid: 'svc-uid', blockOwnerDeletion: true },
      userRef,
    ]);
  });

  it('drops server-owned metadata, status and a stale hash annotation; does not touch its input', () => {
    const input = configMap(
      'cm',
      withStatus({ x: 1 }),
      withAnnotation(APPLIED_HASH_ANNOTATION, 'old'),
      withAnnotation('keep', 'me'),
      (o) => {
        o.metadata['resourceVersion'] = '7';
        o.metadata['uid'] = 'u';
        o.metadata['managedFields'] = [];
      },
    );
    const before = structuredClone(input);
    const { manifest, hash } = buildDesired({ bundle: B, object: input, dependencies: [] });
    expect(manifest.metadata).toEqual({
      name: 'cm',
      namespace: NAMESPACE,
      ownerReferences: [bundleRef],
      labels: { [Labels.managed]: 'true', [ApplySetLabels.partOf]: applySetId('b', NAMESPACE) },
      annotations: { keep: 'me', [APPLIED_HASH_ANNOTATION]: hash },
    });
    expect(manifest['status']).toBeUndefined();
    expect(input).toEqual(before);
  });

  // Red team 19: copied from `kubectl get -o yaml` of a released or let-go object, the mark hid the object from the finalizer's orphan trace.
  it("drops a manifest's own former-bundle label and annotation: only the operator's release and let-go write them", () => {
    const exported = configMap('cm', withAnnotation(Annotations.formerBundle, 'old'), (o) => {
      o.metadata.labels = { [Labels.formerBundle]: 'old', team: 'a' };
    });
    const { manifest } = buildDesired({ bundle: B, object: exported, dependencies: [] });
    expect(manifest.metadata.labels).toEqual({ team: 'a', [Labels.managed]: 'true', [ApplySetLabels.partOf]: applySetId('b', NAMESPACE) });
    expect(manifest.metadata.annotations?.[Annotations.formerBundle]).toBeUndefined();
  });

  it('keeps the manifest own labels and always sets the managed label (a manifest cannot opt out of the caches)', () => {
    const { manifest } = buildDesired({
      bundle: B,
      object: configMap('cm', (o) => (o.metadata.labels = { app: 'web', [Labels.managed]: 'false' })),
      dependencies: [],
    });
    expect(manifest.metadata.labels).toEqual({ app: 'web', [Labels.managed]: 'true', [ApplySetLabels.partOf]: applySetId('b', NAMESPACE) });
  });

  it('writes a keeping deletionPolicy taken from the defaults onto the object (the deletion guard reads only the object); its own policy wins', () => {
    const policyOf = (object: KubeObjectManifest, keepingPolicyFromDefaults?: 'Orphan' | 'Approve') =>
      buildDesired({ bundle: B, object, dependencies: [], keepingPolicyFromDefaults }).manifest.metadata.annotations?.[
        Annotations.deletionPolicy
      ];
    expect(policyOf(configMap('cm'), 'Orphan')).toBe('Orphan');
    expect(policyOf(configMap('cm'), 'Approve')).toBe('Approve');
    expect(policyOf(configMap('cm'))).toBeUndefined();
    expect(policyOf(configMap('cm', withAnnotation(Annotations.deletionPolicy, 'Delete')), 'Orphan')).toBe('Delete');
  });

  it.each<[string, KubeObjectManifest, KubeObjectManifest, boolean]>([
    [
      'key order does not change the hash',
      configMap('cm', withData({ a: '1', b: '2' })),
      configMap('cm', withData({ b: '2', a: '1' })),
      true,
    ],
    [
      'a stale hash annotation does not change the hash',
      configMap('cm'),
      configMap('cm', withAnnotation(APPLIED_HASH_ANNOTATION, 'x')),
      true,
    ],
    ['content changes the hash', configMap('cm', withData({ a: '1' })), configMap('cm', withData({ a: '2' })), false],
    ['type changes the hash', configMap('cm', withData({ a: 1 })), configMap('cm', withData({ a: '1' })), false],
  ])('hash: %s', (_name, x, y, same) => {
    const hx = buildDesired({ bundle: B, object: x, dependencies: [] }).hash;
    const hy = buildDesired({ bundle: B, object: y, dependencies: [] }).hash;
    expect(hx === hy).toBe(same);
  });
});

describe("buildDesired records the operator's dependency references (issue 9)", () => {
  it.each<[string, Obj[], Obj, string | undefined]>([
    [
      'one per dependency, sorted, deduplicated',
      [live(configMap('b')), live(configMap('a')), live(configMap('b'))],
      configMap('cm'),
      'a-uid,b-uid',
    ],
    ['none without dependencies', [], configMap('cm'), undefined],
    [
      "not a uid the spec itself names (it is the user's)",
      [live(configMap('a')), live(configMap('b'))],
      configMap('cm', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'a-uid' })),
      'b-uid',
    ],
    ['a stale value in the spec is replaced', [], configMap('cm', withAnnotation(Annotations.dependencyReferences, 'forged')), undefined],
  ])('%s', (_name, dependencies, object, expected) => {
    const { manifest } = buildDesired({ bundle: B, object, dependencies });
    expect(manifest.metadata.annotations?.[Annotations.dependencyReferences]).toBe(expected);
  });
});

describe('canonicalJson / contentHash', () => {
  it.each<[unknown, string]>([
    [{ b: 1, a: { d: [3, { f: 1, e: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"e":2,"f":1}]},"b":1}'],
    [{ a: undefined, b: 'x' }, '{"b":"x"}'],
    [[2, 1], '[2,1]'],
  ])('%j', (value, json) => {
    expect(canonicalJson(value)).toBe(json);
  });
  it('is sha256 of the canonical JSON', () => {
    expect(contentHash({})).toBe('sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});

describe('needsApply', () => {
  const desired = buildDesired({
    bundle: B,
    object: deployment('d', withSpec({ replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'i:1' }] } } })),
    dependencies: [live(configMap('dep'))],
  }).manifest;
  /** The live object as the server returns it after the apply: everything desired plus server fields. */
  const applied = (...mods: Mod<Obj>[]): LiveObject =>
    live(
      structuredClone(desired),
      withField('spec', {
        replicas: 2,
        revisionHistoryLimit: 10,
        template: { spec: { containers: [{ name: 'c', image: 'i:1', imagePullPolicy: 'IfNotPresent' }], dnsPolicy: 'ClusterFirst' } },
      }),
      withStatus({ replicas: 2 }),
      (o) => {
        o.metadata.generation = 1;
        o.metadata['managedFields'] = [{ manager: 'bundlesmith' }];
      },
      ...mods,
    );
  const setOwners =
    (reverse: boolean, extra = false): Mod<Obj> =>
    (o) => {
      const refs = [...(desired.metadata.ownerReferences ?? [])];
      if (reverse) refs.reverse();
      o.metadata.ownerReferences = extra ? [...refs, { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'p-uid' }] : refs;
    };

  it.each<[string, LiveObject | undefined, boolean]>([
    ['no live object', undefined, true],
    ['live equal to desired plus defaults and status (no-op)', applied(), false],
    ['ownerReferences in another order (no-op)', applied(setOwners(true)), false],
    ['an extra ownerReference from someone else (no-op)', applied(setOwners(false, true)), false],
    ['an extra annotation from someone else (no-op)', applied(withAnnotation('other', 'x')), false],
    ['hash annotation missing', applied((o) => delete o.metadata.annotations?.[APPLIED_HASH_ANNOTATION]), true],
    ['hash annotation different', applied(withAnnotation(APPLIED_HASH_ANNOTATION, 'sha256:other')), true],
    [
      'a field edited by someone else',
      applied(withField('spec', { replicas: 5, template: { spec: { containers: [{ name: 'c', image: 'i:1' }] } } })),
      true,
    ],
    ['an array element removed', applied(withField('spec', { replicas: 2, template: { spec: { containers: [] } } })), true],
    [
      'an array element added',
      applied(withField('spec', { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'i:1' }, { name: 'x' }] } } })),
      true,
    ],
    [
      'a scalar of another type',
      applied(withField('spec', { replicas: '2', template: { spec: { containers: [{ name: 'c', image: 'i:1' }] } } })),
      true,
    ],
    ['our ownerReference missing', applied((o) => (o.metadata.ownerReferences = [])), true],
    [
      'our ownerReference changed',
      applied(
        (o) => (o.metadata.ownerReferences = (desired.metadata.ownerReferences ?? []).map((r) => ({ ...r, blockOwnerDeletion: false }))),
      ),
      true,
    ],
  ])('%s -> %s', (_name, liveObject, expected) => {
    expect(needsApply(desired, liveObject)).toBe(expected);
  });
});

describe('isSubset', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['equal scalars', 1, 1, true],
    ['different scalars', 1, 2, false],
    ['null vs missing (an applied null removes the field, so absent is what was asked)', { a: null }, {}, true],
    ['extra keys in have', { a: 1 }, { a: 1, b: 2 }, true],
    ['missing key in have', { a: 1, b: 2 }, { a: 1 }, false],
    ['arrays need the same length', [1], [1, 2], false],
    ['arrays element by element', [{ a: 1 }], [{ a: 1, b: 2 }], true],
    ['array order matters outside ownerReferences', [1, 2], [2, 1], false],
    ['object vs array', { a: {} }, { a: [] }, false],
    ['undefined in want is ignored', { a: undefined }, {}, true],
  ])('%s', (_name, want, have, expected) => {
    expect(isSubset(want, have, [])).toBe(expected);
  });
});

describe('write-only fields', () => {
  it("folds a Secret's stringData into data so the manifest can match the live object", () => {
    const { manifest } = buildDesired({
      bundle: { name: 'b', namespace: 'ns', uid: 'u' },
      object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: 'eA==', b: 'eQ==' }, stringData: { b: 'z', c: 'w' } },
      dependencies: [],
    });
    expect(manifest).toMatchObject({ data: { a: 'eA==', b: 'eg==', c: 'dw==' } });
    expect(manifest).not.toHaveProperty('stringData');
  });
});

describe('isSubset and what the server drops', () => {
  it.each([
    ['an empty map', { data: {} }, {}, true],
    ['an empty list', { items: [] }, {}, true],
    ['a null', { x: null }, {}, true],
    ['a non-empty map', { data: { a: '1' } }, {}, false],
    ['an empty map present as a map', { data: {} }, { data: { a: '1' } }, true],
  ])('%s', (_case, want, have, expected) => {
    expect(isSubset(want, have, [])).toBe(expected);
  });
});

describe('declared-rules proof', () => {
  it('is written when given, and a manifest cannot bring its own', () => {
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', annotations: { [Annotations.declaredRules]: 'forged' } } };
    const bundleId = { name: 'b', namespace: 'ns1', uid: 'u' };
    expect(
      buildDesired({ bundle: bundleId, object, dependencies: [], declaredRulesProof: 'd1:proof' }).manifest.metadata.annotations?.[
        Annotations.declaredRules
      ],
    ).toBe('d1:proof');
    expect(
      buildDesired({ bundle: bundleId, object, dependencies: [] }).manifest.metadata.annotations?.[Annotations.declaredRules],
    ).toBeUndefined();
  });
});
