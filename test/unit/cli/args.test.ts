import { formatObjectRef, parseObjectRef } from '../../../src/cli/args.js';

describe('object references', () => {
  it.each([
    ['ConfigMap/settings', { kind: 'ConfigMap', name: 'settings' }],
    ['configmaps/settings', { kind: 'configmaps', name: 'settings' }],
    ['deployment.apps/web', { kind: 'deployment', group: 'apps', name: 'web' }],
    ['Widget.example.com/w-1.a', { kind: 'Widget', group: 'example.com', name: 'w-1.a' }],
    ['ConfigMap/Bad_Name', undefined],
    ['ConfigMap', undefined],
    ['/x', undefined],
  ])('parses %s', (text, want) => {
    expect(parseObjectRef(text)).toEqual(want);
  });

  it('formats so that the output parses back', () => {
    for (const [apiVersion, kind] of [
      ['v1', 'ConfigMap'],
      ['apps/v1', 'Deployment'],
      ['example.com/v1alpha1', 'Widget'],
    ] as const) {
      const text = formatObjectRef(apiVersion, kind, 'x');
      expect(parseObjectRef(text)).toMatchObject({ kind, name: 'x' });
    }
  });
});
