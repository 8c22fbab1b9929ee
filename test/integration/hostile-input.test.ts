/**
 * Issue 12: hostile Bundles on the real apiserver. Each is answered by a
 * clear condition, deletes nothing, and leaves the operator serving the
 * namespace's other Bundles.
 */
import { conditionOf, waitFor } from './harness.js';
import { applyBundle, configMap, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('hostile');

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 'x' };
  for (let i = 1; i < depth; i++) v = { n: v };
  return v;
}

it('an object nested 2,000 levels deep: a clear Error condition naming the resource, nothing applied, other Bundles still reconcile', async () => {
  // A neighbour that lives through it, with an object that must stay.
  await applyBundle(f.env, f.ns, 'neighbour', [{ name: 'a', object: configMap('hostile-neighbour') }]);
  await waitForReady(f.env, f.ns, 'neighbour');
  const kept = await f.env.client.get(f.t.configMap, f.ns, 'hostile-neighbour');

  const deep = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hostile-deep' }, spec: nested(2_000) };
  await applyBundle(f.env, f.ns, 'deep', [
    { name: 'ok', object: configMap('hostile-ok') },
    { name: 'deep', object: deep },
  ]);
  const b = await waitForBundle(f.env, f.ns, 'deep', 'an Error condition', (x) => conditionOf(x, 'Error')?.status === 'True');
  expect(conditionOf(b, 'Error')?.message).toContain('resource "deep": object nests deeper than 100 levels');
  // An invalid spec applies nothing and deletes nothing.
  expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'hostile-ok')).toBeUndefined();

  // The operator still serves the namespace: the neighbour takes an edit, its object is the same.
  await applyBundle(f.env, f.ns, 'neighbour', [{ name: 'a', object: configMap('hostile-neighbour', { key: 'edited' }) }]);
  const after = await waitFor("the neighbour's edit to be applied", async () => {
    const o = await f.env.client.get(f.t.configMap, f.ns, 'hostile-neighbour');
    return (o.data as Record<string, string> | undefined)?.['key'] === 'edited' ? o : undefined;
  });
  expect(after.metadata.uid).toBe(kept.metadata.uid);
  expect(after.metadata.deletionTimestamp).toBeUndefined();
});
