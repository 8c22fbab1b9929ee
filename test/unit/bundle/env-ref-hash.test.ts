/**
 * Smith's envRefHash, byte for byte: the three values Smith's own
 * integration test (TestConfigMapAndSecretToDeploymentToBundleIndex)
 * expects, and the order and optional rules around them.
 */
import { configMapData, envRefHash, envSourceRefs, secretData, type SourceData } from '../../../src/core/bundle/env-ref-hash.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const podSpec = { containers: [{ name: 'container1', envFrom: [{ configMapRef: { name: 'map1' } }, { secretRef: { name: 'secret1' } }] }] };

function lookupOf(sources: Record<string, SourceData>) {
  return (kind: 'ConfigMap' | 'Secret', name: string) => sources[`${kind}/${name}`];
}

describe("envRefHash (Smith's algorithm)", () => {
  it.each<[string, Record<string, string>, Record<string, string>, string]>([
    ['initial ConfigMap and Secret', { a: 'b' }, { x: 'b' }, '97b5461821487e047e760880764dd9b31a5b7f39e8961b98b809c6d3f5b3cf3a'],
    ['a key added to the ConfigMap', { a: 'b', b: 'a' }, { x: 'b' }, '5fb60505d125dd42160a9ef237873345020a90e8d607861ced50a641c3a800a9'],
    [
      'a key added to the Secret',
      { a: 'b', b: 'a' },
      { x: 'b', z: 'c' },
      '20ed86a5106aab7e892f498f38dc1b713405d864878e6a074377fbdcba129599',
    ],
  ])("%s: Smith's published value", (_name, cm, secret, expected) => {
    const lookup = lookupOf({
      'ConfigMap/map1': configMapData({ data: cm }),
      'Secret/secret1': secretData({ data: Object.fromEntries(Object.entries(secret).map(([k, v]) => [k, b64(v)])) }),
    });
    expect(envRefHash(podSpec, lookup)).toMatchObject({ ok: true, hash: expected });
  });

  it('reads containers, then init containers; per envFrom entry the secretRef first; keyRefs read their one key', () => {
    const spec = {
      initContainers: [{ env: [{ name: 'I', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }] }],
      containers: [
        {
          envFrom: [{ configMapRef: { name: 'cm' }, secretRef: { name: 's' } }],
          env: [
            { name: 'V', value: 'plain' },
            { name: 'P', valueFrom: { secretKeyRef: { name: 's', key: 'p', optional: true } } },
          ],
        },
      ],
    };
    expect(envSourceRefs(spec)).toEqual([
      { kind: 'Secret', name: 's', optional: false },
      { kind: 'ConfigMap', name: 'cm', optional: false },
      { kind: 'Secret', name: 's', key: 'p', optional: true },
      { kind: 'ConfigMap', name: 'cm', key: 'k', optional: false },
    ]);
  });

  it('a missing optional source adds nothing; a missing required one is an error naming it', () => {
    const optional = { containers: [{ envFrom: [{ configMapRef: { name: 'gone', optional: true } }] }] };
    const empty = envRefHash({ containers: [] }, lookupOf({}));
    expect(envRefHash(optional, lookupOf({}))).toMatchObject({ ok: true, hash: empty.ok ? empty.hash : '' });
    expect(envRefHash({ containers: [{ envFrom: [{ secretRef: { name: 'gone' } }] }] }, lookupOf({}))).toMatchObject({
      ok: false,
      message: 'Secret "gone" not found',
    });
    const keyRef = (optionalKey: boolean) => ({
      containers: [{ env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'missing', optional: optionalKey } } }] }],
    });
    const cm = lookupOf({ 'ConfigMap/cm': configMapData({ data: { other: 'v' } }) });
    expect(envRefHash(keyRef(false), cm)).toMatchObject({ ok: false, message: 'key "missing" not found in ConfigMap "cm"' });
    expect(envRefHash(keyRef(true), cm)).toMatchObject({ ok: true });
  });

  it('binaryData counts with data, decoded', () => {
    const viaText = configMapData({ data: { k: 'v' } });
    const viaBinary = configMapData({ binaryData: { k: b64('v') } });
    const spec = { containers: [{ envFrom: [{ configMapRef: { name: 'cm' } }] }] };
    expect(envRefHash(spec, lookupOf({ 'ConfigMap/cm': viaText }))).toEqual(envRefHash(spec, lookupOf({ 'ConfigMap/cm': viaBinary })));
  });
});
