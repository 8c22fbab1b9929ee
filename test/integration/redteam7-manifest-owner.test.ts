/**
 * Red team 7: an ownerReference the Bundle's manifest names itself (to a
 * sibling, by a `!{...}` reference to its uid) is the user's by the
 * operator's own bookkeeping (src/core/bundle/desired.ts:88-93: "a
 * reference the spec itself names is the user's, even when it also names a
 * dependency"; the dependencyReferences annotation leaves it out), but
 * a59d612's managedFields rule reads it as the operator's dependency
 * reference: the operator's field manager applied it (it is in the applied
 * manifest). A background deletion of the Bundle then finds no owner of the
 * user's on the object and deletes it outright, although the owner it names
 * is kept (deletionPolicy Orphan): kube-controller-manager's collector
 * keeps it.
 *
 * Steps: kube-controller-manager runs. A Bundle lists ConfigMap rt7m-owner
 * (deletionPolicy Orphan) and ConfigMap rt7m-child, whose manifest says
 * "delete me with rt7m-owner": `metadata.ownerReferences: [{apiVersion: v1,
 * kind: ConfigMap, name: rt7m-owner, uid: "!{owner-uid}",
 * blockOwnerDeletion: true}]`, with `references: [{name: owner-uid,
 * resource: owner, path: metadata.uid}]`. The operator applies it: one
 * reference to rt7m-owner, no dependencyReferences annotation (the spec
 * names it). Control: rt7m-child2, the same without blockOwnerDeletion. The
 * Bundle is deleted (background, the default).
 *
 * Expected (docs/safety.md, Bundle finalizer, background: "an object that
 * also carries a non-Bundle ownerReference loses only the Bundle's
 * references, and the collector deletes it once no owner is left, as
 * kube-controller-manager's does"; "a reference another tool wrote is the
 * user's"): rt7m-owner is released and kept, so both children keep a live
 * owner and are kept. Actual: rt7m-child2 kept, rt7m-child deleted by the
 * finalizer.
 *
 * Cause: src/core/bundle/ownership.ts:157 (operatorWrittenReferences) takes
 * a blocking reference to a sibling for the operator's when the
 * 'bundlesmith' manager owns its entry in managedFields
 * (referencesAppliedBy, :166-186); a manifest's own reference is applied by
 * that manager too, so the field manager cannot tell them apart.
 * src/core/bundle/finalize.ts:205-210 (backgroundSteps: userReferences empty) then plans a
 * plain delete.
 *
 * Suggested fix: a reference whose uid the object's manifest names (the
 * resolved spec object's ownerReferences, which the finalizer has: it reads
 * the manifest of the Bundle being deleted) is the user's whatever the
 * field manager says; equivalently, trust managedFields only for uids the
 * dependencyReferences annotation (as applied) does not deliberately leave
 * out: record the spec-named uids in an annotation of their own.
 *
 * Fixed: a reference the manifest names itself is the user's, by uid or by
 * kind and name (ownership.ts namedByManifest, from the finalizer's spec).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt7mo');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('background deletion: an object whose manifest names a kept sibling as its owner is not deleted by the finalizer', async () => {
  const { env, ns, t } = f;
  const child = (name: string, block: boolean) => {
    const o = configMap(name);
    (o.metadata as Record<string, unknown>).ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'rt7m-owner', uid: '!{owner-uid}', ...(block ? { blockOwnerDeletion: true } : {}) },
    ];
    return o;
  };
  const ref = [{ name: 'owner-uid', resource: 'owner', path: 'metadata.uid' }];
  await applyBundle(env, ns, 'mo', [
    { name: 'owner', object: configMap('rt7m-owner', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'child', references: ref, object: child('rt7m-child', true) },
    { name: 'child2', references: ref, object: child('rt7m-child2', false) },
  ]);
  await waitForReady(env, ns, 'mo');
  const owner = await env.client.get(t.configMap, ns, 'rt7m-owner');
  const c1 = await env.client.get(t.configMap, ns, 'rt7m-child');
  const c2 = await env.client.get(t.configMap, ns, 'rt7m-child2');
  for (const c of [c1, c2]) {
    expect(c.metadata.ownerReferences?.filter((r) => r.uid === owner.metadata.uid)).toHaveLength(1);
    // The spec names it: the operator's bookkeeping says it is the user's.
    expect(c.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
  }

  const bundle = await getBundle(env, ns, 'mo');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'mo', { uid: bundle?.metadata.uid ?? '' });
  await waitFor('mo to be gone', async () => (await getBundle(env, ns, 'mo')) === undefined, { timeoutMs: 60_000 });
  await sleep(10_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt7m-owner'), owner.metadata.uid);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt7m-child2'), c2.metadata.uid);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt7m-child'), c1.metadata.uid);
}, 240_000);
