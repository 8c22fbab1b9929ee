/**
 * Red team 15: a manifest that carries the smith.atlassian.com/claimReferences
 * annotation itself (as an object exported with `kubectl get -o yaml` does)
 * makes the controlling Bundle's apply overwrite the operator's record of
 * another Bundle's claim. With the claim's managedFields entry gone (red team
 * 14's reset), the claim reads as the user's: never withdrawn, kept on an
 * Orphan release, and kube-controller-manager collects the Orphan object
 * with the claiming Bundle.
 *
 * What a user does: Bundle rt15m-w lists ConfigMap rt15m-x, deletionPolicy
 * Orphan, and its manifest carries a claimReferences annotation copied from
 * another cluster (any value). Bundle rt15m-l lists rt15m-x too: it loses
 * (Conflict) and the operator writes its claim and records it in the
 * annotation. rt15m-w's next pass sees the annotation differ from its
 * manifest and server-side applies it back (force): the record of rt15m-l's
 * claim is gone. Someone clears rt15m-x's managedFields and another tool
 * labels it by server-side apply (red team 14's reset). rt15m-l stops listing
 * rt15m-x, rt15m-w is deleted (its Orphan object released), then rt15m-l is
 * deleted.
 *
 * Why rt15m-x should be kept: deletionPolicy Orphan; the claim was the
 * operator's, and the claimReferences annotation was added (commit "Claims
 * recorded on the object") precisely so that a managedFields reset no longer
 * turns a claim into the user's.
 *
 * What happens: the claim stays through the edit of rt15m-l and the release;
 * deleting rt15m-l makes kube-controller-manager delete rt15m-x. Suspected
 * path: core/bundle/desired.ts buildDesired strips dependencyReferences and
 * declaredRules from a manifest but not claimReferences (nor does
 * validate.ts refuse it), so the apply owns and rewrites the record;
 * owner-references.ts operatorClaimUids then knows the claim only by
 * managedFields, ownership.ts claimWithdrawal withdraws nothing, and
 * release.ts keptReleasePatch keeps the claim as the user's.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { collectedOrFreeOf, deleteBundleAndWait } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt15m');

const FOREIGN = '6f1d2c3b-0000-4000-8000-00000000beef';

it("a manifest's own claimReferences annotation does not erase the record of another Bundle's claim: an orphaned object is not collected with the claiming Bundle", async () => {
  const { env, ns, t } = f;
  const x = configMap('rt15m-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan', [Annotations.claimReferences]: FOREIGN });
  await applyBundle(env, ns, 'rt15m-w', [{ name: 'x', object: x }]);
  const w = await waitForReady(env, ns, 'rt15m-w');
  await applyBundle(env, ns, 'rt15m-l', [
    { name: 'x', object: configMap('rt15m-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'l', object: configMap('rt15m-l') },
  ]);
  const claimed = await waitFor('the claim of rt15m-l on rt15m-x', async () => {
    const l = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt15m-l');
    const o = await env.client.tryGet(t.configMap, ns, 'rt15m-x');
    return l && o && (o.metadata.ownerReferences ?? []).some((r) => r.uid === l.metadata.uid && r.controller !== true)
      ? { l, o }
      : undefined;
  });
  const l = claimed.l;
  // Before the fix rt15m-w's apply wrote its manifest's value back over the record; now the manifest's value is dropped
  // from what is applied, and the record of rt15m-l's claim stands.
  const rewritten = await waitFor("the record of rt15m-l's claim", async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'rt15m-x');
    const recorded = (o?.metadata.annotations?.[Annotations.claimReferences] ?? '').split(',');
    return o && recorded.includes(l.metadata.uid ?? '') && !recorded.includes(FOREIGN) ? o : undefined;
  });
  console.log('rt15m-x annotations after the re-apply', JSON.stringify(rewritten.metadata.annotations));

  // Red team 14's reset, then any write by another tool.
  await env.client.patch(t.configMap, ns, 'rt15m-x', [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }], 'json', {
    fieldManager: 'slimmer',
  });
  await env.client.apply(
    t.configMap,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rt15m-x', namespace: ns, labels: { team: 'a' } } },
    { fieldManager: 'another-tool', force: true },
  );
  const after = await env.client.get(t.configMap, ns, 'rt15m-x');
  const uid = after.metadata.uid;

  // rt15m-l stops listing rt15m-x: its claim should go.
  await applyBundle(env, ns, 'rt15m-l', [{ name: 'l', object: configMap('rt15m-l') }]);
  await waitForReady(env, ns, 'rt15m-l');
  const mid = await env.client.get(t.configMap, ns, 'rt15m-x');
  console.log('rt15m-x refs after rt15m-l dropped it', JSON.stringify(mid.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt15m-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt15m-x');
  console.log('rt15m-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt15m-l', l.metadata.uid);
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt15m-x', l.metadata.uid) };
  console.log('rt15m-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);
