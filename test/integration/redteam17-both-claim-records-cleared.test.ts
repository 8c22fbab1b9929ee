/**
 * Red team 17: both records of a claim cleared by other writers. The
 * red team 16 fix (status.claims beside the claimReferences annotation)
 * rests on "either record is enough", but the status record was as writable
 * by other tools as the annotation: the chart's record guard
 * (charts/bundlesmith/templates/recordguard.yaml) covered
 * pendingDeletions, declaredRules and managedKinds, not status.claims. It
 * covers status.claims now; this test installs it and the reset is refused.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator),
 * as redteam16-claim-record-overwritten rt16p plus one status write:
 *  1. Bundle rt17c-w lists ConfigMap rt17c-x (deletionPolicy Orphan).
 *     Bundle rt17c-l lists it too: it loses the Conflict and claims it
 *     (annotation + status.claims).
 *  2. Another tool blanks the annotation (`kubectl annotate --overwrite
 *     smith.atlassian.com/claimReferences=`), and another status writer
 *     resets rt17c-l's status.claims (merge patch on the status
 *     subresource; a status restore from before the claim does the same),
 *     at any time apart: no pass puts either record back (claims.ts claimFor
 *     'conflict' writes no claim, hence no annotation, while a reference to
 *     the Bundle is there; live-pass.ts:212 rebuilds status.claims only from
 *     claims a record still names).
 *  3. rt17c-l stops listing rt17c-x; rt17c-w is deleted (Orphan release);
 *     rt17c-l is deleted.
 *
 * Expected (docs/safety.md): "deletionPolicy Orphan objects are never
 * deleted by a Bundle's deletion"; the claim "stays the operator's,
 * withdrawn and never left on a released object"; "Edits by hand can put a
 * deletion off, never bring it forward".
 *
 * What happens: with both records gone, operatorClaimUids
 * (src/core/bundle/owner-references.ts:132-139) reads the claim as the
 * user's reference; it is neither withdrawn (claims.ts planWithdrawals) nor
 * stripped on the Orphan release (finalize-keep.ts referenceContext), and
 * kube-controller-manager deletes rt17c-x with rt17c-l (the rt16p wrongful
 * delete again).
 *
 * Suggested fix direction: make status.claims a guarded record (add it to
 * the record guard's fields, like pendingDeletions), and/or never let the
 * operator's own status rebuild drop an entry for an object that still
 * carries a non-controller reference to the Bundle which the Bundle wrote
 * (e.g. also keep a record the object cannot lose: a claim-proof HMAC over
 * object uid + Bundle uid, like stamp-proof/release-proof, which a blanked
 * annotation or a reset status cannot forge or erase both of).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { grantStatusWriter, installChartPolicy, refusedByRecordGuard } from './deletion-propagation.js';
import { collectedOrFreeOf, deleteBundleAndWait, waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt17c');

it('both claim records cleared by other writers (status.claims reset, annotation blanked), then the claiming Bundle stops listing the object: an orphaned object is not collected with it', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt17c-w', [
    { name: 'x', object: configMap('rt17c-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
  ]);
  const w = await waitForReady(env, ns, 'rt17c-w');
  await applyBundle(env, ns, 'rt17c-l', [
    { name: 'x', object: configMap('rt17c-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'l', object: configMap('rt17c-l') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt17c-l', 'rt17c-x');
  const l = claimed.bundle;
  const uid = claimed.object.metadata.uid;

  // `kubectl annotate --overwrite smith.atlassian.com/claimReferences=` (a merge patch by kubectl's manager).
  await env.client.patch(t.configMap, ns, 'rt17c-x', { metadata: { annotations: { [Annotations.claimReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  // Another status writer resets status.claims (`kubectl patch --subresource=status`, or an older copy written back): the
  // chart's record guard refuses it (status.claims is part of the record; this test installs the guard). Without the
  // guard both records can be cleared: docs/safety.md, what the chart guarantees.
  const writer = env.client.impersonating({ user: await grantStatusWriter(env, ns) });
  const reset = (dryRun: boolean) =>
    writer.patch(BUNDLE_RESOURCE_TYPE, ns, 'rt17c-l', { status: { claims: null } }, 'merge', {
      subresource: 'status',
      fieldManager: 'kubectl-patch',
      dryRun,
    });
  const removeGuard = await installChartPolicy(env, ns, 'recordguard.yaml', ['--set', 'recordGuard.enabled=true'], () =>
    refusedByRecordGuard(() => reset(true)),
  );
  try {
    expect(await refusedByRecordGuard(() => reset(false))).toBe(true);
  } finally {
    await removeGuard();
  }
  // Let both Bundles pass over the object again.
  await new Promise((r) => setTimeout(r, 3000));
  const mid = await env.client.get(t.configMap, ns, 'rt17c-x');
  console.log('rt17c-x after the overwrite', JSON.stringify(mid.metadata.annotations), JSON.stringify(mid.metadata.ownerReferences ?? []));

  // rt17c-l stops listing rt17c-x: its claim should be withdrawn.
  await applyBundle(env, ns, 'rt17c-l', [{ name: 'l', object: configMap('rt17c-l') }]);
  await waitForReady(env, ns, 'rt17c-l');
  const dropped = await env.client.get(t.configMap, ns, 'rt17c-x');
  console.log('rt17c-x refs after rt17c-l dropped it', JSON.stringify(dropped.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt17c-w', w.metadata.uid);
  const released = await env.client.get(t.configMap, ns, 'rt17c-x');
  console.log('rt17c-x refs after the release', JSON.stringify(released.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt17c-l', l.metadata.uid);
  const o = { cur: await collectedOrFreeOf(env, t.configMap, ns, 'rt17c-x', l.metadata.uid) };
  console.log('rt17c-x', o.cur === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.cur.metadata.ownerReferences ?? [])}`);
  expectKept(o.cur, uid);
}, 300_000);
