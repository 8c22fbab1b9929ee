/**
 * Red team 19: the let-go mark outlives the taker's adoption, and an orphan
 * deletion of the taker is read as a background one.
 *
 * Steps:
 *  1. Bundle rl-a lists ConfigMap rl-x (it controls it).
 *  2. Bundle rl-b lists rl-x too (it loses the Conflict and claims it) and a
 *     core v1 Event rl-e (it controls it).
 *  3. rl-a is deleted (background): its finalizer lets rl-x go to rl-b and
 *     writes the `smith.atlassian.com/former-bundle: rl-a` annotation.
 *     (rl-b acts as a ServiceAccount that may not write rl-x yet, so that
 *     rl-a's finalizer lets go before rl-b's hand-over: the order the fuzz
 *     seed 19412 reached with a kill; then the Role is widened.)
 *  4. rl-b takes rl-x (controller reference, by its apply): rl-x is rl-b's,
 *     Ready.
 *  5. The operator restarts (an upgrade) while rl-b is deleted with
 *     `--cascade=orphan`; kube-controller-manager orphans first (it takes
 *     rl-b's reference off rl-x and removes the `orphan` finalizer) before
 *     the finalizer's first pass, as docs/deletion.md allows.
 *
 * Expected (docs/safety.md, Bundle finalizer row: "orphan strips what the
 * operator wrote"; and the brief's standard: `--cascade=orphan` of a Bundle
 * deletes nothing it holds): rl-x and rl-e are kept. kube-controller-manager
 * keeps both (its collector ignores Events; it only orphans rl-x).
 *
 * What happens: rl-e is deleted. effectivePropagation (src/core/bundle/
 * finalize.ts:69-82) looks for the trace an orphan deletion leaves: an
 * object at the Bundle's coordinates, applied by the operator, controlled by
 * nothing and carrying no former-bundle mark. rl-x is the only such object,
 * but it still carries `former-bundle: rl-a` from step 3, although rl-b took
 * it: the taker removes the mark only in a take-hold patch, and
 * claimFor (src/core/bundle/take-holds.ts:80, `released` reads only the
 * former-bundle LABEL; :92 ('adopt') returns undefined for an uncontrolled
 * object without a stamp or label) leaves a let-go object (annotation only)
 * to the apply, which never removes the annotation. So the deletion reads as
 * background and the finalizer deletes rl-e, which rl-b still controls
 * (kube-controller-manager's collector ignores Events, so its orphaning never
 * took rl-b's reference off it).
 *
 * Fix direction: treat the former-bundle annotation as "released" in
 * claimFor (take-holds.ts:80) so adoption or any take-hold removes it, or
 * make effectivePropagation ignore a former-bundle mark on an object whose
 * mark names a Bundle other than one that could still take it (e.g. only
 * honour the mark while the object carries this Bundle's claim, or while no
 * apply of this Bundle has landed on it since the let-go).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, resourceType, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown, serviceAccountWithRules } from './orphan-traces.js';

const f = referenceFixture('rt19-lgmark');
const AUTHOR = 'rl-author';

/** rl-b's ServiceAccount: events and rl-e always; rl-x only once `withX`. */
async function author(withX: boolean): Promise<void> {
  await serviceAccountWithRules(f.env, f.ns, AUTHOR, [
    { apiGroups: [''], resources: ['configmaps', 'events'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch', 'delete'] },
    ...(withX ? [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update', 'patch', 'delete'] }] : []),
  ]);
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const coreEvent = (name: string, ns: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'rl-x', namespace: ns },
  reason: 'Test',
  message: 'hello',
  type: 'Normal',
  action: 'Testing',
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingComponent: 'rt19',
  reportingInstance: 'rt19-1',
});

it('an orphan deletion of a Bundle that took an object let go to it keeps what it holds', async () => {
  const { env, ns, t } = f;
  const ev = await resourceType(env, 'v1', 'Event');
  const a = await applyBundle(env, ns, 'rl-a', [{ name: 'x', object: configMap('rl-x') }]);
  await waitForReady(env, ns, 'rl-a');
  await applyBundle(env, ns, 'rl-b', [
    { name: 'x', object: configMap('rl-x') },
    { name: 'e', object: coreEvent('rl-e', ns) },
  ]);
  await waitFor('rl-b to apply rl-e and claim rl-x', async () => {
    const e = await env.client.tryGet(ev, ns, 'rl-e');
    const x = await env.client.tryGet(t.configMap, ns, 'rl-x');
    return e !== undefined && x !== undefined && (x.metadata.ownerReferences ?? []).length >= 2;
  });

  // rl-b now acts as a ServiceAccount that may not write rl-x: rl-a's finalizer lets go before rl-b can take it.
  await author(false);
  await env.client.patch(BUNDLE_RESOURCE_TYPE, ns, 'rl-b', { spec: { serviceAccountName: AUTHOR } }, 'merge', {
    fieldManager: 'test-user',
  });
  await sleep(3_000);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rl-a', { uid: a.metadata.uid ?? '' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'rl-a', { timeoutMs: 60_000 });
  const letGo = await env.client.get(t.configMap, ns, 'rl-x');
  console.log('rl-x let go:', JSON.stringify(letGo.metadata.ownerReferences), JSON.stringify(letGo.metadata.annotations));
  expect(letGo.metadata.annotations?.[Annotations.formerBundle]).toBe('rl-a');
  // The Role is widened: rl-b takes rl-x.
  await author(true);
  const b = await waitForReady(env, ns, 'rl-b');
  await waitFor('rl-b to control rl-x', async () => {
    const x = await env.client.get(t.configMap, ns, 'rl-x');
    return (x.metadata.ownerReferences ?? []).some((r) => r.uid === b.metadata.uid && r.controller === true);
  });
  await sleep(3_000);
  const x = await env.client.get(t.configMap, ns, 'rl-x');
  const e = await env.client.get(ev, ns, 'rl-e');
  console.log('rl-x before the orphan deletion:', JSON.stringify(x.metadata.ownerReferences), JSON.stringify(x.metadata.annotations));
  expect((e.metadata.ownerReferences ?? []).some((r) => r.uid === b.metadata.uid && r.controller === true)).toBe(true);

  // The operator restarts while rl-b is deleted with --cascade=orphan: the collector finishes first.
  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'rl-b', b.metadata.uid ?? '');
  await sleep(2_000);
  const xAfter = await env.client.tryGet(t.configMap, ns, 'rl-x');
  const eAfter = await env.client.tryGet(ev, ns, 'rl-e');
  console.log(
    'after: rl-x',
    JSON.stringify(xAfter?.metadata.annotations?.[Annotations.formerBundle]),
    'rl-e',
    eAfter === undefined ? 'GONE' : 'kept',
  );
  expectKept(xAfter, x.metadata.uid ?? '');
  expectKept(eAfter, e.metadata.uid ?? '');
}, 240_000);
