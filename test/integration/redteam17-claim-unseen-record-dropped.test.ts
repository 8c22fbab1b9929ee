/**
 * Red team 17: the claiming Bundle's own pass drops its status.claims entry
 * for a claim it did not see, so a single overwrite of the claimReferences
 * annotation (red team 16's step) again leaves the claim read as the user's,
 * and kube-controller-manager deletes a deletionPolicy Orphan object with
 * the claiming Bundle.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator):
 *  1. Bundle rt17m-w lists ConfigMap rt17m-x (deletionPolicy Orphan) and
 *     controls it. Bundle rt17m-l lists it too: it loses the Conflict and
 *     claims it (annotation + status.claims).
 *  2. Another tool blanks the annotation (`kubectl annotate --overwrite
 *     smith.atlassian.com/claimReferences=`): the status record still names
 *     the claim (the red team 16 fix).
 *  3. rt17m-w's spec gets a typo in a reference name (an invalid spec: it
 *     writes nothing but its claims, so nothing labels rt17m-x again for
 *     now; without the typo the same happens whenever rt17m-l's pass beats
 *     rt17m-w's relabel: an earlier version of this test, with the edits
 *     made while the operator was down, failed in one of three runs).
 *     Another tool takes the managed label off rt17m-x (`kubectl label
 *     smith.atlassian.com/managed-`; the fuzz suites treat this as routine).
 *     Then rt17m-l's spec stops listing rt17m-x.
 *  4. The typo is fixed (rt17m-w labels rt17m-x again).
 *  5. rt17m-w is deleted (Orphan: released), then rt17m-l.
 *
 * Expected (docs/safety.md): "deletionPolicy Orphan objects are never
 * deleted by a Bundle's deletion"; a claim "stays the operator's, withdrawn
 * and never left on a released object"; the kind inventory's principle
 * "What a Bundle controls is found the way the collector finds it: by owner
 * reference and UID ... never through the managed label (which only narrows
 * caches)".
 *
 * What happens: rt17m-l's pass on its new spec reads only the objects at its
 * coordinates and those the label-selected cache shows referencing it
 * (live-pass.ts:149, gather.ts controlledElsewhere -> objects.referencing);
 * rt17m-x is neither, so it is neither withdrawn nor "claimed", and
 * nextClaimRecord (claim-record.ts; live-pass.ts:212) rebuilds
 * status.claims without it. When rt17m-w relabels rt17m-x, no record names
 * the claim any more: it reads as the user's (owner-references.ts
 * operatorClaimUids), is never withdrawn, survives rt17m-w's Orphan release,
 * and the collector deletes rt17m-x with rt17m-l.
 *
 * Suggested fix direction: never drop a status.claims entry for an object
 * the pass did not read (carry entries forward, as the countdown record's
 * carriedPendingDeletions does, until a read of the object - by uid, a GET
 * or an unlabelled list as kind-inventory's confirmedEmpty does - shows no
 * reference to the Bundle); and find claims to withdraw without the managed
 * label (as managedKinds is confirmed with an unlabelled list).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations, Labels } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { collectedOrFreeOf, deleteBundleAndWait, waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt17m');

it('a claim record dropped by a pass that did not see the object (managed label taken off) does not let an Orphan object be collected with the claiming Bundle', async () => {
  const { env, ns, t } = f;
  const x = () => configMap('rt17m-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' });
  await applyBundle(env, ns, 'rt17m-w', [{ name: 'x', object: x() }]);
  const w = await waitForReady(env, ns, 'rt17m-w');
  await applyBundle(env, ns, 'rt17m-l', [
    { name: 'x', object: x() },
    { name: 'l', object: configMap('rt17m-l') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt17m-l', 'rt17m-x');
  const l = claimed.bundle;
  const uid = claimed.object.metadata.uid;

  // Red team 16's step: the annotation blanked. The status record still names the claim.
  await env.client.patch(t.configMap, ns, 'rt17m-x', { metadata: { annotations: { [Annotations.claimReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  await new Promise((r) => setTimeout(r, 3000));
  expect((statusClaimsOf((await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt17m-l')).status) ?? []).map((e) => e.uid)).toContain(uid);

  // w's spec gets a typo in a reference name: an invalid spec writes nothing but its claims (so nothing labels x again for now).
  await applyBundle(env, ns, 'rt17m-w', [{ name: 'x', object: x(), references: [{ resource: 'ghots' }] }]);
  await waitFor('rt17m-w to report its invalid spec', async () => {
    const b = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt17m-w');
    return (b.status as { observedGeneration?: number } | undefined)?.observedGeneration === b.metadata.generation &&
      JSON.stringify(b.status ?? {}).includes('ghots')
      ? b
      : undefined;
  });
  // Another tool takes the managed label off x (the operator's caches select on it).
  await env.client.patch(t.configMap, ns, 'rt17m-x', { metadata: { labels: { [Labels.managed]: null } } }, 'merge', {
    fieldManager: 'kubectl-label',
  });
  await new Promise((r) => setTimeout(r, 3000));
  // l stops listing x.
  await applyBundle(env, ns, 'rt17m-l', [{ name: 'l', object: configMap('rt17m-l') }]);
  await waitForReady(env, ns, 'rt17m-l');
  await new Promise((r) => setTimeout(r, 4000));
  const midL = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt17m-l');
  const midX = await env.client.get(t.configMap, ns, 'rt17m-x');
  console.log(
    'after l dropped x: l status.claims',
    JSON.stringify(statusClaimsOf(midL.status)),
    'x refs',
    JSON.stringify(midX.metadata.ownerReferences ?? []),
  );
  // The typo fixed: w applies x again (the label is back).
  await applyBundle(env, ns, 'rt17m-w', [{ name: 'x', object: x() }]);
  await waitForReady(env, ns, 'rt17m-w');
  await waitFor('rt17m-x labelled again', async () => {
    const o = await env.client.get(t.configMap, ns, 'rt17m-x');
    return o.metadata.labels?.[Labels.managed] === 'true';
  });
  await new Promise((r) => setTimeout(r, 4000));
  const mid = await env.client.get(t.configMap, ns, 'rt17m-x');
  console.log(
    'rt17m-x relabelled',
    JSON.stringify(mid.metadata.ownerReferences ?? []),
    JSON.stringify(mid.metadata.annotations?.[Annotations.claimReferences]),
  );

  await deleteBundleAndWait(env, ns, 'rt17m-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt17m-x');
  console.log('rt17m-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt17m-l', l.metadata.uid);
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt17m-x', l.metadata.uid) };
  console.log('rt17m-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);
