/**
 * A Bundle deleted with foreground propagation: the operator steps aside and
 * the built-in garbage collector carries out the cascade (no
 * kube-controller-manager runs here), then the Bundle goes.
 */
import { Finalizers } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { run, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('bgc', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'bundles', clock, namespaces: [f.ns], workers: 4 }),
}));

it('foreground deletion of a Bundle: dependents first, by the garbage collector, then the Bundle', async () => {
  await applyBundle(f.env, f.ns, 'fg', [
    { name: 'base', object: configMap('fg-base') },
    {
      name: 'top',
      references: [{ resource: 'base' }],
      object: configMap('fg-top', { a: 'b' }, { 'smith.atlassian.com/deletionDelay': '1h' }),
    },
  ]);
  await waitForReady(f.env, f.ns, 'fg');
  // Someone else's finalizer holds one blocking dependent, so the wait is observable, not a race.
  await f.env.client.patch(f.t.configMap, f.ns, 'fg-base', { metadata: { finalizers: ['example.com/hold'] } }, 'merge', {
    fieldManager: 'someone',
  });
  expect((await run('kubectl', ['delete', 'bundle', 'fg', '-n', f.ns, '--cascade=foreground', '--wait=false'])).code).toBe(0);
  // While a blocking dependent exists the Bundle waits with only the foregroundDeletion finalizer: ours is gone at once.
  const waiting = await waitFor('our finalizer to go while the Bundle waits', async () => {
    const b = await getBundle(f.env, f.ns, 'fg');
    return b && !(b.metadata.finalizers ?? []).includes(Finalizers.deleteResources) ? b : undefined;
  });
  expect(waiting.metadata.finalizers).toEqual([Finalizers.foregroundDeletion]);
  await waitFor(
    'fg-top to be deleted by the collector',
    async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'fg-top')) === undefined,
  );
  // Still the same Bundle, still waiting for its blocking dependent.
  expect((await getBundle(f.env, f.ns, 'fg'))?.metadata.uid).toBe(waiting.metadata.uid);
  // Release the hold: the last blocking dependent goes, then the Bundle.
  await f.env.client.patch(f.t.configMap, f.ns, 'fg-base', { metadata: { finalizers: null } }, 'merge', { fieldManager: 'someone' });
  await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, 'fg')) === undefined);
  // Foreground means everything goes, a deletionDelay included: the user asked for a full cascade.
  expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'fg-base')).toBeUndefined();
  expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'fg-top')).toBeUndefined();
});

it('orphan deletion of a Bundle: the garbage collector releases the objects, which stay', async () => {
  await applyBundle(f.env, f.ns, 'orph', [{ name: 'a', object: configMap('orph-a') }]);
  await waitForReady(f.env, f.ns, 'orph');
  expect((await run('kubectl', ['delete', 'bundle', 'orph', '-n', f.ns, '--cascade=orphan', '--wait=false'])).code).toBe(0);
  await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, 'orph')) === undefined);
  const kept = await f.env.client.get(f.t.configMap, f.ns, 'orph-a');
  expect(kept.metadata.ownerReferences ?? []).toEqual([]);
});
