import { describe, expect, it } from '@jest/globals';
import {
  dropCandidates,
  inventoryKinds,
  managedKinds,
  readInventoryEntry,
  recordKinds,
  referencesBundle,
  unrecordedKinds,
  withSpecKinds,
  type InventoryInput,
} from '../../../src/core/bundle/kind-inventory.js';
import { planBundle } from '../../../src/core/bundle/plan.js';
import { bundle, configMap, controlledByBundle, deployment, live, planInput, resource, withResource, withUid } from './builders.js';

describe('readInventoryEntry: by group and kind, whatever version an earlier release wrote', () => {
  it.each([
    ['ConfigMap', { group: '', kind: 'ConfigMap' }],
    ['Deployment.apps', { group: 'apps', kind: 'Deployment' }],
    ['Widget.example.com', { group: 'example.com', kind: 'Widget' }],
    ['v1/ConfigMap', { group: '', kind: 'ConfigMap' }],
    ['apps/v1/Deployment', { group: 'apps', kind: 'Deployment' }],
    ['example.com/v1alpha1/Widget', { group: 'example.com', kind: 'Widget' }],
  ])('%s', (entry, expected) => {
    expect(readInventoryEntry(entry)).toEqual(expected);
  });
  it.each(['', '.apps', 'v1/', '/ConfigMap'])('%j is not an entry', (entry) => {
    expect(readInventoryEntry(entry)).toBeUndefined();
  });
  it('two versions of one kind are one entry', () => {
    expect(inventoryKinds(['example.com/v1alpha1/Widget', 'Widget.example.com', 'example.com/v1/Widget'])).toEqual([
      { group: 'example.com', kind: 'Widget' },
    ]);
  });
});

describe('record before write', () => {
  it('a kind recorded at another version is recorded (no write-ahead needed)', () => {
    const plan = planBundle(planInput(bundle('b', withResource(resource('a', configMap('a')))), {}));
    expect(unrecordedKinds(plan, ['v1/ConfigMap'])).toEqual([]);
    expect(unrecordedKinds(plan, [])).toEqual(['ConfigMap']);
  });
  it('recording rewrites earlier spellings and takes nothing away', () => {
    expect(recordKinds(['apps/v1/Deployment', 'v1/Secret'], ['ConfigMap'])).toEqual(['ConfigMap', 'Deployment.apps', 'Secret']);
  });
  it('withSpecKinds adds the spec kinds, takes none away, sorted', () => {
    const b = bundle('b', withResource(resource('d', deployment('d')), resource('c', configMap('c'))));
    expect(withSpecKinds({ managedKinds: ['v1/Secret'] }, { spec: b.spec }).managedKinds).toEqual([
      'ConfigMap',
      'Deployment.apps',
      'Secret',
    ]);
    expect(withSpecKinds<{ managedKinds?: string[] }>({}, { spec: b.spec }).managedKinds).toEqual(['ConfigMap', 'Deployment.apps']);
  });
});

describe('managedKinds: a kind stays until a fresh unselected list proves it empty', () => {
  const cm = { apiVersion: 'v1', kind: 'ConfigMap' };
  const noPrune = { prune: [], withheld: [] };
  const input = (recorded: string[] | undefined, controlled: ReturnType<typeof live>[] = []): InventoryInput => ({
    recorded,
    specObjects: [cm],
    controlled,
    plan: noPrune,
  });
  it('spec kinds are recorded, sorted', () => {
    expect(managedKinds({ ...input(undefined), specObjects: [{ apiVersion: 'v1', kind: 'Secret' }, cm] }, new Set())).toEqual([
      'ConfigMap',
      'Secret',
    ]);
  });
  it('a recorded kind the caches still show is kept, and is no drop candidate', () => {
    const i = input(['apps/v1/Deployment'], [live(deployment('d'), controlledByBundle())]);
    expect(dropCandidates(i)).toEqual([]);
    expect(managedKinds(i, new Set(['Deployment.apps']))).toEqual(['ConfigMap', 'Deployment.apps']);
  });
  it('a recorded kind the caches no longer show is kept while not confirmed empty (the managed label may have been taken off)', () => {
    const i = input(['apps/v1/Deployment']);
    expect(dropCandidates(i)).toEqual([{ group: 'apps', kind: 'Deployment' }]);
    expect(managedKinds(i, new Set())).toEqual(['ConfigMap', 'Deployment.apps']);
  });
  it('a recorded kind confirmed empty goes', () => {
    expect(managedKinds(input(['apps/v1/Deployment']), new Set(['Deployment.apps']))).toEqual(['ConfigMap']);
  });
  it('a controlled kind not recorded (taken out by another status writer: red-team round four) is recorded again', () => {
    expect(managedKinds(input(undefined, [live(deployment('d'), controlledByBundle(), withUid('d'))]), new Set())).toEqual([
      'ConfigMap',
      'Deployment.apps',
    ]);
  });
});

describe('referencesBundle: owner references by uid, whatever the labels', () => {
  it.each([
    ['controller reference', [{ uid: 'u1' }], true],
    ['another owner', [{ uid: 'u2' }], false],
    ['no owner', undefined, false],
  ])('%s', (_name, refs, expected) => {
    expect(referencesBundle({ metadata: { ownerReferences: refs } }, 'u1')).toBe(expected);
  });
});
