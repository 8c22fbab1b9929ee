/**
 * Red team 23: orphanCandidates (finalize-keep.ts) reaches, off the
 * Bundle's coordinates, any uncontrolled object whose dependency record
 * names an object at them: a person's copy of a dependent (`kubectl get -o
 * yaml`) carries the record. The orphan step then takes the copy's
 * ownerReference to that object out as the operator's (the record names
 * it), although the person wrote it (field manager kubectl) and the
 * operator never applied, listed or owned the copy: the cascade the person
 * asked for is lost.
 *
 * Steps:
 *  1. Bundle dp lists ConfigMaps dp-p and dp-c, which `references:
 *     [{resource: p}]` (dp-c -> dp-p, recorded in dependencyReferences).
 *  2. A person copies dp-c to dp-copy (`kubectl get cm dp-c -o yaml`,
 *     renamed, uid/resourceVersion/managedFields and the Bundle's
 *     reference removed, the reference to dp-p kept: the copy is to go
 *     with dp-p; `kubectl apply --server-side`, field manager kubectl).
 *  3. `kubectl delete bundle dp --cascade=orphan` (operator running).
 *  4. The person deletes dp-p.
 *
 * Expected (docs/safety.md, finalizer row: "a reference another tool
 * wrote, or one the manifest names itself ..., is the user's"; the
 * operator's are "the references to Bundles, the dependency references its
 * dependencyReferences annotation records" on the Bundle's objects;
 * docs/deletion.md, Orphan: "each object keeps only the references its user
 * wrote"): dp-copy, never the Bundle's, keeps its reference to dp-p and
 * kube-controller-manager collects it with dp-p.
 *
 * What happens: orphanCandidacy (src/core/bundle/finalize-keep.ts:237)
 * makes dp-copy a candidate by its copied part-of label (without it, line
 * 238 and orphanCandidates line 219 take it by its record naming dp-p, at
 * the coordinates); orphanStep ->
 * operatorWrittenReferences (owner-references.ts:114, `if
 * (dependencies.has(ref.uid)) return true;`) strips the person's reference.
 * dp-copy survives dp-p's deletion: a wrong keep.
 *
 * Fixed: off the coordinates, only objects the operator wrote (its own
 * managedFields entry) are orphan candidates (finalize-keep.ts
 * orphanCandidates).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { personCopy } from './orphan-traces.js';

const f = referenceFixture('rt23-dc');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it("an orphan deletion leaves a person's copy of a dependent its own reference", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'dp', [
    { name: 'p', object: configMap('dp-p') },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('dp-c') },
  ]);
  const b = await waitForReady(env, ns, 'dp');
  const p = await env.client.get(t.configMap, ns, 'dp-p');
  await waitFor('dp-c to reference dp-p', async () => {
    const c = await env.client.get(t.configMap, ns, 'dp-c');
    return (
      (c.metadata.ownerReferences ?? []).some((r) => r.uid === p.metadata.uid) &&
      c.metadata.annotations?.[Annotations.dependencyReferences] !== undefined
    );
  });
  const c = await env.client.get(t.configMap, ns, 'dp-c');

  const copy = await personCopy(f, c, 'dp-copy', (r) => r.uid === p.metadata.uid);
  console.log('dp-copy:', JSON.stringify(copy.metadata.ownerReferences), JSON.stringify(copy.metadata.annotations));

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'dp', { uid: b.metadata.uid ?? '', propagationPolicy: 'Orphan' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'dp', { timeoutMs: 60_000 });
  await sleep(2_000);
  const orphaned = await env.client.get(t.configMap, ns, 'dp-copy');
  console.log('dp-copy after the orphan deletion:', JSON.stringify(orphaned.metadata.ownerReferences ?? []));
  console.log('dp events:', JSON.stringify(await eventsFor(env, ns, 'dp')));

  await env.client.delete(t.configMap, ns, 'dp-p', { uid: p.metadata.uid ?? '' });
  await waitFor('dp-p gone', async () => (await env.client.tryGet(t.configMap, ns, 'dp-p')) === undefined);
  await waitFor(
    'dp-copy collected with dp-p',
    async () => {
      const o = await env.client.tryGet(t.configMap, ns, 'dp-copy');
      return o === undefined || o.metadata.deletionTimestamp !== undefined;
    },
    { timeoutMs: 30_000 },
  ).catch(() => undefined);
  const after = await env.client.tryGet(t.configMap, ns, 'dp-copy');
  console.log('dp-copy after dp-p was deleted:', after === undefined ? 'gone' : JSON.stringify(after.metadata.ownerReferences ?? []));
  expect(after === undefined || after.metadata.deletionTimestamp !== undefined).toBe(true);
}, 300_000);
