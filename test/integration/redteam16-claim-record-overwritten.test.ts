/**
 * Red team 16 (candidate b): another tool overwrites the claim record
 * annotation smith.atlassian.com/claimReferences with an empty value, as
 * `kubectl annotate --overwrite smith.atlassian.com/claimReferences=` does.
 *
 * What a user does: Bundle w lists ConfigMap x, deletionPolicy Orphan. Bundle
 * l lists x too: it loses (Conflict) and the operator writes its claim
 * (non-controller reference to l) and records it in the annotation. Someone
 * overwrites the annotation to "".
 *  - rt16o (holds): w is deleted, then l. l still lists x, so it takes x over
 *    on w's release and orphans it on its own deletion.
 *  - rt16p (was a wrongful delete): l stops listing x (its claim should be
 *    withdrawn), then w is deleted (Orphan release), then l is deleted.
 *
 * Why x should be kept: deletionPolicy Orphan on both Bundles; the reference
 * to l was the operator's claim, never the user's.
 *
 * What happened (rt16p): the claim stayed after l dropped x; w's Orphan
 * release kept it (refs became [l, controller:false]); deleting l made
 * kube-controller-manager delete x. The annotation was the only record of the
 * claim, and once another tool blanked it nothing told the claim from a
 * user's reference to l.
 *
 * Fix: the claiming Bundle records its claims in its own status
 * (status.claims, written ahead of each claim; core/bundle/claim-record.ts);
 * either record makes the reference the operator's claim.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { collectedOrFreeOf, deleteBundleAndWait, waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt16o');

it('a claim record overwritten to an empty value by another tool: an orphaned object is not collected with the claiming Bundle', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt16o-w', [
    { name: 'x', object: configMap('rt16o-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
  ]);
  const w = await waitForReady(env, ns, 'rt16o-w');
  await applyBundle(env, ns, 'rt16o-l', [
    { name: 'x', object: configMap('rt16o-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'l', object: configMap('rt16o-l') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt16o-l', 'rt16o-x');
  const l = claimed.bundle;
  const uid = claimed.object.metadata.uid;

  // `kubectl annotate --overwrite smith.atlassian.com/claimReferences=` (a merge patch by kubectl's manager).
  await env.client.patch(t.configMap, ns, 'rt16o-x', { metadata: { annotations: { [Annotations.claimReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  // Let both Bundles pass over the object again.
  await new Promise((r) => setTimeout(r, 3000));
  const mid = await env.client.get(t.configMap, ns, 'rt16o-x');
  console.log('rt16o-x after the overwrite', JSON.stringify(mid.metadata.annotations), JSON.stringify(mid.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt16o-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt16o-x');
  console.log('rt16o-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt16o-l', l.metadata.uid);
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt16o-x', l.metadata.uid) };
  console.log('rt16o-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);

it('a claim record overwritten to an empty value, then the claiming Bundle stops listing the object: an orphaned object is not collected with it', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt16p-w', [
    { name: 'x', object: configMap('rt16p-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
  ]);
  const w = await waitForReady(env, ns, 'rt16p-w');
  await applyBundle(env, ns, 'rt16p-l', [
    { name: 'x', object: configMap('rt16p-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'l', object: configMap('rt16p-l') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt16p-l', 'rt16p-x');
  const l = claimed.bundle;
  const uid = claimed.object.metadata.uid;

  // `kubectl annotate --overwrite smith.atlassian.com/claimReferences=` (a merge patch by kubectl's manager).
  await env.client.patch(t.configMap, ns, 'rt16p-x', { metadata: { annotations: { [Annotations.claimReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  // Let both Bundles pass over the object again.
  await new Promise((r) => setTimeout(r, 3000));
  const mid = await env.client.get(t.configMap, ns, 'rt16p-x');
  console.log('rt16p-x after the overwrite', JSON.stringify(mid.metadata.annotations), JSON.stringify(mid.metadata.ownerReferences ?? []));

  // rt16p-l stops listing rt16p-x: its claim should be withdrawn.
  await applyBundle(env, ns, 'rt16p-l', [{ name: 'l', object: configMap('rt16p-l') }]);
  await waitForReady(env, ns, 'rt16p-l');
  const dropped = await env.client.get(t.configMap, ns, 'rt16p-x');
  console.log('rt16p-x refs after rt16p-l dropped it', JSON.stringify(dropped.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt16p-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt16p-x');
  console.log('rt16p-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt16p-l', l.metadata.uid);
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt16p-x', l.metadata.uid) };
  console.log('rt16p-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);
