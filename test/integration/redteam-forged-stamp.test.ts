/**
 * Red team: a deletionTimestamp (or deletionApproved) written by hand (or restored from an exported
 * manifest or a backup) on an object its Bundle still lists is trusted as
 * the countdown's start as soon as the object stops being listed, when no pass
 * ran in between to remove it (the operator restarting, as in an upgrade).
 *
 *  a. The Bundle is deleted: the finalizer releases the object with the
 *     hand-written stamp, signs it (release-proof), and the sweeper deletes it
 *     at once, though it carries deletionDelay 1h and its countdown starts now.
 *  b. The object leaves the Bundle's spec: the prune reads the stamp as an
 *     expired countdown and deletes it at once.
 *  d. The same for an approval: a deletionApproved dated in the future, written
 *     on a listed Approve object while the operator is down, approves the
 *     countdown that starts when the object leaves the spec, and the object is
 *     deleted at once. docs/deletion.md, Deletion policies: "an approval ... written
 *     before this one began, does not approve it".
 *  c. As a, with no restart: the finalizer holds (a CRD of the Bundle serves
 *     no version for a while, a routine upgrade step), nothing removes a stamp
 *     written meanwhile on a ConfigMap of the Bundle, and once the CRD serves
 *     again the finalizer signs it into the release.
 *
 * docs/deletion.md, Soft deletes: "A stamp written by hand on an object still in the spec is
 * removed", and the sweeper keeps "a hand-written label, stamp or copied
 * proof". Here the operator removes nothing and signs the forged stamp.
 * Both fail on the code this was written against (the object is gone within
 * a second of the operator's start).
 */
import { Annotations } from '../../src/api/names.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { conditionOf, expectKept, kubectl, uniqueName, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('rt-forged');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** An hour and more before now: any stamp this old with a 1h delay reads as expired. */
const OLD_STAMP = '2020-01-01T00:00:00Z';

it('a. a hand-written stamp on a listed object is not signed into a release when its Bundle is deleted', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'forged-a', [
    { name: 'x', object: configMap('forged-a-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }) },
    { name: 'y', object: configMap('forged-a-y') },
  ]);
  await waitForReady(env, ns, 'forged-a');
  const uid = (await env.client.get(t.configMap, ns, 'forged-a-x')).metadata.uid;

  // The operator is down (an upgrade); someone writes a stamp on the listed object, and the Bundle is deleted.
  await f.op.stop();
  await kubectl(['annotate', 'configmap', 'forged-a-x', '-n', ns, `${Annotations.deletionTimestamp}=${OLD_STAMP}`]);
  await kubectl(['delete', 'bundle', 'forged-a', '-n', ns, '--wait=false']);
  f.op = await startOperator({ namespace: ns });

  await waitFor('Bundle forged-a to be gone', async () => (await getBundle(env, ns, 'forged-a')) === undefined, { timeoutMs: 60_000 });
  await sleep(3_000);
  // Released with a countdown that starts now (1h): kept.
  expectKept(await env.client.tryGet(t.configMap, ns, 'forged-a-x'), uid);
});

it('b. a hand-written stamp on a listed object is not taken for an expired countdown when the object leaves the spec', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'forged-b', [
    { name: 'x', object: configMap('forged-b-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }) },
    { name: 'y', object: configMap('forged-b-y') },
  ]);
  await waitForReady(env, ns, 'forged-b');
  const uid = (await env.client.get(t.configMap, ns, 'forged-b-x')).metadata.uid;

  await f.op.stop();
  await kubectl(['annotate', 'configmap', 'forged-b-x', '-n', ns, `${Annotations.deletionTimestamp}=${OLD_STAMP}`]);
  await applyBundle(env, ns, 'forged-b', [{ name: 'y', object: configMap('forged-b-y') }]);
  f.op = await startOperator({ namespace: ns });

  await sleep(5_000);
  // Left the spec now, with deletionDelay 1h: counting down, kept.
  expectKept(await env.client.tryGet(t.configMap, ns, 'forged-b-x'), uid);
});

/** The gadgets' one version, v1, served or not (an upgrade step that serves no version for a while). */
async function setServed(group: string, served: boolean): Promise<void> {
  await setGadgetVersions(f.env, group, [{ name: 'v1', served, storage: true }]);
  await gadgetsServed(f.env, group, 'v1', served);
}

it('c. a hand-written stamp written while the finalizer holds is not signed into a release when it goes on', async () => {
  const { env, ns, t } = f;
  const group = `${uniqueName('fs')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1', served: true, storage: true }]);
  await applyBundle(env, ns, 'forged-c', [
    { name: 'x', object: configMap('forged-c-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }) },
    { name: 'g', object: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'forged-c-g' }, spec: { size: 1 } } },
  ]);
  await waitForReady(env, ns, 'forged-c');
  const uid = (await env.client.get(t.configMap, ns, 'forged-c-x')).metadata.uid;

  // An upgrade step: the CRD serves no version for a while. The Bundle is deleted meanwhile: its finalizer holds.
  await setServed(group, false);
  await kubectl(['delete', 'bundle', 'forged-c', '-n', ns, '--wait=false']);
  await waitFor('the finalizer to hold', async () => {
    const b = await getBundle(env, ns, 'forged-c');
    return conditionOf(b, 'Error')?.message?.includes('cannot be seen') === true;
  });
  await kubectl(['annotate', 'configmap', 'forged-c-x', '-n', ns, `${Annotations.deletionTimestamp}=${OLD_STAMP}`]);
  await setServed(group, true);

  await waitFor('Bundle forged-c to be gone', async () => (await getBundle(env, ns, 'forged-c')) === undefined, { timeoutMs: 60_000 });
  await sleep(3_000);
  // Released with a countdown that starts now (1h): kept.
  expectKept(await env.client.tryGet(t.configMap, ns, 'forged-c-x'), uid);
});

it('d. an approval written before the countdown began (dated in the future) does not approve it', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'forged-d', [
    { name: 'x', object: configMap('forged-d-x', { a: 'b' }, { [Annotations.deletionPolicy]: 'Approve' }) },
    { name: 'y', object: configMap('forged-d-y') },
  ]);
  await waitForReady(env, ns, 'forged-d');
  const uid = (await env.client.get(t.configMap, ns, 'forged-d-x')).metadata.uid;

  await f.op.stop();
  await kubectl(['annotate', 'configmap', 'forged-d-x', '-n', ns, `${Annotations.deletionApproved}=2099-01-01T00:00:00Z`]);
  await applyBundle(env, ns, 'forged-d', [{ name: 'y', object: configMap('forged-d-y') }]);
  f.op = await startOperator({ namespace: ns });

  await sleep(5_000);
  // Its countdown began after the approval was written: it waits for an approval of its own.
  expectKept(await env.client.tryGet(t.configMap, ns, 'forged-d-x'), uid);
});
