/**
 * Red team 15: an ownerReference to an umbrella Bundle that an object's
 * manifest names, added to an `apply: IfNotPresent` object, is written by
 * the operator's bookkeeping patch (a JSON patch, an Update of the field
 * manager bundlesmith). owner-references.ts operatorClaimUids counts every
 * reference to a Bundle that bundlesmith owns through an Update as a claim
 * of that Bundle, so the umbrella Bundle's own pass withdraws the user's
 * reference as its claim.
 *
 * What a user does: Bundle rt15i-umbrella (U) is live and lists nothing
 * below. Bundle rt15i-app (A) lists ConfigMap rt15i-x with
 * `smith.atlassian.com/apply: IfNotPresent`. The team later adds to that
 * manifest a non-controller ownerReference to U (U is the umbrella that
 * should hold the object), and re-applies A. A is then deleted with orphan
 * propagation (`kubectl delete --cascade=orphan`): rt15i-x is to stay, held
 * by U. U gets one more object and is re-applied.
 *
 * Why the reference should be kept: it is the user's (the manifest names it:
 * "a reference the spec itself names is the user's"); "a user's
 * ownerReferences are never removed by the operator". The orphan deletion
 * keeps it (finalize orphanStep reads the manifest), and U never listed
 * rt15i-x, so U never wrote a claim there and the claimReferences annotation
 * records none.
 *
 * What happens: the reference to U is gone right after the orphan deletion
 * (one poll of 50 ms sees [rt15i-app, rt15i-umbrella] then []; A's finalizer
 * reports "orphaned ...: it keeps only its user's ownerReferences") and
 * stays gone after U's pass: U takes it for its claim on an object it does
 * not list and withdraws it (while A is live, A writes it back).
 * Suspected path: core/bundle/drift.ts bookkeepingPatch writes the
 * manifest's references by JSON patch (bundlesmith, Update);
 * owner-references.ts operatorClaimUids / hasClaimReference (no
 * namedByManifest, and the managedFields fallback for claims written before
 * the annotation) make it U's claim; plan-input.ts `claimed`, claims.ts
 * planWithdrawals, ownership.ts claimWithdrawal/withdrawClaimPatch remove it.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt15i');

it("the user's reference to an umbrella Bundle, named by an IfNotPresent object's manifest, is not withdrawn as that Bundle's claim", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt15i-umbrella', [{ name: 'u', object: configMap('rt15i-u') }]);
  const umbrella = await waitForReady(env, ns, 'rt15i-umbrella');
  const uUid = umbrella.metadata.uid;
  const x = configMap('rt15i-x', { k: 'v' }, { [Annotations.apply]: 'IfNotPresent' });
  await applyBundle(env, ns, 'rt15i-app', [{ name: 'x', object: x }]);
  await waitForReady(env, ns, 'rt15i-app');

  // The manifest now names the umbrella as an owner.
  const withOwner = {
    ...x,
    metadata: {
      ...(x['metadata'] as Record<string, unknown>),
      ownerReferences: [{ apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'rt15i-umbrella', uid: uUid }],
    },
  };
  await applyBundle(env, ns, 'rt15i-app', [{ name: 'x', object: withOwner }]);
  const app = await waitForReady(env, ns, 'rt15i-app');
  const written = await waitFor('the reference to the umbrella on rt15i-x', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'rt15i-x');
    return o && (o.metadata.ownerReferences ?? []).some((r) => r.uid === uUid) ? o : undefined;
  });
  console.log('rt15i-x managedFields', JSON.stringify(written.metadata.managedFields));
  const uid = written.metadata.uid;
  // Diagnostics only (no assertion): every change of rt15i-x's references from here on.
  const seen: string[] = [];
  let watching = true;
  const watcher = (async () => {
    let last = '';
    while (watching) {
      const cur = await env.client.tryGet(t.configMap, ns, 'rt15i-x');
      const refs = JSON.stringify((cur?.metadata.ownerReferences ?? []).map((r) => r.name));
      if (refs !== last) seen.push(`${new Date().toISOString()} ${refs}`);
      last = refs;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt15i-app', { uid: app.metadata.uid, propagationPolicy: 'Orphan' });
  await waitFor('rt15i-app to be gone', async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt15i-app')) === undefined, {
    timeoutMs: 60_000,
  });
  const orphaned = await env.client.get(t.configMap, ns, 'rt15i-x');
  console.log('rt15i-x refs after the orphan deletion', JSON.stringify(orphaned.metadata.ownerReferences ?? []));

  // A pass of the umbrella, with rt15i-x in view.
  await applyBundle(env, ns, 'rt15i-umbrella', [
    { name: 'u', object: configMap('rt15i-u') },
    { name: 'u2', object: configMap('rt15i-u2') },
  ]);
  await waitForReady(env, ns, 'rt15i-umbrella');
  const o = await env.client.tryGet(t.configMap, ns, 'rt15i-x');
  console.log('rt15i-x', o === undefined ? 'GONE' : `refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  watching = false;
  await watcher;
  console.log('rt15i-x references over time', seen.join('\n'));
  console.log('events of rt15i-app', JSON.stringify(await eventsFor(env, ns, 'rt15i-app')));
  expectKept(o, uid);
  expect((o?.metadata.ownerReferences ?? []).map((r) => r.uid)).toContain(uUid);
}, 180_000);
