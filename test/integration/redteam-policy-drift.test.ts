/**
 * Red team: the Bundle's manifest says an object is kept (deletionPolicy
 * Orphan) or needs an approval (deletionPolicy Approve), and the live
 * object's annotation has drifted (taken off by another tool or by hand).
 * While the Bundle lives, the operator corrects the drift on its next pass.
 * While its finalizer holds (here: a CRD of the Bundle serves no version for
 * a while, a routine upgrade step), nothing corrects it, and when the
 * finalizer goes on it decides on the live annotations alone
 * (core/bundle/finalize.ts backgroundSteps -> planPrune -> decideSoftDelete on
 * the live object's annotations): both objects are deleted outright, the
 * Approve one with no approval and no countdown.
 *
 * The release proof binds the policy since v2 precisely so that "taking an
 * Approve policy off a released object does not make it deletable without an
 * approval" (core/softdelete/provenance.ts); for an object whose Bundle is
 * being deleted, taking it off does. Fails on the code this was written
 * against. (Whether the finalizer should read the policy from the Bundle's
 * manifest as well as the live object, the stricter winning, is the fix's
 * decision; this test pins the outcome: kept.)
 */
import { Annotations } from '../../src/api/names.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { conditionOf, expectKept, kubectl, uniqueName, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt-drift');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The gadgets' one version, v1, served or not (an upgrade step that serves no version for a while). */
async function setServed(group: string, served: boolean): Promise<void> {
  await setGadgetVersions(f.env, group, [{ name: 'v1', served, storage: true }]);
  await gadgetsServed(f.env, group, 'v1', served);
}

it('a policy taken off a listed object while its Bundle is being deleted does not make the finalizer delete it', async () => {
  const { env, ns, t } = f;
  const group = `${uniqueName('pd')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1', served: true, storage: true }]);
  await applyBundle(env, ns, 'drift', [
    { name: 'keep', object: configMap('drift-keep', { a: 'b' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'approve', object: configMap('drift-approve', { a: 'b' }, { [Annotations.deletionPolicy]: 'Approve' }) },
    { name: 'g', object: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'drift-g' }, spec: { size: 1 } } },
  ]);
  await waitForReady(env, ns, 'drift');
  const uids = {
    keep: (await env.client.get(t.configMap, ns, 'drift-keep')).metadata.uid,
    approve: (await env.client.get(t.configMap, ns, 'drift-approve')).metadata.uid,
  };

  await setServed(group, false);
  await kubectl(['delete', 'bundle', 'drift', '-n', ns, '--wait=false']);
  await waitFor(
    'the finalizer to hold',
    async () => conditionOf(await getBundle(env, ns, 'drift'), 'Error')?.message?.includes('cannot be seen') === true,
  );
  // Another tool's apply (or a person) takes the policy annotation off both.
  await kubectl(['annotate', 'configmap', 'drift-keep', 'drift-approve', '-n', ns, `${Annotations.deletionPolicy}-`]);
  await setServed(group, true);

  await waitFor('Bundle drift to be gone', async () => (await getBundle(env, ns, 'drift')) === undefined, { timeoutMs: 60_000 });
  await sleep(3_000);
  // The Bundle said Orphan: kept for good. The Bundle said Approve: kept until approved.
  expectKept(await env.client.tryGet(t.configMap, ns, 'drift-keep'), uids.keep);
  expectKept(await env.client.tryGet(t.configMap, ns, 'drift-approve'), uids.approve);
});
