import { describe, expect, it } from '@jest/globals';
import { isLiveIncarnation, unchangedSinceRead, writesOwnerReference, type BundleReadMeta } from '../../../src/core/bundle/pass-guards.js';
import { planBundle } from '../../../src/core/bundle/plan.js';
import { Annotations } from '../../../src/api/names.js';
import { bundle, configMap, controlledByBundle, live, planInput, resource, withAnnotation, withResource } from './builders.js';

describe('writesOwnerReference', () => {
  const b = bundle('b', withResource(resource('a', configMap('a'))));
  it.each([
    ['a create (nothing live)', {}, true],
    [
      'a claim (ours, counting down)',
      {
        a: live(
          configMap('a'),
          controlledByBundle(),
          withAnnotation(Annotations.deletionDelay, '1h'),
          withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00Z'),
        ),
      },
      true,
    ],
  ])('%s writes the Bundle UID: %s', (_name, liveObjects, expected) => {
    expect(writesOwnerReference(planBundle(planInput(b, liveObjects)))).toBe(expected);
  });
  it('a pass with nothing to apply and no claim does not', () => {
    expect(writesOwnerReference({ takeHolds: [], resources: [] })).toBe(false);
  });
});

describe('isLiveIncarnation / unchangedSinceRead', () => {
  const read: BundleReadMeta = { uid: 'u1', generation: 3 };
  it.each<[string, { metadata: BundleReadMeta } | undefined, boolean, boolean]>([
    ['the same Bundle', { metadata: { uid: 'u1', generation: 3 } }, true, true],
    ['gone', undefined, false, false],
    ['another incarnation', { metadata: { uid: 'u2', generation: 3 } }, false, false],
    ['being deleted', { metadata: { uid: 'u1', generation: 3, deletionTimestamp: '2026-01-01T00:00:00Z' } }, false, false],
    ['a newer spec', { metadata: { uid: 'u1', generation: 4 } }, true, false],
  ])('%s: live incarnation %s, unchanged %s', (_name, fresh, live_, unchanged) => {
    expect(isLiveIncarnation(fresh, read.uid)).toBe(live_);
    expect(unchangedSinceRead(fresh, read)).toBe(unchanged);
  });
});
