/**
 * Issue 10, status on every path: exits of a Bundle pass that are not a
 * full reconcile still leave a true status on the real apiserver. A Bundle
 * stuck in its finalizer (a delete an admission policy refuses) says why,
 * keeps the refused object and goes once the delete is allowed; the pass
 * that adds the finalizer says so before the first full pass.
 */
import { API_VERSION, Finalizers } from '../../src/api/names.js';
import { isForbidden, isNotFound } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/types.js';
import { BUNDLE_RESOURCE_TYPE, applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { conditionOf, expectKept, uidOf, waitFor, waitForGone } from './harness.js';
import { operatorFixture } from './operator.js';
import { refuseConfigMapOperation } from './refuse-operation.js';

const f = operatorFixture('bstatus');

const refuseDeleteOf = (name: string): Promise<() => Promise<void>> =>
  refuseConfigMapOperation(f.env, f.ns, name, 'DELETE', 'kept by the test');

/** Whether a dry-run delete of the ConfigMap is refused now (the policy takes effect, or stops, a little after it is written). */
async function deleteRefused(name: string, uid: string): Promise<boolean> {
  try {
    await f.env.client.delete(f.t.configMap, f.ns, name, { uid, dryRun: true });
    return false;
  } catch (err) {
    if (isForbidden(err)) return true;
    throw err;
  }
}

it('a Bundle whose finalizer cannot delete an object says why (Error, Ready=False BeingDeleted), keeps it, and goes once the delete is allowed', async () => {
  await applyBundle(f.env, f.ns, 'stuck', [
    { name: 'held', object: configMap('held') },
    { name: 'free', object: configMap('free') },
  ]);
  const ready = await waitForReady(f.env, f.ns, 'stuck');
  const heldUid = await uidOf(f.env, f.t.configMap, f.ns, 'held');
  const allow = await refuseDeleteOf('held');
  try {
    await waitFor('the policy to refuse deleting ConfigMap held', () => deleteRefused('held', heldUid));
    await f.env.client.delete(BUNDLE_RESOURCE_TYPE, f.ns, 'stuck', { uid: ready.metadata.uid, propagationPolicy: 'Background' });

    const stuck = await waitFor('the Bundle being deleted to say which step failed', async () => {
      const b = await getBundle(f.env, f.ns, 'stuck');
      const error = conditionOf(b, 'Error');
      return b?.metadata.deletionTimestamp !== undefined &&
        error?.status === 'True' &&
        error.message?.includes('delete ConfigMap held failed') === true
        ? b
        : undefined;
    });
    expect(conditionOf(stuck, 'Error')?.message).toContain('kept by the test');
    expect(conditionOf(stuck, 'Ready')).toMatchObject({ status: 'False', reason: 'BeingDeleted' });
    expect(stuck.metadata.finalizers).toContain(Finalizers.deleteResources);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held'), heldUid);
    await waitForGone(f.env, f.t.configMap, f.ns, 'free');
  } finally {
    await allow();
  }

  await waitFor('the policy to be gone', async () => !(await deleteRefused('held', heldUid)));
  // The retry after a failure backs off; an event on an object the Bundle controls brings it back at once.
  // (It may be gone already: a retry came first.)
  await f.env.client
    .patch(f.t.configMap, f.ns, 'held', { metadata: { annotations: { 'test/wake': 'now' } } }, 'merge')
    .catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  await waitForGone(f.env, BUNDLE_RESOURCE_TYPE, f.ns, 'stuck');
  await waitForGone(f.env, f.t.configMap, f.ns, 'held');
});

it('the pass that adds the finalizer leaves a status saying so (InProgress=True), before the first full pass', async () => {
  const { resourceVersion } = await f.env.client.list(BUNDLE_RESOURCE_TYPE, f.ns);
  const seen: KubeObject[] = [];
  const abort = new AbortController();
  const watching = f.env.client
    .watch(BUNDLE_RESOURCE_TYPE, f.ns, resourceVersion, { signal: abort.signal }, (e) => {
      if (e.object.metadata.name === 'fresh') seen.push(e.object);
    })
    .catch(() => undefined); // aborted below
  try {
    await applyBundle(f.env, f.ns, 'fresh', [{ name: 'a', object: configMap('fresh-a') }]);
    await waitForReady(f.env, f.ns, 'fresh');
    await waitFor('the watch to show the Bundle ready', () => seen.some((b) => conditionOf(b, 'Ready')?.status === 'True'));
  } finally {
    abort.abort();
    await watching;
  }
  // Stored, before the operator wrote anything: the CRD's default, which kstatus reads as in progress.
  expect(seen[0]?.status).toEqual({ observedGeneration: 0 });
  const firstWithStatus = seen.find((b) => (b.status as { conditions?: unknown } | undefined)?.conditions !== undefined);
  expect(firstWithStatus?.metadata.finalizers).toContain(Finalizers.deleteResources);
  expect(conditionOf(firstWithStatus, 'InProgress')).toMatchObject({
    status: 'True',
    reason: 'Working',
    message: 'finalizer added; reconciling',
  });
  expect(conditionOf(firstWithStatus, 'Ready')?.status).toBe('False');
  expect(conditionOf(firstWithStatus, 'Reconciling')).toMatchObject({ status: 'True', message: 'finalizer added; reconciling' });
  expect((firstWithStatus?.status as { observedGeneration?: number }).observedGeneration).toBe(0);
  expect(firstWithStatus?.apiVersion).toBe(API_VERSION);
});
