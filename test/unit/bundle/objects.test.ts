import { groupOf, kindKey, parseKindKey, versionOf } from '../../../src/core/bundle/objects.js';

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
