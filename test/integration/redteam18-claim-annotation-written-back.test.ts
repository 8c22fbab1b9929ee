/**
 * Red team 18: an earlier copy of an object's claimReferences annotation,
 * written back (an old `kubectl get -o yaml` re-applied, a restore, a tool
 * that syncs annotations from a saved copy), turns a user's reference to a
 * live Bundle into "the operator's claim", even with the chart's record
 * guard on: the annotation alone is enough, never judged against the
 * Bundle's own record (status.claims), which the guard makes trustworthy
 * and which no longer names the object. The operator withdraws the user's
 * reference, and the object is then deleted with its controlling Bundle
 * although kube-controller-manager would keep it for its live owner.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator; the
 * chart's record guard installed throughout):
 *  1. Bundle rt18a-a lists ConfigMap rt18a-x (controls it). Bundle rt18a-u
 *     lists rt18a-x and rt18a-y: it loses the Conflict over x and claims it
 *     (reference, claimReferences annotation, status.claims).
 *     Someone keeps a copy of x (`kubectl get cm rt18a-x -o yaml`).
 *  2. rt18a-u stops listing rt18a-x: the claim is withdrawn everywhere
 *     (reference, annotation, status entry). Correct so far.
 *  3. A person makes rt18a-u an owner of rt18a-x by hand (a non-controller
 *     ownerReference: the user's "umbrella", redteam13-other-bundle-owner).
 *  4. The copy's annotation is written back (`kubectl annotate --overwrite
 *     smith.atlassian.com/claimReferences=<the saved value>`).
 *  5. rt18a-a is deleted (background, the default).
 *
 * Expected (docs/safety.md): "Edits by hand can put a deletion off, never
 * bring it forward ... an earlier copy of its own annotations written back
 * (an old `kubectl get -o yaml` re-applied, a restore) still checks; the
 * record decides over them"; docs/operations.md recordGuard: "The operator
 * judges the proofs it writes on objects against that record, so an
 * earlier copy of an object's annotations written back cannot bring its
 * deletion forward"; the Bundle finalizer row: "a reference to a Bundle that
 * the manifest names or another tool wrote is the user's, kept, never
 * withdrawn, and a live owner the finalizer defers to as
 * kube-controller-manager would". kube-controller-manager alone keeps
 * rt18a-x: its owner rt18a-u is alive.
 *
 * What happens (3 of 3 runs on 6a987a7): rt18a-x is deleted.
 * operatorClaimUids (owner-references.ts:132-139) takes the
 * annotation's uids as claims whatever status.claims says (here it is []:
 * the guarded record no longer names x). rt18a-a's finalizer
 * (finalize.ts:151-158: userReferences with finalize-keep.ts:123
 * referenceContext) then reads the person's reference to rt18a-u as
 * rt18a-u's stale claim (rt18a-u no longer lists x), counts no other owner
 * and deletes x. (rt18a-u's own pass would also withdraw it, take-holds.ts:177
 * planWithdrawals -> ownership.ts:137 claimWithdrawal, whenever it sees x
 * in its caches, and carry the forged claim into its guarded status.claims,
 * claim-record.ts:98-102.)
 *
 * Suggested fix direction: judge the annotation against the record, as the
 * proofs are: an annotation uid counts as a claim only while that Bundle's
 * status.claims (written ahead of every claim, guarded) names the object,
 * or fall back to the annotation alone only for claims written before
 * status.claims existed (an upgrade marker); and never let an entry be
 * carried on the annotation's word alone (nextClaimRecord's `claimed`).
 *
 * Fixed: for a Bundle whose status keeps a claim record, the annotation
 * counts only while the record names the object; the entry went with the
 * withdrawn claim, so the annotation written back is no evidence
 * (claim-record.ts recordedClaimants).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { grantStatusWriter, installChartPolicy, refusedByRecordGuard } from './deletion-propagation.js';
import { waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt18a');

it("an earlier claimReferences annotation written back does not turn a user's reference to a live Bundle into a claim (record guard on): the object is kept", async () => {
  const { env, ns, t } = f;
  const writer = env.client.impersonating({ user: await grantStatusWriter(env, ns) });
  const probe = (dryRun: boolean) =>
    writer.patch(
      BUNDLE_RESOURCE_TYPE,
      ns,
      'rt18a-a',
      { status: { claims: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'p', uid: 'p' }] } },
      'merge',
      {
        subresource: 'status',
        fieldManager: 'kubectl-patch',
        dryRun,
      },
    );
  await applyBundle(env, ns, 'rt18a-a', [{ name: 'x', object: configMap('rt18a-x') }]);
  const a = await waitForReady(env, ns, 'rt18a-a');
  const removeGuard = await installChartPolicy(env, ns, 'recordguard.yaml', ['--set', 'recordGuard.enabled=true'], () =>
    refusedByRecordGuard(() => probe(true)),
  );
  try {
    await applyBundle(env, ns, 'rt18a-u', [
      { name: 'x', object: configMap('rt18a-x') },
      { name: 'y', object: configMap('rt18a-y') },
    ]);
    const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt18a-u', 'rt18a-x');
    const u = claimed.bundle;
    const uid = claimed.object.metadata.uid;
    // The copy someone keeps (`kubectl get cm rt18a-x -o yaml`).
    const savedAnnotation = claimed.object.metadata.annotations?.[Annotations.claimReferences] ?? '';

    // u stops listing x: its claim is withdrawn everywhere.
    await applyBundle(env, ns, 'rt18a-u', [{ name: 'y', object: configMap('rt18a-y') }]);
    await waitFor('the claim of rt18a-u withdrawn', async () => {
      const cu = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt18a-u');
      const o = await env.client.get(t.configMap, ns, 'rt18a-x');
      return (
        !(o.metadata.ownerReferences ?? []).some((r) => r.uid === u.metadata.uid) &&
        !(o.metadata.annotations?.[Annotations.claimReferences] ?? '').includes(u.metadata.uid ?? '!') &&
        !(statusClaimsOf(cu.status) ?? []).some((e) => e.uid === uid)
      );
    });

    // A person makes the live Bundle u an owner of x (the user's reference).
    const before = await env.client.get(t.configMap, ns, 'rt18a-x');
    await env.client.patch(
      t.configMap,
      ns,
      'rt18a-x',
      [
        { op: 'test', path: '/metadata/ownerReferences', value: before.metadata.ownerReferences },
        {
          op: 'add',
          path: '/metadata/ownerReferences/-',
          value: { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'rt18a-u', uid: u.metadata.uid, blockOwnerDeletion: false },
        },
      ],
      'json',
      { fieldManager: 'kubectl-patch' },
    );
    await new Promise((r) => setTimeout(r, 3000));
    const held = await env.client.get(t.configMap, ns, 'rt18a-x');
    console.log('rt18a-x refs with the person’s reference', JSON.stringify(held.metadata.ownerReferences ?? []));

    // The saved annotation written back (`kubectl annotate --overwrite`).
    await env.client.patch(
      t.configMap,
      ns,
      'rt18a-x',
      { metadata: { annotations: { [Annotations.claimReferences]: savedAnnotation } } },
      'merge',
      {
        fieldManager: 'kubectl-annotate',
      },
    );
    await new Promise((r) => setTimeout(r, 4000));
    const mid = await env.client.get(t.configMap, ns, 'rt18a-x');
    const midU = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt18a-u');
    console.log(
      'rt18a-x after the write-back',
      JSON.stringify(mid.metadata.ownerReferences ?? []),
      'claimReferences',
      mid.metadata.annotations?.[Annotations.claimReferences],
      'u status.claims',
      JSON.stringify(statusClaimsOf(midU.status)),
    );

    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt18a-a', { uid: a.metadata.uid });
    await waitFor('rt18a-a to be gone', async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt18a-a')) === undefined, {
      timeoutMs: 60_000,
    });
    await new Promise((r) => setTimeout(r, 8000));
    const o = await env.client.tryGet(t.configMap, ns, 'rt18a-x');
    console.log('rt18a-x', o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
    expectKept(o, uid);
  } finally {
    await removeGuard();
  }
}, 300_000);
