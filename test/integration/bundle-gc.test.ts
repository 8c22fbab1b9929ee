/**
 * A Bundle deleted with foreground propagation: the operator steps aside and
 * the built-in garbage collector carries out the cascade (no
 * kube-controller-manager runs here), then the Bundle goes.
 */
import { Finalizers } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/index.js';
import { connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, getBundle, types, waitForReady } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';

let env: TestEnv;
let ns: string;
let op: InProcessOperator;
let t: Awaited<ReturnType<typeof types>>;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'bgc');
  t = await types(env);
  op = await startOperator({ namespace: ns, garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'bundles', clock, namespaces: [ns], workers: 4 }) });
});
afterAll(async () => {
  await op.stop();
  env.close();
});

it('foreground deletion of a Bundle: dependents first, by the garbage collector, then the Bundle', async () => {
  await applyBundle(env, ns, 'fg', [
    { name: 'base', object: configMap('fg-base') },
    { name: 'top', references: [{ resource: 'base' }], object: configMap('fg-top', { a: 'b' }, { 'smith.atlassian.com/deletionDelay': '1h' }) },
  ]);
  await waitForReady(env, ns, 'fg');
  expect((await run('kubectl', ['delete', 'bundle', 'fg', '-n', ns, '--cascade=foreground', '--wait=false'])).code).toBe(0);
  // While dependents exist the Bundle waits with the foregroundDeletion finalizer; ours is gone at once.
  const waiting = await getBundle(env, ns, 'fg');
  if (waiting) expect(waiting.metadata.finalizers ?? []).toContain(Finalizers.foregroundDeletion);
  await waitFor('the Bundle to be gone', async () => (await getBundle(env, ns, 'fg')) === undefined);
  // Foreground means everything goes, a deletionDelay included: the user asked for a full cascade.
  expect(await env.client.tryGet(t.configMap, ns, 'fg-base')).toBeUndefined();
  expect(await env.client.tryGet(t.configMap, ns, 'fg-top')).toBeUndefined();
});

it('orphan deletion of a Bundle: the garbage collector releases the objects, which stay', async () => {
  await applyBundle(env, ns, 'orph', [{ name: 'a', object: configMap('orph-a') }]);
  await waitForReady(env, ns, 'orph');
  expect((await run('kubectl', ['delete', 'bundle', 'orph', '-n', ns, '--cascade=orphan', '--wait=false'])).code).toBe(0);
  await waitFor('the Bundle to be gone', async () => (await getBundle(env, ns, 'orph')) === undefined);
  const kept = await env.client.get(t.configMap, ns, 'orph-a');
  expect(kept.metadata.ownerReferences ?? []).toEqual([]);
});
