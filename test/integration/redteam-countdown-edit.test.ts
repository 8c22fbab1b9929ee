/**
 * Red team (round three, second helper): an object's deletion rules are
 * annotations anyone who may patch it can write, and the operator took the
 * live ones as they stood.
 *
 *  a. An object counting down (deletionDelay 1h) has its delay shortened by
 *     hand to 1s: it was deleted within seconds. And an Approve object
 *     waiting for its approval has its policy overwritten with Delete: deleted
 *     at once, unapproved.
 *  b. While its Bundle's finalizer holds (a CRD of the Bundle serves no
 *     version for a while, a routine upgrade step), `deletionPolicy: Delete`
 *     written over the manifest's Orphan or Approve, or a delay shortened
 *     below the manifest's: each was deleted once the finalizer went on.
 *
 * Now a countdown's rules are sealed into its stamp's proof and the
 * finalizer reads the stricter of the live object's rules and its
 * manifest's: an edit by hand can put a deletion off, never bring it
 * forward. Both fail on the code before (f745f9d).
 *
 *  c. (found while fixing a and b) While the operator is down, another tool
 *     writes `deletionDelay: 0s` on listed objects (one that declares no
 *     delay of its own, under the Bundle's default of 1h; one whose manifest
 *     says 2h) and `deletionPolicy: Delete` over one whose manifest says
 *     Approve; the Bundle then drops them. The prune read the live rules:
 *     all three deleted at once. Now the manifest's rules are sealed onto the
 *     applied object (`smith.atlassian.com/declared-rules`) and, with the
 *     Bundle's defaults, are a floor.
 */
import type { PendingDeletion } from '../../src/api/bundle-status.js';
import { Annotations } from '../../src/api/names.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { conditionOf, expectKept, kubectl, uniqueName, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';

const f = operatorFixture('rt-edit');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HOUR = 3_600_000;

it("a. a countdown's delay shortened by hand, or its Approve policy overwritten with Delete, does not end it early", async () => {
  const { env, ns, t } = f;
  const objects = {
    later: configMap('edit-later', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }),
    approve: configMap('edit-approve', { a: 'b' }, { [Annotations.deletionPolicy]: 'Approve' }),
    stays: configMap('edit-stays'),
  };
  await applyBundle(env, ns, 'edit', [
    { name: 'later', object: objects.later },
    { name: 'approve', object: objects.approve },
    { name: 'stays', object: objects.stays },
  ]);
  await waitForReady(env, ns, 'edit');
  const uids = {
    later: (await env.client.get(t.configMap, ns, 'edit-later')).metadata.uid,
    approve: (await env.client.get(t.configMap, ns, 'edit-approve')).metadata.uid,
  };

  await applyBundle(env, ns, 'edit', [{ name: 'stays', object: objects.stays }]);
  const stampOf = async (name: string) =>
    (await env.client.get(t.configMap, ns, name)).metadata.annotations?.[Annotations.deletionTimestamp];
  await waitFor(
    'both countdowns to start',
    async () => (await stampOf('edit-later')) !== undefined && (await stampOf('edit-approve')) !== undefined,
  );
  const stamp = await stampOf('edit-later');

  await kubectl(['annotate', '--overwrite', 'configmap', 'edit-later', '-n', ns, `${Annotations.deletionDelay}=1s`]);
  await kubectl(['annotate', '--overwrite', 'configmap', 'edit-approve', '-n', ns, `${Annotations.deletionPolicy}=Delete`]);
  await sleep(6_000);

  expectKept(await env.client.tryGet(t.configMap, ns, 'edit-later'), uids.later);
  expectKept(await env.client.tryGet(t.configMap, ns, 'edit-approve'), uids.approve);
  // The Bundle still reports the countdown's end an hour after its stamp, and the approval it waits for.
  const pending =
    ((await getBundle(env, ns, 'edit'))?.status as { pendingDeletions?: PendingDeletion[] } | undefined)?.pendingDeletions ?? [];
  expect(pending.find((p) => p.name === 'edit-later')).toMatchObject({
    deleteAfter: new Date(Date.parse(stamp ?? '') + HOUR).toISOString(),
  });
  expect(pending).toContainEqual(expect.objectContaining({ name: 'edit-approve', waitingFor: 'Approval' }));
});

it("b. while the finalizer holds, Delete written over the manifest's Orphan or Approve, or a shorter delay, does not make it delete them", async () => {
  const { env, ns, t } = f;
  const group = `${uniqueName('ce')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1', served: true, storage: true }]);
  await applyBundle(env, ns, 'held', [
    { name: 'keep', object: configMap('held-keep', { a: 'b' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'approve', object: configMap('held-approve', { a: 'b' }, { [Annotations.deletionPolicy]: 'Approve' }) },
    { name: 'later', object: configMap('held-later', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }) },
    { name: 'g', object: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'held-g' }, spec: { size: 1 } } },
  ]);
  await waitForReady(env, ns, 'held');
  const names = ['held-keep', 'held-approve', 'held-later'] as const;
  const uids = new Map<string, string>();
  for (const name of names) uids.set(name, (await env.client.get(t.configMap, ns, name)).metadata.uid);

  await setGadgetVersions(env, group, [{ name: 'v1', served: false, storage: true }]);
  await gadgetsServed(env, group, 'v1', false);
  await kubectl(['delete', 'bundle', 'held', '-n', ns, '--wait=false']);
  await waitFor(
    'the finalizer to hold',
    async () => conditionOf(await getBundle(env, ns, 'held'), 'Error')?.message?.includes('cannot be seen') === true,
  );
  await kubectl(['annotate', '--overwrite', 'configmap', 'held-keep', 'held-approve', '-n', ns, `${Annotations.deletionPolicy}=Delete`]);
  await kubectl(['annotate', '--overwrite', 'configmap', 'held-later', '-n', ns, `${Annotations.deletionDelay}=1s`]);
  await setGadgetVersions(env, group, [{ name: 'v1', served: true, storage: true }]);
  await gadgetsServed(env, group, 'v1', true);

  await waitFor('Bundle held to be gone', async () => (await getBundle(env, ns, 'held')) === undefined, { timeoutMs: 60_000 });
  await sleep(4_000);
  for (const name of names) expectKept(await env.client.tryGet(t.configMap, ns, name), uids.get(name) ?? '');
  // Released carrying the manifest's rules: the sweeper reads only the object.
  const later = await env.client.get(t.configMap, ns, 'held-later');
  expect(later.metadata.annotations?.[Annotations.deletionDelay]).toBe('1h');
  expect((await env.client.get(t.configMap, ns, 'held-approve')).metadata.annotations?.[Annotations.deletionPolicy]).toBe('Approve');
  expect((await env.client.get(t.configMap, ns, 'held-keep')).metadata.annotations?.[Annotations.deletionPolicy]).toBe('Orphan');
});

it('c. deletion rules written or overwritten by hand on a listed object while the operator is down do not bring its deletion forward once it leaves the Bundle', async () => {
  const { env, ns, t } = f;
  // The Bundle's default is a 1h delay; "plain" declares nothing of its own, "later" its own 2h, "approve" Approve.
  const manifest = (names: string[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'early', namespace: ns },
    spec: {
      deletionDefaults: { deletionDelay: '1h' },
      resources: names.map((n) => ({
        name: n,
        spec: {
          object: configMap(
            `early-${n}`,
            { a: 'b' },
            n === 'later' ? { [Annotations.deletionDelay]: '2h' } : n === 'approve' ? { [Annotations.deletionPolicy]: 'Approve' } : {},
          ),
        },
      })),
    },
  });
  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(['plain', 'later', 'approve', 'stays']), {
    fieldManager: 'test-user',
    force: true,
  });
  await waitForReady(env, ns, 'early');
  const names = ['early-plain', 'early-later', 'early-approve'];
  const uids = new Map<string, string>();
  for (const name of names) uids.set(name, (await env.client.get(t.configMap, ns, name)).metadata.uid);

  // The operator is down (an upgrade); another tool writes rules on the listed objects, and the Bundle drops them.
  await f.op.stop();
  await kubectl(['annotate', '--overwrite', 'configmap', 'early-plain', 'early-later', '-n', ns, `${Annotations.deletionDelay}=0s`]);
  await kubectl(['annotate', '--overwrite', 'configmap', 'early-approve', '-n', ns, `${Annotations.deletionPolicy}=Delete`]);
  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(['stays']), { fieldManager: 'test-user', force: true });
  f.op = await startOperator({ namespace: ns });

  await waitFor('the countdowns to start', async () => {
    const pending =
      ((await getBundle(env, ns, 'early'))?.status as { pendingDeletions?: PendingDeletion[] } | undefined)?.pendingDeletions ?? [];
    return pending.length === 3;
  });
  await sleep(4_000);
  for (const name of names) expectKept(await env.client.tryGet(t.configMap, ns, name), uids.get(name) ?? '');
  const pending =
    ((await getBundle(env, ns, 'early'))?.status as { pendingDeletions?: PendingDeletion[] } | undefined)?.pendingDeletions ?? [];
  const after = (name: string) => {
    const p = pending.find((x) => x.name === name);
    return p === undefined ? undefined : Date.parse(p.deleteAfter) - Date.parse(p.deletionTimestamp);
  };
  expect(after('early-plain')).toBe(HOUR);
  expect(after('early-later')).toBe(2 * HOUR);
  expect(pending.find((x) => x.name === 'early-approve')?.waitingFor).toBe('Delay');
});
