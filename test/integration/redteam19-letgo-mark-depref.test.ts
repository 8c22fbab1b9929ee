/**
 * Red team 19: the let-go mark outlives the taker's adoption; an orphan
 * deletion of the taker is read as a background one and leaves the
 * operator's dependency reference in place: kube-controller-manager later
 * collects the orphaned dependent through its former sibling. No Events
 * needed (compare redteam19-letgo-mark-outlives-adoption).
 *
 * Steps:
 *  1. Bundle rd-a lists ConfigMaps rd-p and rd-c (controls both).
 *  2. Bundle rd-b lists them too, rd-c with `references: [{resource: p}]`;
 *     it loses the Conflict and claims both. rd-b then acts as a
 *     ServiceAccount that may not write ConfigMaps yet, so rd-a's finalizer
 *     lets go before rd-b's hand-over (the order fuzz seed 19412 reached).
 *  3. rd-a is deleted (background): its finalizer lets rd-p and rd-c go to
 *     rd-b, each marked `smith.atlassian.com/former-bundle: rd-a`.
 *  4. The Role is widened: rd-b adopts both by its apply and writes the
 *     dependency ownerReference rd-c -> rd-p (blockOwnerDeletion).
 *  5. The operator restarts while rd-b is deleted with `--cascade=orphan`;
 *     kube-controller-manager orphans first (rd-b's references go, the
 *     `orphan` finalizer goes), as docs/deletion.md allows.
 *  6. A person deletes rd-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "the finalizer removes the rest of
 * what the operator wrote (dependency ownerReferences to sibling objects
 * ...) so each object ... is not collected later when a former sibling is
 * deleted"; docs/safety.md, Bundle finalizer row: "orphan strips what the
 * operator wrote so a later sibling deletion cannot cascade"): rd-c kept.
 *
 * What happens: rd-c is collected by kube-controller-manager. The
 * finalizer's effectivePropagation (src/core/bundle/finalize.ts:69-82)
 * finds no orphan trace: rd-p and rd-c are applied and uncontrolled, but
 * both still carry the former-bundle mark of step 3, which only a take-hold
 * patch removes, and claimFor (src/core/bundle/take-holds.ts:80: `released`
 * reads the label only; :92) leaves a let-go object to the apply. Read as
 * background, the plan holds nothing (the collector took rd-b's references
 * off), the finalizer goes, and rd-c keeps the operator's dependency
 * reference to rd-p: deleting rd-p cascades to it.
 *
 * Fix direction: remove the former-bundle annotation when the taker takes
 * the object (count the annotation as `released` in claimFor, or have the
 * apply's bookkeeping patch drop it), or let effectivePropagation honour a
 * let-go mark only while the object is not yet taken (e.g. it names a
 * Bundle other than this one AND carries no reference this Bundle's apply
 * wrote, such as a recorded dependency reference).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown, siblingDeletedDependentKept, serviceAccountWithRules } from './orphan-traces.js';

const f = referenceFixture('rt19-lgdep');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const AUTHOR = 'rd-author';

/** rl-b's ServiceAccount: events and rl-e always; rl-x only once `withX`. */
async function author(withX: boolean): Promise<void> {
  await serviceAccountWithRules(f.env, f.ns, AUTHOR, [
    { apiGroups: [''], resources: ['configmaps', 'events'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch', 'delete'] },
    ...(withX ? [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update', 'patch', 'delete'] }] : []),
  ]);
}

it('an orphan deletion of a Bundle that took objects let go to it strips its dependency references', async () => {
  const { env, ns, t } = f;
  const a = await applyBundle(env, ns, 'rd-a', [
    { name: 'p', object: configMap('rd-p') },
    { name: 'c', object: configMap('rd-c') },
  ]);
  await waitForReady(env, ns, 'rd-a');
  await applyBundle(env, ns, 'rd-b', [
    { name: 'p', object: configMap('rd-p') },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('rd-c') },
  ]);
  await waitFor('rd-b to claim rd-p and rd-c', async () => {
    const p = await env.client.get(t.configMap, ns, 'rd-p');
    const c = await env.client.get(t.configMap, ns, 'rd-c');
    return (p.metadata.ownerReferences ?? []).length >= 2 && (c.metadata.ownerReferences ?? []).length >= 2;
  });

  await author(false);
  await env.client.patch(BUNDLE_RESOURCE_TYPE, ns, 'rd-b', { spec: { serviceAccountName: AUTHOR } }, 'merge', {
    fieldManager: 'test-user',
  });
  await sleep(3_000);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rd-a', { uid: a.metadata.uid ?? '' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'rd-a', { timeoutMs: 60_000 });
  for (const n of ['rd-p', 'rd-c']) {
    const o = await env.client.get(t.configMap, ns, n);
    expect(o.metadata.annotations?.[Annotations.formerBundle]).toBe('rd-a');
  }
  await author(true);
  const b = await waitForReady(env, ns, 'rd-b');
  await waitFor('rd-b to control both, rd-c to reference rd-p', async () => {
    const p = await env.client.get(t.configMap, ns, 'rd-p');
    const c = await env.client.get(t.configMap, ns, 'rd-c');
    const ctl = (o: typeof p): boolean => (o.metadata.ownerReferences ?? []).some((r) => r.uid === b.metadata.uid && r.controller === true);
    return ctl(p) && ctl(c) && (c.metadata.ownerReferences ?? []).some((r) => r.uid === p.metadata.uid);
  });
  await sleep(3_000);
  const p = await env.client.get(t.configMap, ns, 'rd-p');
  const c = await env.client.get(t.configMap, ns, 'rd-c');
  console.log('rd-c before:', JSON.stringify(c.metadata.ownerReferences), JSON.stringify(c.metadata.annotations));

  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'rd-b', b.metadata.uid ?? '');
  const orphaned = await env.client.get(t.configMap, ns, 'rd-c');
  console.log('rd-c after the orphan deletion:', JSON.stringify(orphaned.metadata.ownerReferences ?? []));
  expectKept(orphaned, c.metadata.uid ?? '');

  // rd-p is nobody's now; a person deletes it. kube-controller-manager then either takes the dangling reference
  // out of rd-c (kept) or collects rd-c.
  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 300_000);
