import { describe, expect, it } from '@jest/globals';
import { actingIdentity } from '../../../src/core/bundle/identity.js';

const bundleIn = (namespace: string, serviceAccountName?: string) => ({
  metadata: { namespace },
  spec: serviceAccountName === undefined ? {} : { serviceAccountName },
});

describe('actingIdentity: whose rights a Bundle uses', () => {
  it.each([
    ['neither: the operator itself (single-tenant)', bundleIn('team-a'), undefined, { kind: 'operator' }],
    [
      'spec only',
      bundleIn('team-a', 'deployer'),
      undefined,
      { kind: 'service-account', namespace: 'team-a', name: 'deployer', user: 'system:serviceaccount:team-a:deployer', source: 'spec' },
    ],
    [
      'lockdown default only',
      bundleIn('team-a'),
      'bundles',
      { kind: 'service-account', namespace: 'team-a', name: 'bundles', user: 'system:serviceaccount:team-a:bundles', source: 'default' },
    ],
    [
      'spec wins over the default',
      bundleIn('team-b', 'deployer'),
      'bundles',
      { kind: 'service-account', namespace: 'team-b', name: 'deployer', user: 'system:serviceaccount:team-b:deployer', source: 'spec' },
    ],
    ['an empty default is no default', bundleIn('team-a'), '', { kind: 'operator' }],
  ])('%s', (_name, bundle, defaultAccount, expected) => {
    expect(actingIdentity(bundle, defaultAccount)).toEqual(expected);
  });
});
