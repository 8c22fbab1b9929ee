/**
 * Red team 15: the umbrella Bundle's pass withdraws, as its claim, the
 * user's ownerReference to it that an `apply: IfNotPresent` object's manifest
 * names (the operator's bookkeeping patch wrote it, by JSON patch); once its
 * own Bundle can no longer write it back, the object is left with no owner
 * but its Bundle, and that Bundle's deletion deletes it although the
 * umbrella, a live owner, should have held it.
 *
 * What a user does: Bundle rt15g-umbrella (U) is live and lists nothing
 * below. Bundle rt15g-app (A) lists ConfigMap rt15g-x with
 * `smith.atlassian.com/apply: IfNotPresent`; the team adds to that manifest
 * a non-controller ownerReference to U and re-applies A. Later A gets a new
 * resource that fails to apply (an invalid ConfigMap key) and rt15g-x is
 * made to reference it, so A writes nothing to rt15g-x for now. U is
 * re-applied (one more object). A is deleted (background, the default).
 *
 * Why rt15g-x should be kept: the reference to U is the user's (its
 * manifest names it); kube-controller-manager keeps an object with a live
 * owner, and so does our finalizer (finalize.ts backgroundSteps: another
 * owner's reference, only the Bundle's references go). U never listed
 * rt15g-x: it wrote no claim there, and the claimReferences annotation
 * records none.
 *
 * What happens: U's pass takes the reference for its claim on an object it
 * does not list and withdraws it; A's finalizer then finds no other owner
 * and deletes rt15g-x (event Pruned). Suspected path: core/bundle/drift.ts
 * bookkeepingPatch writes the manifest's references by JSON patch (field
 * manager bundlesmith, operation Update); owner-references.ts
 * operatorClaimUids counts every reference bundlesmith owns through an Update
 * as a claim (the managedFields fallback for claims written before the
 * annotation), hasClaimReference knows nothing of the manifest;
 * plan-input.ts `claimed`, claims.ts planWithdrawals and ownership.ts
 * claimWithdrawal/withdrawClaimPatch take it out.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForBundle, waitForReady } from './bundles.js';
import { deleteBundleAndWait } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt15g');

it("a Bundle's deletion keeps an IfNotPresent object whose manifest names a live umbrella Bundle as its owner", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt15g-umbrella', [{ name: 'u', object: configMap('rt15g-u') }]);
  const umbrella = await waitForReady(env, ns, 'rt15g-umbrella');
  const uUid = umbrella.metadata.uid;
  const x = configMap('rt15g-x', { k: 'v' }, { [Annotations.apply]: 'IfNotPresent' });
  await applyBundle(env, ns, 'rt15g-app', [{ name: 'x', object: x }]);
  await waitForReady(env, ns, 'rt15g-app');

  const withOwner = {
    ...x,
    metadata: {
      ...(x['metadata'] as Record<string, unknown>),
      ownerReferences: [{ apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'rt15g-umbrella', uid: uUid }],
    },
  };
  await applyBundle(env, ns, 'rt15g-app', [{ name: 'x', object: withOwner }]);
  await waitForReady(env, ns, 'rt15g-app');
  const written = await waitFor('the reference to the umbrella on rt15g-x', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'rt15g-x');
    return o && (o.metadata.ownerReferences ?? []).some((r) => r.uid === uUid) ? o : undefined;
  });
  const uid = written.metadata.uid;

  // A resource that fails to apply, which rt15g-x now references: A writes nothing to rt15g-x for now.
  await applyBundle(env, ns, 'rt15g-app', [
    { name: 'bad', object: configMap('rt15g-bad', { 'not a key': 'x' }) },
    { name: 'x', references: [{ resource: 'bad' }], object: withOwner },
  ]);
  const app = await waitForBundle(env, ns, 'rt15g-app', 'the new spec observed', () => true);

  // A pass of the umbrella, with rt15g-x in view.
  await applyBundle(env, ns, 'rt15g-umbrella', [
    { name: 'u', object: configMap('rt15g-u') },
    { name: 'u2', object: configMap('rt15g-u2') },
  ]);
  await waitForReady(env, ns, 'rt15g-umbrella');
  const mid = await env.client.get(t.configMap, ns, 'rt15g-x');
  console.log('rt15g-x refs after the umbrella pass', JSON.stringify(mid.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt15g-app', app.metadata.uid);
  const o = await env.client.tryGet(t.configMap, ns, 'rt15g-x');
  console.log('rt15g-x', o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  console.log('events', JSON.stringify((await eventsFor(env, ns, 'rt15g-app')).filter((e) => e.note.includes('rt15g-x'))));
  expectKept(o, uid);
}, 240_000);
