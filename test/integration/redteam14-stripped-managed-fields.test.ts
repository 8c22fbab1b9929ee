/**
 * Red team 14: an object whose managedFields were cleared (the documented
 * way: an update with `metadata.managedFields: [{}]`) loses the user's
 * ownerReference to another live Bundle, and its own Bundle's finalizer
 * deletes it.
 *
 * What a user does: Bundle rt14m-umbrella (B0) is live and lists nothing of
 * the objects below. Bundle rt14m-app (B1) lists ConfigMap rt14m-patched;
 * another tool adds a non-controller ownerReference to B0 by hand (as in
 * red team 13's `redteam13-other-bundle-owner`, which is kept now). Then
 * someone strips the object's managedFields (`kubectl patch --type=json -p
 * '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]'`, the
 * Kubernetes docs' "clearing managedFields", done by tools that shrink
 * objects or restore them). B1 is deleted (background, the default).
 * rt14m-plain (no other owner) is the control, deleted.
 *
 * Why it should be kept: it still has a live owner, B0;
 * kube-controller-manager's collector keeps it (it reads owners, not
 * managedFields), and "where kube-controller-manager's collector would keep
 * an object, ours keeps it too".
 *
 * What happens: the finalizer deletes it (event Pruned "its Bundle is being
 * deleted"). Suspected path: core/bundle/owner-references.ts
 * operatorClaimUids returns undefined for an object read without
 * managedFields (the server omits an emptied list), and
 * operatorWrittenReferences then reads every non-controller reference to a
 * Bundle as the operator's claim; userReferences is empty and
 * core/bundle/finalize.ts backgroundSteps chooses 'delete'.
 */
import { deleteBundleAndWait } from './claims.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt14m');

it("a Bundle deleted in the background keeps an object another live Bundle owns by the user's reference, its managedFields cleared", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt14m-umbrella', [{ name: 'u', object: configMap('rt14m-u') }]);
  const umbrella = await waitForReady(env, ns, 'rt14m-umbrella');
  const ownerRef = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    name: 'rt14m-umbrella',
    uid: umbrella.metadata.uid,
    blockOwnerDeletion: false,
  };
  await applyBundle(env, ns, 'rt14m-app', [
    { name: 'patched', object: configMap('rt14m-patched') },
    { name: 'plain', object: configMap('rt14m-plain') },
  ]);
  const app = await waitForReady(env, ns, 'rt14m-app');
  const patched = await env.client.get(t.configMap, ns, 'rt14m-patched');
  await env.client.patch(
    t.configMap,
    ns,
    'rt14m-patched',
    [
      { op: 'test', path: '/metadata/ownerReferences', value: patched.metadata.ownerReferences },
      { op: 'add', path: '/metadata/ownerReferences/-', value: ownerRef },
    ],
    'json',
    { fieldManager: 'another-tool' },
  );
  await env.client.patch(t.configMap, ns, 'rt14m-patched', [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }], 'json', {
    fieldManager: 'slimmer',
  });
  const stripped = await env.client.get(t.configMap, ns, 'rt14m-patched');
  console.log('managedFields after the reset', JSON.stringify(stripped.metadata.managedFields));
  expect((stripped.metadata.ownerReferences ?? []).some((r) => r.uid === umbrella.metadata.uid)).toBe(true);
  const uid = stripped.metadata.uid;

  await deleteBundleAndWait(env, ns, 'rt14m-app', app.metadata.uid);
  await waitFor('rt14m-plain deleted', async () => (await env.client.tryGet(t.configMap, ns, 'rt14m-plain')) === undefined);
  const o = await env.client.tryGet(t.configMap, ns, 'rt14m-patched');
  console.log('rt14m-patched', o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  console.log('events', JSON.stringify((await eventsFor(env, ns, 'rt14m-app')).filter((e) => e.note.includes('rt14m-patched'))));
  expectKept(o, uid);
}, 120_000);
