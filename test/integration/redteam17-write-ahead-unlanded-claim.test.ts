/**
 * Red team 17: a claim recorded ahead in status.claims whose patch never
 * landed makes a user's later reference to that Bundle "the operator's
 * claim"; the operator withdraws it and the object is then deleted although
 * kube-controller-manager would keep it for its live owner.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator):
 *  1. Bundle rt17a-a lists ConfigMap rt17a-x (controls it).
 *  2. Another tool touches rt17a-x often (a label bumped every few ms: any
 *     controller that stamps a heartbeat/annotation does this). Bundle
 *     rt17a-u is applied listing rt17a-x (and rt17a-y): it loses the Conflict
 *     and plans a claim; recordClaimsFirst writes x's uid into
 *     rt17a-u's status.claims, then the claim patch (guarded by
 *     resourceVersion) fails as stale; the pass still records it ("sent or
 *     not", claim-record.ts nextClaimRecord).
 *  3. Before any claim lands, a person makes rt17a-u an owner of rt17a-x by
 *     hand (a non-controller ownerReference: the user's "umbrella", as in
 *     redteam13-other-bundle-owner). The bumps stop. From now on the
 *     operator itself does not claim: claims.ts claimFor 'conflict' writes no
 *     claim when a reference to the Bundle is already there (it is the user's).
 *  4. rt17a-u stops listing rt17a-x.
 *  5. rt17a-a is deleted (background, the default).
 *
 * Expected (docs/safety.md, Bundle finalizer row): "a reference to a Bundle
 * that the manifest names or another tool wrote is the user's, kept, never
 * withdrawn, and a live owner the finalizer defers to as
 * kube-controller-manager would". kube-controller-manager alone keeps
 * rt17a-x: its owner rt17a-u is alive.
 *
 * What happens: the status entry written ahead for a claim that never landed
 * names x; operatorClaimUids (owner-references.ts:132-139) reads any
 * non-controller reference to rt17a-u on x as its claim; nextClaimRecord
 * (claim-record.ts, live-pass.ts:212) keeps the entry while x carries that
 * reference (claimed is recognised by the status record itself), so when
 * rt17a-u drops x its pass withdraws the user's reference (claims.ts
 * planWithdrawals -> ownership.ts claimWithdrawal), and rt17a-a's finalizer
 * then deletes x (no owner left but the deleted Bundle).
 *
 * Suggested fix direction: the write-ahead entry is evidence only for a
 * claim the operator actually wrote: drop entries whose claim did not land
 * (a failed/stale claim patch) at the pass's end, and never count a status
 * entry for a reference that was already present when the operator decided
 * not to claim (the 'conflict' case with a reference present); or pair the
 * status entry with a marker written in the claim's own patch (the
 * annotation) and require the marker to have been seen at least once.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { deleteBundleAndWait } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt17a');

it("a claim recorded ahead that never landed does not turn a user's later reference to that live Bundle into a claim: the object is kept", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt17a-a', [{ name: 'x', object: configMap('rt17a-x') }]);
  const a = await waitForReady(env, ns, 'rt17a-a');
  const uid = (await env.client.get(t.configMap, ns, 'rt17a-x')).metadata.uid;

  // Another tool touches x often: the operator's claim patch (guarded by resourceVersion) keeps losing.
  let bumping = true;
  let n = 0;
  const bumper = (async () => {
    while (bumping) {
      n += 1;
      await env.client
        .patch(t.configMap, ns, 'rt17a-x', { metadata: { labels: { heartbeat: String(n) } } }, 'merge', { fieldManager: 'heartbeat' })
        .catch(() => undefined);
    }
  })();

  await applyBundle(env, ns, 'rt17a-u', [
    { name: 'x', object: configMap('rt17a-x') },
    { name: 'y', object: configMap('rt17a-y') },
  ]);
  const recorded = await waitFor(
    'rt17a-u to record a claim on rt17a-x ahead (status.claims)',
    async () => {
      const u = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt17a-u');
      return u && (statusClaimsOf(u.status) ?? []).some((e) => e.uid === uid) ? u : undefined;
    },
    { timeoutMs: 30_000 },
  );
  const uUid = recorded.metadata.uid;
  // The person's reference to the live Bundle u, only if no claim of u landed yet (the test of the JSON patch).
  const refs = (await env.client.get(t.configMap, ns, 'rt17a-x')).metadata.ownerReferences ?? [];
  const landedFirst = refs.some((r) => r.uid === uUid);
  console.log('rt17a-x refs when the person adds theirs', JSON.stringify(refs), 'bumps so far', n);
  expect(landedFirst).toBe(false);
  await env.client.patch(
    t.configMap,
    ns,
    'rt17a-x',
    [
      { op: 'test', path: '/metadata/ownerReferences', value: refs },
      {
        op: 'add',
        path: '/metadata/ownerReferences/-',
        value: { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'rt17a-u', uid: uUid, blockOwnerDeletion: false },
      },
    ],
    'json',
    { fieldManager: 'kubectl-patch' },
  );
  bumping = false;
  await bumper;

  await new Promise((r) => setTimeout(r, 4000));
  const mid = await env.client.get(t.configMap, ns, 'rt17a-x');
  const midU = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt17a-u');
  console.log(
    'rt17a-x after the person’s reference',
    JSON.stringify(mid.metadata.ownerReferences ?? []),
    'claimReferences',
    mid.metadata.annotations?.[Annotations.claimReferences],
    'u status.claims',
    JSON.stringify(statusClaimsOf(midU.status)),
  );

  // u stops listing x.
  await applyBundle(env, ns, 'rt17a-u', [{ name: 'y', object: configMap('rt17a-y') }]);
  await waitForReady(env, ns, 'rt17a-u');
  await new Promise((r) => setTimeout(r, 3000));
  const dropped = await env.client.get(t.configMap, ns, 'rt17a-x');
  console.log('rt17a-x refs after rt17a-u dropped it', JSON.stringify(dropped.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt17a-a', a.metadata.uid);
  await new Promise((r) => setTimeout(r, 8000));
  const o = await env.client.tryGet(t.configMap, ns, 'rt17a-x');
  console.log('rt17a-x', o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  expectKept(o, uid);
}, 300_000);
