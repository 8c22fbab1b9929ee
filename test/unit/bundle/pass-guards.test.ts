import { describe, expect, it } from '@jest/globals';
import { isLiveIncarnation, managedKinds, unchangedSinceRead, withSpecKinds, writesOwnerReference, type BundleReadMeta } from '../../../src/core/bundle/pass-guards.js';
import { planBundle } from '../../../src/core/bundle/plan.js';
import { Annotations } from '../../../src/api/names.js';
import { bundle, configMap, controlledByBundle, deployment, live, planInput, resource, withAnnotation, withResource, withUid } from './builders.js';

describe('writesOwnerReference', () => {
  const b = bundle('b', withResource(resource('a', configMap('a'))));
  it.each([
    ['a create (nothing live)', {}, true],
    ['a claim (ours, counting down)', { a: live(configMap('a'), controlledByBundle(), withAnnotation(Annotations.deletionDelay, '1h'), withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00Z')) }, true],
  ])('%s writes the Bundle UID: %s', (_name, liveObjects, expected) => {
    expect(writesOwnerReference(planBundle(planInput(b, liveObjects)))).toBe(expected);
  });
  it('a pass with nothing to apply and no claim does not', () => {
    expect(writesOwnerReference({ claims: [], resources: [] })).toBe(false);
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

describe('managedKinds', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap' };
  const noPrune = { prune: [], withheld: [] };
  it.each<[string, string[] | undefined, { apiVersion: string; kind: string }[], ReturnType<typeof live>[], string[]]>([
    ['spec kinds are recorded, sorted', undefined, [{ apiVersion: 'v1', kind: 'Secret' }, cm], [], ['v1/ConfigMap', 'v1/Secret']],
    ['a recorded kind stays while the Bundle controls objects of it', ['apps/v1/Deployment'], [cm], [live(deployment('d'), controlledByBundle())], ['apps/v1/Deployment', 'v1/ConfigMap']],
    ['a recorded kind with nothing left goes', ['apps/v1/Deployment'], [cm], [], ['v1/ConfigMap']],
    ['a controlled kind never recorded is not added', undefined, [cm], [live(deployment('d'), controlledByBundle(), withUid('d'))], ['v1/ConfigMap']],
  ])('%s', (_name, recorded, spec, controlled, expected) => {
    expect(managedKinds(recorded, spec, controlled, noPrune)).toEqual(expected);
  });
});

describe('withSpecKinds: the spec kinds recorded with the finalizer, ahead of any object', () => {
  it('adds the spec kinds to what is recorded, takes none away, sorted', () => {
    const b = bundle('b', withResource(resource('d', deployment('d')), resource('c', configMap('c'))));
    expect(withSpecKinds({ managedKinds: ['v1/Secret'] }, { spec: b.spec }).managedKinds).toEqual(['apps/v1/Deployment', 'v1/ConfigMap', 'v1/Secret']);
    expect(withSpecKinds<{ managedKinds?: string[] }>({}, { spec: b.spec }).managedKinds).toEqual(['apps/v1/Deployment', 'v1/ConfigMap']);
  });
});
