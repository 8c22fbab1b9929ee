/**
 * Red team 14: a Bundle's claim is read as the user's reference once
 * eleven other tools have updated the object: the API server keeps at most
 * ten Update entries in managedFields and merges the oldest into one
 * manager "ancient-changes" (apiserver fieldmanager, capmanagers.go,
 * DefaultMaxUpdateManagers), the operator's claim entry with them. The claim
 * is then never withdrawn, stays when another Bundle orphans the object, and
 * kube-controller-manager collects the orphaned object when the claiming
 * Bundle is deleted. Same chain as `redteam14-claim-managed-fields-reset`,
 * with no managedFields edited: only routine labelling by many tools.
 *
 * What a user does: Bundle rt14a-w lists ConfigMap rt14a-x with
 * deletionPolicy Orphan (controller). Bundle rt14a-l lists rt14a-x too: it
 * loses (Conflict) and the operator patches in its claim. Eleven tools
 * (`kubectl label --field-manager=...`, controllers) each set a label.
 * rt14a-l is edited to stop listing rt14a-x; rt14a-w is deleted (its Orphan
 * object is released); later rt14a-l is deleted.
 *
 * Why rt14a-x should be kept: its deletionPolicy is Orphan; an orphaned
 * object keeps only its user's references, and the claim was the
 * operator's (owner-references.ts: a stale claim "would let the collector
 * delete it once that Bundle is gone").
 *
 * What happens: the claim stays through the edit and the release; deleting
 * rt14a-l makes kube-controller-manager delete rt14a-x. Suspected path:
 * core/bundle/owner-references.ts operatorClaimUids (a claim only while an
 * entry of manager "bundlesmith", operation Update, owns it), so
 * ownership.ts claimWithdrawal withdraws nothing and release.ts
 * keptReleasePatch (userReferences) keeps the claim as the user's.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { collectedOrFreeOf, deleteBundleAndWait } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt14a');

it("a claim merged into ancient-changes by eleven updaters is still the operator's: withdrawn, and an orphaned object is not collected with the claiming Bundle", async () => {
  const { env, ns, t } = f;
  const x = configMap('rt14a-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' });
  await applyBundle(env, ns, 'rt14a-w', [{ name: 'x', object: x }]);
  const w = await waitForReady(env, ns, 'rt14a-w');
  await applyBundle(env, ns, 'rt14a-l', [
    { name: 'x', object: x },
    { name: 'l', object: configMap('rt14a-l') },
  ]);
  const claimed = await waitFor('the claim of rt14a-l on rt14a-x', async () => {
    const l = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt14a-l');
    const o = await env.client.tryGet(t.configMap, ns, 'rt14a-x');
    return l && o && (o.metadata.ownerReferences ?? []).some((r) => r.uid === l.metadata.uid && r.controller !== true)
      ? { l, o }
      : undefined;
  });
  const l = claimed.l;
  console.log('managedFields with the claim', JSON.stringify(claimed.o.metadata.managedFields));

  // Eleven tools label it (each an update under its own field manager).
  for (let i = 0; i < 11; i++)
    await env.client.patch(t.configMap, ns, 'rt14a-x', { metadata: { labels: { [`tool-${i}`]: 'x' } } }, 'merge', {
      fieldManager: `tool-${i}`,
    });
  const after = await env.client.get(t.configMap, ns, 'rt14a-x');
  console.log('managedFields after eleven tools', JSON.stringify(after.metadata.managedFields));
  const uid = after.metadata.uid;

  // rt14a-l stops listing rt14a-x: its claim should go.
  await applyBundle(env, ns, 'rt14a-l', [{ name: 'l', object: configMap('rt14a-l') }]);
  await waitForReady(env, ns, 'rt14a-l');
  const mid = await env.client.get(t.configMap, ns, 'rt14a-x');
  console.log('rt14a-x refs after rt14a-l dropped it', JSON.stringify(mid.metadata.ownerReferences ?? []));

  // rt14a-w is deleted: its Orphan object is released.
  await deleteBundleAndWait(env, ns, 'rt14a-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt14a-x');
  console.log('rt14a-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt14a-l', l.metadata.uid);
  // Kept, rt14a-l's reference never there (the fix), or the collector has acted on it.
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt14a-x', l.metadata.uid) };
  console.log('rt14a-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);
