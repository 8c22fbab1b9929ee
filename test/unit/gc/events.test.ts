/** The collector's event texts, in one place. */
import { describe, expect, it } from '@jest/globals';
import { foregroundCycleBrokenEvent, ownerRefInvalidNamespaceEvent } from '../../../src/core/gc/events.js';

describe('gc events', () => {
  it.each([
    [
      'foreground cycle broken',
      foregroundCycleBrokenEvent({
        finalizer: 'foregroundDeletion',
        waitedMs: 61_400,
        timeoutMs: 60_000,
        transitiveDependents: 2,
        blockers: ['ConfigMap a', 'uid-b'],
      }),
      {
        type: 'Warning',
        reason: 'ForegroundCycleBroken',
        action: 'RemoveFinalizer',
        message:
          'Removed finalizer foregroundDeletion after waiting 61 s (timeout 60 s for 2 dependents): its remaining blocking dependents (ConfigMap a, uid-b) all wait in foreground deletion on a cycle that includes it',
      },
    ],
    [
      'owner reference to another namespace',
      ownerRefInvalidNamespaceEvent({
        dependent: { uid: 'd', apiVersion: 'v1', kind: 'ConfigMap', name: 'dep', namespace: 'ns1' },
        ownerRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'o' },
      }),
      {
        type: 'Warning',
        reason: 'OwnerRefInvalidNamespace',
        action: 'VerifyOwnerReference',
        message: 'ownerRef [v1/ConfigMap, namespace: ns1, name: owner, uid: o] does not exist in namespace "ns1"',
      },
    ],
  ])('%s', (_name, got, expected) => {
    expect(got).toEqual(expected);
  });
});
