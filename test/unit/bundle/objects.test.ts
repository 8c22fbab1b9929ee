import {
  versionedObjectKey,
  groupOf,
  kindKey,
  objectKey,
  parseVersionedObjectKey,
  parseKindKey,
  versionOf,
} from '../../../src/core/bundle/objects.js';

describe('apiVersion and kindKey, the one reading of each', () => {
  it.each([
    ['v1', 'ConfigMap', '', 'v1'],
    ['apps/v1', 'Deployment', 'apps', 'v1'],
    ['example.com/v1alpha1', 'Widget', 'example.com', 'v1alpha1'],
  ])('%s %s', (apiVersion, kind, group, version) => {
    expect({ group: groupOf(apiVersion), version: versionOf(apiVersion) }).toEqual({ group, version });
    expect(parseKindKey(kindKey(apiVersion, kind))).toEqual({ apiVersion, kind });
  });

  it.each(['ConfigMap', '/ConfigMap', ''])('%j is no kindKey', (key) => {
    expect(parseKindKey(key)).toBeUndefined();
  });
});

describe('objectKey: one object served under two groups has one key', () => {
  it('an events.k8s.io Event is keyed as the core Event it is', () => {
    const meta = { name: 'e', namespace: 'ns1' };
    expect(objectKey({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: meta })).toBe(
      objectKey({ apiVersion: 'v1', kind: 'Event', metadata: meta }),
    );
    expect(objectKey({ apiVersion: 'example.com/v1', kind: 'Event', metadata: meta })).not.toBe(
      objectKey({ apiVersion: 'v1', kind: 'Event', metadata: meta }),
    );
  });
});

describe('the three keys', () => {
  it('versionedObjectKey is version-sensitive and reads back; objectKey is not', () => {
    const at = versionedObjectKey('example.com/v1', 'Widget', 'ns', 'w');
    expect(parseVersionedObjectKey(at)).toEqual({ apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'ns', name: 'w' });
    expect(versionedObjectKey('example.com/v1alpha1', 'Widget', 'ns', 'w')).not.toBe(at);
    expect(parseVersionedObjectKey('nonsense')).toBeUndefined();
    const v1 = objectKey({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } });
    expect(objectKey({ apiVersion: 'example.com/v1alpha1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } })).toBe(v1);
    expect(parseVersionedObjectKey(versionedObjectKey('v1', 'ConfigMap', undefined, 'c'))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: '',
      name: 'c',
    });
  });
});
