import { describe, expect, it } from '@jest/globals';
import {
  bundleEpochKey,
  changesListing,
  crdEpochKeys,
  epochKeysOf,
  ListingEpochs,
  objectEpochKey,
} from '../../../src/controllers/listing-epochs.js';
import type { KubeObject } from '../../../src/kube/types.js';

const bundle = (generation: number, objects: string[], extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'smith.atlassian.com/v1',
  kind: 'Bundle',
  metadata: { name: 'b', namespace: 'ns', uid: 'u1', resourceVersion: '1', generation, ...extra },
  spec: { resources: objects.map((name) => ({ name, spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } } })) },
});

describe('ListingEpochs: a write decided at an epoch goes only while what it depends on has not moved', () => {
  it('a guard refuses once the Bundle or the object moved after the decision, and names it', () => {
    const epochs = new ListingEpochs();
    const decidedAt = epochs.current();
    const guard = epochs.guard(decidedAt, [bundleEpochKey('ns', 'b'), objectEpochKey('/ConfigMap/ns/a')], 'Bundle ns/b');
    expect(guard()).toBeUndefined();
    epochs.bump([objectEpochKey('/ConfigMap/ns/other')]);
    expect(guard()).toBeUndefined();
    epochs.bump([objectEpochKey('/ConfigMap/ns/a')]);
    expect(guard()).toBe('Bundle ns/b changed since the write was decided');
  });
  it('a decision older than what was trimmed counts as moved', () => {
    const epochs = new ListingEpochs();
    const decidedAt = epochs.current();
    for (let i = 0; i <= 50_001; i++) epochs.bump([`k${i}`]);
    expect(epochs.movedSince(decidedAt, ['never-bumped'])).toBe(true);
    expect(epochs.movedSince(epochs.current(), ['never-bumped'])).toBe(false);
  });
});

describe('which Bundle events move the epochs', () => {
  it.each<[string, KubeObject | undefined, boolean]>([
    ['a new Bundle', undefined, true],
    ['a status write (same generation)', bundle(1, ['a']), false],
    ['a new spec', bundle(0, ['a']), true],
    ['another incarnation', bundle(1, ['a'], { uid: 'u2' }), true],
    ['the deletion begins', bundle(1, ['a'], { deletionTimestamp: '2026-01-01T00:00:00Z' }), true],
  ])('%s: %s', (_name, old, expected) => {
    expect(changesListing(bundle(1, ['a']), old)).toBe(expected);
  });
  it('the keys are the Bundle and every object it lists or listed, by group, kind, namespace and name', () => {
    expect(epochKeysOf(bundle(2, ['a']), bundle(1, ['b'])).sort()).toEqual(
      [bundleEpochKey('ns', 'b'), objectEpochKey('/ConfigMap/ns/a'), objectEpochKey('/ConfigMap/ns/b')].sort(),
    );
  });
});

describe('crdEpochKeys: a CRD event moves the Bundles that list an object of its group (fuzz softdelete 19971)', () => {
  const listing = (name: string, apiVersion: string): KubeObject => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, resourceVersion: '1', generation: 1 },
    spec: { resources: [{ name: 'x', spec: { object: { apiVersion, kind: 'Vault', metadata: { name: 'x' } } } }] },
  });
  it('only those: a write of one decided before the CRD changed is not sent', () => {
    const bundles = [listing('vaults', 'vault.example/v1alpha1'), listing('other', 'other.example/v1'), bundle(1, ['cm'])];
    expect(crdEpochKeys(bundles, 'vault.example')).toEqual([bundleEpochKey('ns', 'vaults')]);
    const epochs = new ListingEpochs();
    const decidedAt = epochs.current();
    const guard = epochs.guard(decidedAt, [bundleEpochKey('ns', 'vaults')], 'Bundle ns/vaults');
    epochs.bump(crdEpochKeys(bundles, 'vault.example'));
    expect(guard()).toBe('Bundle ns/vaults changed since the write was decided');
  });
});
