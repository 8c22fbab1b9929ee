/**
 * Red team 23: the orphan trace counts "the Bundle's ApplySet member
 * wherever it is" (effectivePropagation, a13496d), told by the part-of
 * label only, on any uncontrolled object of the namespace. A person's copy
 * of one of the Bundle's objects (`kubectl get -o yaml`, renamed, uid and
 * ownerReferences taken out, `kubectl apply --server-side`: labels and annotations
 * come along) is such an object. A plain (background) `kubectl delete
 * bundle` is then taken for `--cascade=orphan`: nothing of the Bundle is
 * deleted. No restart, no race: the operator runs throughout.
 *
 * Steps:
 *  1. Bundle cp lists ConfigMap cp-a; Ready (cp-a: part-of = cp's id).
 *  2. A person copies cp-a to cp-copy: `kubectl get cm cp-a -o yaml`, name
 *     changed, uid/resourceVersion/creationTimestamp/managedFields and
 *     ownerReferences removed, `kubectl apply --server-side -f` (field
 *     manager kubectl). The copy is theirs: no Bundle lists or owns it.
 *  3. `kubectl delete bundle cp` (background, the default).
 *
 * Expected (docs/deletion.md, the deletion table: a background deletion
 * deletes every object without a delay or policy; docs/safety.md, finalizer
 * row: "background: the Bundle's objects without a delay and without
 * another owner"): cp-a deleted; cp-copy (the person's) kept.
 *
 * What happens: effectivePropagation (src/core/bundle/finalize.ts:89,
 * `if (isMemberOf(o, input.bundle.name, input.bundle.namespace)) return
 * true;`) finds cp-copy: uncontrolled, no former-bundle label, part-of
 * naming cp -> 'Orphan'. stepsFor/orphanCandidates (finalize-keep.ts
 * orphanCandidacy: controlled -> candidate) orphan cp-a (its controller
 * reference stripped, "orphaned ... its Bundle was deleted with orphan
 * propagation"), the finalizer goes, cp-a survives with no owner: a wrong
 * keep of what the user asked to delete.
 *
 * Fixed: off the Bundle's coordinates its membership is no orphan trace,
 * and a dependency record counts only on an object the operator wrote
 * (core/bundle/finalize.ts effectivePropagation).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { ApplySetLabels } from '../../src/api/names.js';
import { applySetId } from '../../src/core/bundle/applyset.js';
import { expectKept, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { personCopy } from './orphan-traces.js';

const f = referenceFixture('rt23-cp');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it("a background deletion deletes the Bundle's objects although a person copied one of them", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'cp', [{ name: 'a', object: configMap('cp-a') }]);
  const b = await waitForReady(env, ns, 'cp');
  await waitFor("cp-a controlled by cp and cp's member", async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'cp-a');
    return (
      (o?.metadata.ownerReferences ?? []).some((r) => r.uid === b.metadata.uid && r.controller === true) &&
      o?.metadata.labels?.[ApplySetLabels.partOf] === applySetId('cp', ns)
    );
  });
  const a = await env.client.get(t.configMap, ns, 'cp-a');

  // `kubectl get cm cp-a -o yaml | <rename, drop uid, resourceVersion, creationTimestamp, managedFields, ownerReferences> | kubectl apply --server-side -f -`
  const copy = await personCopy(f, a, 'cp-copy');
  console.log('cp-copy:', JSON.stringify(copy.metadata.labels), JSON.stringify(copy.metadata.annotations));

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'cp', { uid: b.metadata.uid ?? '', propagationPolicy: 'Background' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'cp', { timeoutMs: 60_000 });
  await sleep(5_000);
  const after = await env.client.tryGet(t.configMap, ns, 'cp-a');
  console.log('cp-a after the background deletion:', after === undefined ? 'gone' : JSON.stringify(after.metadata));
  console.log('cp events:', JSON.stringify(await eventsFor(env, ns, 'cp')));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cp-copy'), copy.metadata.uid ?? '');
  expect(after === undefined || after.metadata.deletionTimestamp !== undefined).toBe(true);
}, 300_000);
