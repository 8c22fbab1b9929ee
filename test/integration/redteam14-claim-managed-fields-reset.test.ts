/**
 * Red team 14: a Bundle's claim whose managedFields entry is lost (the
 * object's managedFields cleared, then any write) is read as the user's
 * reference: never withdrawn, kept when another Bundle orphans the object,
 * and kube-controller-manager collects the orphaned object when the
 * claiming Bundle is deleted.
 *
 * What a user does: Bundle rt14c-w lists ConfigMap rt14c-x with
 * deletionPolicy Orphan (controller). Bundle rt14c-l lists rt14c-x too: it
 * loses (Conflict) and the operator patches in its claim (a non-controller
 * ownerReference to rt14c-l). Someone clears rt14c-x's managedFields
 * (`metadata.managedFields: [{}]`, the documented reset) and another tool
 * then labels it by server-side apply (`kubectl apply --server-side`): the
 * API server gives every field it did not apply to the manager
 * "before-first-apply" (operation Update), the claim included. rt14c-l is edited to stop listing rt14c-x; rt14c-w is deleted
 * (its Orphan object is released); later rt14c-l is deleted.
 *
 * Why rt14c-x should be kept: its deletionPolicy is Orphan ("an Orphan
 * object is never deleted by the operator", and an orphaned object keeps
 * only its user's references: docs/deletion.md). The claim was the
 * operator's: owner-references.ts says itself "a stale claim of a Bundle
 * that no longer lists the object (or is gone) would let the collector
 * delete it once that Bundle is gone, the very thing giving it up is meant
 * to prevent".
 *
 * What happens: the claim stays on rt14c-x through the edit of rt14c-l and
 * the release by rt14c-w; deleting rt14c-l makes kube-controller-manager
 * delete rt14c-x (its only owner gone). Suspected path:
 * core/bundle/owner-references.ts operatorClaimUids/hasClaimReference (the
 * claim counts only while the operator's Update entry in managedFields owns
 * it), so core/bundle/ownership.ts claimWithdrawal withdraws nothing and
 * release.ts keptReleasePatch (userReferences) keeps the claim as the
 * user's.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { collectedOrFreeOf, deleteBundleAndWait } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt14c');

it("a claim whose managedFields entry was lost is still the operator's: withdrawn, and an orphaned object is not collected with the claiming Bundle", async () => {
  const { env, ns, t } = f;
  const x = configMap('rt14c-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' });
  await applyBundle(env, ns, 'rt14c-w', [{ name: 'x', object: x }]);
  const w = await waitForReady(env, ns, 'rt14c-w');
  await applyBundle(env, ns, 'rt14c-l', [
    { name: 'x', object: x },
    { name: 'l', object: configMap('rt14c-l') },
  ]);
  const claimed = await waitFor('the claim of rt14c-l on rt14c-x', async () => {
    const l = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt14c-l');
    const o = await env.client.tryGet(t.configMap, ns, 'rt14c-x');
    return l && o && (o.metadata.ownerReferences ?? []).some((r) => r.uid === l.metadata.uid && r.controller !== true)
      ? { l, o }
      : undefined;
  });
  const l = claimed.l;
  console.log('managedFields with the claim', JSON.stringify(claimed.o.metadata.managedFields));

  // The reset, then any write by another tool.
  await env.client.patch(t.configMap, ns, 'rt14c-x', [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }], 'json', {
    fieldManager: 'slimmer',
  });
  await env.client.apply(
    t.configMap,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rt14c-x', namespace: ns, labels: { team: 'a' } } },
    { fieldManager: 'another-tool', force: true },
  );
  const after = await env.client.get(t.configMap, ns, 'rt14c-x');
  console.log('managedFields after the reset and a label', JSON.stringify(after.metadata.managedFields));
  const uid = after.metadata.uid;

  // rt14c-l stops listing rt14c-x: its claim should go.
  await applyBundle(env, ns, 'rt14c-l', [{ name: 'l', object: configMap('rt14c-l') }]);
  await waitForReady(env, ns, 'rt14c-l');
  const mid = await env.client.get(t.configMap, ns, 'rt14c-x');
  console.log('rt14c-x refs after rt14c-l dropped it', JSON.stringify(mid.metadata.ownerReferences ?? []));

  // rt14c-w is deleted: its Orphan object is released.
  await deleteBundleAndWait(env, ns, 'rt14c-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt14c-x');
  console.log('rt14c-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt14c-l', l.metadata.uid);
  // Kept, rt14c-l's reference never there (the fix), or the collector has acted on it.
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt14c-x', l.metadata.uid) };
  console.log('rt14c-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);
