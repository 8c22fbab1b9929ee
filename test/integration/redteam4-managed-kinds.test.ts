/**
 * Red team round four (redteam4): the kind inventory is writable by anyone
 * who may write the Bundle's status.
 *
 * What a user does: a Bundle lists a ConfigMap and a Secret with
 * `deletionDelay: 1h`. The Secret leaves the Bundle: its 1h countdown runs
 * (the Bundle still controls it). Then something writes the Bundle's status
 * (`kubectl edit --subresource=status`, a backup restore, another
 * controller's read-modify-write of status) with a `status.managedKinds`
 * that no longer names `Secret` (here: `["ConfigMap"]`). Later the Bundle is
 * deleted (background, the default).
 *
 * What happens: the operator never adds the kind back (managedKinds() in
 * src/core/bundle/kind-inventory.ts:130-135 starts from the recorded entries
 * and the spec's kinds; a kind the caches show the Bundle still controls
 * only keeps a recorded entry, it never restores a lost one). The finalizer
 * lists only status.managedKinds and the spec's kinds
 * (src/controllers/bundle/finalize.ts:191, kindsOfBundle; its types only), does not see
 * the Secret, finds nothing to do and removes the finalizer; the garbage
 * collector (ours, or kube-controller-manager's) then deletes the Secret (its
 * only owner, the Bundle, is gone):
 * a running 1h countdown ends at once. The README's guarantee ("the lists
 * cover every kind the Bundle may control, because a pass records a kind in
 * status.managedKinds before it writes any object of that kind") assumes
 * nobody else writes status.
 *
 * Suggested fix: the inventory is evidence only that a kind *may* hold
 * objects, never that it does not: re-add every kind the caches show the
 * Bundle controls (stillRelevant) and every kind of status.pendingDeletions
 * on each pass; in the finalizer also list the kinds of pendingDeletions and
 * of every cached object referencing the Bundle (or keep the inventory
 * somewhere only the operator writes, e.g. an annotation guarded by the
 * release key, or a ConfigMap in the operator's namespace).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, kubectl, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';

// With this operator's collector (--gc=cluster); kube-controller-manager's does the same: the Secret's only owner is gone.
const f = operatorFixture('rt4-mk', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
}));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const secret = (name: string, annotations: Record<string, string>): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, annotations },
  type: 'Opaque',
  data: { a: Buffer.from('b').toString('base64') },
});

it("a 1h countdown survives its Bundle's deletion after status.managedKinds was overwritten", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'mk', [
    { name: 'c', object: configMap('mk-c') },
    { name: 'later', object: secret('mk-later', { [Annotations.deletionDelay]: '1h' }) },
  ]);
  await waitForReady(env, ns, 'mk');
  const uid = (await env.client.get(t.secret, ns, 'mk-later')).metadata.uid;

  // The Secret leaves the Bundle: a 1h countdown starts.
  await applyBundle(env, ns, 'mk', [{ name: 'c', object: configMap('mk-c') }]);
  await waitFor(
    'the countdown to start',
    async () => (await env.client.get(t.secret, ns, 'mk-later')).metadata.annotations?.[Annotations.deletionTimestamp] !== undefined,
  );
  const before = (await getBundle(env, ns, 'mk'))?.status as { managedKinds?: string[] } | undefined;
  expect(before?.managedKinds).toContain('Secret');

  // Someone writes the Bundle's status (kubectl edit --subresource=status, a restore, another controller).
  await kubectl([
    'patch',
    'bundle',
    'mk',
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { managedKinds: ['ConfigMap'] } }),
  ]);
  await sleep(3_000);

  const bundle = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'mk');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'mk', { uid: bundle.metadata.uid, propagationPolicy: 'Background' });
  await waitFor('Bundle mk to be gone', async () => (await getBundle(env, ns, 'mk')) === undefined, { timeoutMs: 30_000 });
  await sleep(8_000);
  // Its countdown had an hour to run: released, kept.
  expectKept(await env.client.tryGet(t.secret, ns, 'mk-later'), uid);
});
