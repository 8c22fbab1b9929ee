/**
 * Red team 6: an ownerReference another tool (or a person) put on a listed
 * object, pointing at one of its Bundle siblings with blockOwnerDeletion,
 * is read as the operator's dependency reference (58b045a: "whatever the
 * dependencyReferences annotation says"), so a background deletion of the
 * Bundle deletes the object outright although its other owner is kept
 * alive: kube-controller-manager's collector keeps it.
 *
 * Steps: a Bundle lists ConfigMaps rt6s-owner (deletionPolicy Orphan: kept
 * when the Bundle goes) and rt6s-child (no rules, no `references`: the
 * operator writes no dependency reference and no dependencyReferences
 * annotation on it). Another tool adds to rt6s-child an ownerReference to
 * rt6s-owner, blockOwnerDeletion true (the usual "delete this with that"
 * link: kubectl patch, a controller's SetOwnerReference-style write); the
 * operator's apply leaves it (it is not its entry). Control: rt6s-child2
 * gets the same reference without blockOwnerDeletion. The Bundle is deleted
 * (background, the default).
 *
 * Expected (docs/safety.md, Bundle finalizer, background: "an object that
 * also carries a non-Bundle ownerReference loses only the Bundle's
 * references, and the collector deletes it once no owner is left, as
 * kube-controller-manager's does"): rt6s-owner is released and kept, so
 * rt6s-child keeps a live owner and kube-controller-manager would keep it.
 * rt6s-child2 is kept; rt6s-child is deleted by the finalizer.
 *
 * Cause: src/core/bundle/ownership.ts:153 (operatorWrittenReferences)
 * counts any non-controller reference with blockOwnerDeletion to a sibling
 * (ctx.siblingUids, finalize.ts:185 siblingUids(controlled)) as the
 * operator's, so finalize.ts:202-203 (backgroundSteps, userReferences)
 * finds no other owner and plans a plain delete (finalize.ts:208). Before
 * 58b045a the same held for any object without a dependencyReferences
 * annotation (every object without `references`), through the "legacy"
 * rule; 58b045a made it unconditional.
 *
 * Suggested fix: only the operator's own record can say a reference is
 * its: take a sibling reference for the operator's only when the object's
 * managedFields show the operator's field manager owns that
 * ownerReferences entry (k:{"uid":...}), or when the dependencyReferences
 * annotation (or a sealed copy of it, bound like declared-rules) names it;
 * objects applied before the annotation existed can be recognised by the
 * manager too. When unsure, read it as the user's: the worst case is then a
 * kept object (the collector deletes it once that owner goes), never a
 * wrongful delete.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt6sib');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('background deletion: an object another tool made a dependent of a kept sibling is not deleted by the finalizer', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'sib', [
    { name: 'owner', object: configMap('rt6s-owner', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'child', object: configMap('rt6s-child') },
    { name: 'child2', object: configMap('rt6s-child2') },
  ]);
  await waitForReady(env, ns, 'sib');
  const owner = await env.client.get(t.configMap, ns, 'rt6s-owner');
  const link = (block: boolean) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'rt6s-owner',
    uid: owner.metadata.uid,
    ...(block ? { blockOwnerDeletion: true } : {}),
  });
  for (const [name, block] of [
    ['rt6s-child', true],
    ['rt6s-child2', false],
  ] as const) {
    const o = await env.client.get(t.configMap, ns, name);
    await env.client.patch(
      t.configMap,
      ns,
      name,
      [
        { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
        { op: 'add', path: '/metadata/ownerReferences/-', value: link(block) },
      ],
      'json',
      { fieldManager: 'another-tool' },
    );
  }
  await sleep(3_000);
  const child = await env.client.get(t.configMap, ns, 'rt6s-child');
  const child2 = await env.client.get(t.configMap, ns, 'rt6s-child2');
  expect(child.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid)).toBe(true);
  expect(child2.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid)).toBe(true);
  expect(child.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();

  const bundle = await getBundle(env, ns, 'sib');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'sib', { uid: bundle?.metadata.uid ?? '' });
  await waitFor('sib to be gone', async () => (await getBundle(env, ns, 'sib')) === undefined, { timeoutMs: 60_000 });
  await sleep(10_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt6s-owner'), owner.metadata.uid);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt6s-child2'), child2.metadata.uid);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt6s-child'), child.metadata.uid);
}, 240_000);
