/**
 * Red team 17: an earlier copy of a Bundle's status.claims, written back by
 * another status writer, turns a user's reference to that (live) Bundle into
 * "the operator's claim": the operator withdraws it, and the object is then
 * deleted with its controlling Bundle although it still has a live owner.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator):
 *  1. Bundle rt17w-a lists ConfigMap rt17w-x (controls it). Bundle
 *     rt17w-u lists ConfigMap rt17w-y.
 *  2. rt17w-u lists rt17w-x too for a while: it loses the Conflict and
 *     claims it (status.claims = [x's uid], claimReferences annotation).
 *     Someone keeps a copy of rt17w-u's status (`kubectl get -o yaml`).
 *  3. rt17w-u stops listing rt17w-x: the claim is withdrawn (reference,
 *     annotation and status.claims entry all go). Correct so far.
 *  4. A person makes rt17w-u an owner of rt17w-x by hand (an "umbrella":
 *     `kubectl patch` adding a non-controller ownerReference to the live
 *     Bundle rt17w-u) - the user's reference, as in redteam13-other-bundle-owner.
 *  5. The saved status.claims is written back through the status subresource
 *     (`kubectl patch --subresource=status`, a restore of the earlier copy)
 *     by another status writer. Then the chart's record guard did not cover
 *     status.claims; it does now, and refuses the write (this test installs
 *     it). Without the guard a status writer can forge the record, as it can
 *     the countdown record: docs/safety.md, what the chart guarantees.
 *  6. rt17w-a is deleted (background, the default).
 *
 * Expected (docs/safety.md, Bundle finalizer row): "a reference to a Bundle
 * that the manifest names or another tool wrote is the user's, kept, never
 * withdrawn, and a live owner the finalizer defers to as
 * kube-controller-manager would (red team 13: redteam13-other-bundle-owner)";
 * and "Edits by hand can put a deletion off, never bring it forward".
 * kube-controller-manager alone keeps rt17w-x (its owner rt17w-u is alive).
 *
 * What happens: rt17w-x is deleted. The written-back entry makes
 * hasClaimReference/operatorClaimUids read the user's reference as
 * rt17w-u's claim (src/core/bundle/owner-references.ts:132-139, status
 * record by object uid, any non-controller reference to that Bundle); the
 * record then perpetuates itself (claim-record.ts nextClaimRecord counts
 * `claimed`, which is recognised by the status record itself;
 * live-pass.ts:212), rt17w-u's pass withdraws "its claim" (claims.ts
 * planWithdrawals -> ownership.ts claimWithdrawal), and/or rt17w-a's
 * finalizer strips it as a stale claim (finalize-keep.ts referenceContext
 * claimRecords), leaving rt17w-x with no owner but the deleted Bundle.
 *
 * Suggested fix direction: a status record alone must not turn a reference
 * into a claim unless it is corroborated by something another writer cannot
 * replay (e.g. extend the record guard to status.claims; and/or record the
 * claim as object uid + the claim's own marker/resourceVersion/generation so
 * an entry from an earlier claim cannot cover a later, different reference;
 * drop status entries whose object does not also carry the annotation when
 * the status entry predates the reference).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { grantStatusWriter, installChartPolicy, refusedByRecordGuard } from './deletion-propagation.js';
import { deleteBundleAndWait, waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt17w');

it("an earlier status.claims written back does not turn a user's reference to a live Bundle into a claim: the object is kept", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt17w-a', [{ name: 'x', object: configMap('rt17w-x') }]);
  const a = await waitForReady(env, ns, 'rt17w-a');
  // u lists x too for a while: it claims it.
  await applyBundle(env, ns, 'rt17w-u', [
    { name: 'x', object: configMap('rt17w-x') },
    { name: 'y', object: configMap('rt17w-y') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt17w-u', 'rt17w-x');
  const u = claimed.bundle;
  const uid = claimed.object.metadata.uid;
  // The copy someone keeps (`kubectl get bundle rt17w-u -o yaml`).
  const savedClaims = statusClaimsOf(u.status);

  // u stops listing x: its claim is withdrawn everywhere.
  await applyBundle(env, ns, 'rt17w-u', [{ name: 'y', object: configMap('rt17w-y') }]);
  await waitFor('the claim of rt17w-u withdrawn', async () => {
    const cu = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt17w-u');
    const o = await env.client.get(t.configMap, ns, 'rt17w-x');
    return (
      !(o.metadata.ownerReferences ?? []).some((r) => r.uid === u.metadata.uid) &&
      !(o.metadata.annotations?.[Annotations.claimReferences] ?? '').includes(u.metadata.uid ?? '!') &&
      !(statusClaimsOf(cu.status) ?? []).some((e) => e.uid === uid)
    );
  });

  // A person makes the live Bundle u an owner of x (the user's reference, as in redteam13-other-bundle-owner).
  const before = await env.client.get(t.configMap, ns, 'rt17w-x');
  await env.client.patch(
    t.configMap,
    ns,
    'rt17w-x',
    [
      { op: 'test', path: '/metadata/ownerReferences', value: before.metadata.ownerReferences },
      {
        op: 'add',
        path: '/metadata/ownerReferences/-',
        value: { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'rt17w-u', uid: u.metadata.uid, blockOwnerDeletion: false },
      },
    ],
    'json',
    { fieldManager: 'kubectl-patch' },
  );

  // The earlier copy of u's status.claims written back (`kubectl patch --subresource=status`) by another status writer:
  // the chart's record guard refuses it (status.claims is part of the record). Without the guard, a status writer can
  // forge the record: docs/safety.md, what the chart guarantees.
  const writer = env.client.impersonating({ user: await grantStatusWriter(env, ns) });
  const writeBack = (dryRun: boolean) =>
    writer.patch(BUNDLE_RESOURCE_TYPE, ns, 'rt17w-u', { status: { claims: savedClaims } }, 'merge', {
      subresource: 'status',
      fieldManager: 'kubectl-patch',
      dryRun,
    });
  const removeGuard = await installChartPolicy(env, ns, 'recordguard.yaml', ['--set', 'recordGuard.enabled=true'], () =>
    refusedByRecordGuard(() => writeBack(true)),
  );
  try {
    expect(await refusedByRecordGuard(() => writeBack(false))).toBe(true);
  } finally {
    await removeGuard();
  }
  await new Promise((r) => setTimeout(r, 4000));
  const mid = await env.client.get(t.configMap, ns, 'rt17w-x');
  console.log('rt17w-x refs after the write-back', JSON.stringify(mid.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt17w-a', a.metadata.uid);
  // Give both collectors time to act on the object.
  await new Promise((r) => setTimeout(r, 8000));
  const o = await env.client.tryGet(t.configMap, ns, 'rt17w-x');
  console.log('rt17w-x', o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  expectKept(o, uid);
}, 300_000);
