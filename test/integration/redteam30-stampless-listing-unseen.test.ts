/**
 * Red team 30: a listing records the countdown cancelled only when the
 * object carries a stamp at the moment it is read (recordListingCancel,
 * cancelledByListing), and the sweep's own cancel signs only a release
 * whose proof checks (cancelCountdown: `proofs.proven`). Someone who may only
 * patch the object takes its stamp off while a Bundle lists it at a version
 * the server no longer serves (a CRD upgrade: no take-hold, so no `ended`
 * either): neither writer records anything, the record keeps `signed P1`.
 * Once the Bundle drops it, the stamp written back is the recorded release,
 * and the object is deleted at once on the countdown the listing cancelled.
 *
 * Steps (the patch-only user may get/patch Gadgets of the namespace,
 * nothing in the operator's namespace `default`):
 *  1. Bundle `first` lists Gadget g (deletionDelay 20s) at v1alpha1 and is
 *     deleted: released with stamp S1 and proof P1, recorded `signed P1`.
 *     The CRD moves to v1 and stops serving v1alpha1.
 *  2. The user takes the stamp off g (the label, the former-bundle
 *     annotation and the proof stay).
 *  3. Bundle `second` lists g at v1alpha1 (and g-other): it cannot take
 *     hold of g. Past S1 + 20s g is kept (listed).
 *  4. `second` drops g.
 *  5. The user writes S1 back.
 *
 * Expected: g is not deleted on S1: docs/safety.md soft-delete expiry,
 * "listing it again cancels the countdown at once"; the Released-object
 * sweeper row: "cancels the countdown of one that a live Bundle lists but
 * cannot take hold of: at once where it lists it at a version the server no
 * longer serves ... a live Bundle's listing records the countdown cancelled
 * (its stamp reads as none, and the sweep starts a new countdown ... when no
 * Bundle lists it)"; "Edits by hand can put a deletion off, never bring it
 * forward". At worst a new countdown from the write-back (20s), never S1's
 * end at once. No known limit after the table covers it.
 *
 * What happens: with no stamp on g, ReleaseRecords.recordListingCancel
 * (controllers/softdelete/release-records.ts, from listed-releases.ts and
 * relisted-release.ts sawListed) returns before writing (it needs a stamp),
 * and RelistedReleases.cancelCountdown returns 'forget' since P1 does not
 * check over no stamp; there is no take-hold to end the release. The record
 * stays `signed P1`. Written back after the drop, S1 + P1 are the recorded
 * release: readWithRecord keeps S1, the proof checks, and deleteIfStillDue
 * (released-sweeper.ts) deletes g at once.
 *
 * Fixed in 2a86bcd: a listing cancels the recorded signing whatever the
 * object shows; every take-hold but a claim reference ends a recorded
 * release; a release ends when the object is there without the
 * former-bundle label ("What happens" above is the code before that).
 */
import { Annotations } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import type { ResourceType } from '../../src/kube/types.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { expectKept, kubeconfigPath, resourceType, run, uniqueName, waitFor } from './harness.js';
import { applyBundle, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { sleep } from './release-writeback.js';

const f = operatorFixture('rt30sll', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
}));

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a released object listed at an unserved version while its stamp was off: the stamp written back after the drop is deleted at once', async () => {
  const { env, ns } = f;
  const group = `${uniqueName('fz')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = (name: string): Record<string, unknown> => ({
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name, annotations: { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` } },
    spec: { size: 1 },
  });

  const user = uniqueName('patcher');
  const role = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'Role');
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding');
  await env.client.create(role, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: user, namespace: ns },
    rules: [{ apiGroups: [group], resources: ['gadgets'], verbs: ['get', 'patch'] }],
  });
  await env.client.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: user, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  patcher = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()), { impersonateUser: user, impersonateGroups: [] });

  // 1. Released by `first` (S1, P1), then the upgrade.
  await applyBundle(env, ns, 'first', [{ name: 'f', object: gadget('g') }]);
  await waitForReady(env, ns, 'first');
  const r = await run('kubectl', ['delete', 'bundle', 'first', '-n', ns, '--wait=false']);
  if (r.code !== 0) throw new Error(r.stderr);
  await waitFor('Bundle first to be gone', async () => (await getBundle(env, ns, 'first')) === undefined, { timeoutMs: 60_000 });
  await setGadgetVersions(env, group, [
    { name: 'v1alpha1', served: false, storage: false },
    { name: 'v1', served: true, storage: true },
  ]);
  const v1 = (await gadgetsServed(env, group, 'v1', true)) as ResourceType;
  await gadgetsServed(env, group, 'v1alpha1', false);
  const released = await env.client.get(v1, ns, 'g');
  const uid = released.metadata.uid ?? '';
  const s1 = released.metadata.annotations?.[Annotations.deletionTimestamp];
  expect(s1).toBeDefined();
  expect(released.metadata.annotations?.[Annotations.releaseProof]).toBeDefined();

  // 2. The user takes the stamp off.
  await patcher.patch(v1, ns, 'g', { metadata: { annotations: { [Annotations.deletionTimestamp]: null } } }, 'merge');
  await sleep(2_000);

  // 3. Listed again at v1alpha1 (unserved); past S1 + delay while listed: kept.
  await applyBundle(env, ns, 'second', [
    { name: 'f', object: gadget('g') },
    { name: 'o', object: gadget('g-other') },
  ]);
  await sleep(Math.max(5_000, Date.parse(s1 ?? '') + DELAY_MS + 2_000 - Date.now()));
  expectKept(await env.client.tryGet(v1, ns, 'g'), uid);
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), 'default', `bundlesmith-release-key-${uid}`);
  console.log(`release record while listed: ${JSON.stringify((record as { data?: unknown } | undefined)?.data)} (S1 ${s1})`);

  // 4. Dropped.
  await applyBundle(env, ns, 'second', [{ name: 'o', object: gadget('g-other') }]);
  await sleep(3_000);
  expectKept(await env.client.tryGet(v1, ns, 'g'), uid);

  // 5. The user writes S1 back: at worst a new countdown (20 s), never S1's end at once.
  await patcher.patch(v1, ns, 'g', { metadata: { annotations: { [Annotations.deletionTimestamp]: s1 } } }, 'merge');
  const wroteAt = Date.now();
  while (Date.now() - wroteAt < DELAY_MS - 5_000) {
    const o = await env.client.tryGet(v1, ns, 'g');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined) {
      console.log(`g deleted ${Date.now() - wroteAt} ms after the write-back of S1 ${s1}`);
      break;
    }
    await sleep(500);
  }
  expectKept(await env.client.tryGet(v1, ns, 'g'), uid);
}, 240_000);
