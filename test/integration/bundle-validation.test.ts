/**
 * Fail safe: an invalid Bundle reports Error=True with a message naming the
 * resource, and writes nothing and deletes nothing until it is fixed.
 * (What the CRD refuses at the door, such as duplicate names or a resource
 * referring to itself, is in crd.test.ts; the operator's own checks for
 * Bundles stored under an older CRD are unit-tested.)
 */
import { conditionOf, expectKept, uidOf, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForBundle, waitForReady, type ResourceFixture } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('invalid');

const cm = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...configMap(name), ...extra });

const cases: [string, () => ResourceFixture[], RegExp][] = [
  [
    'a reference to a missing resource',
    () => [{ name: 'a', references: [{ resource: 'ghost' }], object: cm('v-missing') }],
    /resource "a".*"ghost"/,
  ],
  [
    'a reference cycle',
    () => [
      { name: 'a', references: [{ resource: 'b' }], object: cm('v-cyc-a') },
      { name: 'b', references: [{ resource: 'a' }], object: cm('v-cyc-b') },
    ],
    /a -> b -> a|b -> a -> b/,
  ],
  [
    'an object in another namespace',
    () => [{ name: 'a', object: { ...configMap('v-other-ns'), metadata: { name: 'v-other-ns', namespace: 'elsewhere' } } }],
    /resource "a".*namespace/,
  ],
  [
    'a cluster-scoped kind',
    () => [
      {
        name: 'a',
        object: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'v-cluster' }, rules: [] },
      },
    ],
    /resource "a".*cluster-scoped/,
  ],
  [
    'a user-supplied controller ownerReference',
    () => [
      {
        name: 'a',
        object: {
          ...configMap('v-ctrl'),
          metadata: { name: 'v-ctrl', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '1', controller: true }] },
        },
      },
    ],
    /resource "a".*controller/,
  ],
  [
    'the deletionTimestamp annotation in a spec',
    () => [{ name: 'a', object: configMap('v-stamp', { k: 'v' }, { 'smith.atlassian.com/deletionTimestamp': '2026-01-01T00:00:00Z' }) }],
    /resource "a".*deletionTimestamp/,
  ],
  [
    'an unsupported modifier',
    () => [
      { name: 'b', object: cm('v-mod-b') },
      { name: 'a', references: [{ name: 'x', resource: 'b', path: 'metadata.name', modifier: 'bindsecret' }], object: cm('v-mod-a') },
    ],
    /resource "a".*modifier/,
  ],
];

describe('an invalid Bundle writes nothing', () => {
  it.each(cases)('%s: Error=True naming the resource, nothing created', async (_case, resources, message) => {
    const name = `bad-${cases.findIndex((c) => c[0] === _case)}`;
    await applyBundle(f.env, f.ns, name, resources());
    const bundle = await waitForBundle(f.env, f.ns, name, 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(bundle, 'Error')?.message).toMatch(message);
    expect(conditionOf(bundle, 'Ready')?.status).toBe('False');
    const { items } = await f.env.client.list(f.t.configMap, f.ns, { labelSelector: '' });
    expect(items.filter((o) => o.metadata.name.startsWith('v-')).map((o) => o.metadata.name)).toEqual([]);
  });

  it('an unsupported plugin is reported', async () => {
    await f.env.client.apply(
      (await import('./bundles.js')).BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: 'plugin', namespace: f.ns },
        spec: { resources: [{ name: 'binding', spec: { plugin: { name: 'servicecatalog', objectName: 'x', spec: { a: 1 } } } }] },
      },
      { fieldManager: 'test-user' },
    );
    const bundle = await waitForBundle(f.env, f.ns, 'plugin', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(bundle, 'Error')?.message).toMatch(/resource "binding".*plugin/);
  });

  it('a Bundle that becomes invalid deletes nothing, even what left its spec; fixing it resumes', async () => {
    await applyBundle(f.env, f.ns, 'turns-bad', [
      { name: 'keep', object: configMap('tb-keep') },
      { name: 'drop', object: configMap('tb-drop') },
    ]);
    await waitForReady(f.env, f.ns, 'turns-bad');
    const dropUid = await uidOf(f.env, f.t.configMap, f.ns, 'tb-drop');
    // Remove "drop" and break the spec in the same edit: nothing may be deleted.
    await applyBundle(f.env, f.ns, 'turns-bad', [
      { name: 'keep', references: [{ resource: 'nowhere' }], object: configMap('tb-keep', { changed: 'yes' }) },
    ]);
    await waitForBundle(f.env, f.ns, 'turns-bad', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'tb-drop'), dropUid);
    expect((await f.env.client.get(f.t.configMap, f.ns, 'tb-keep')).data).toEqual({ key: 'value' });
    // Fixed: the prune and the change go through.
    await applyBundle(f.env, f.ns, 'turns-bad', [{ name: 'keep', object: configMap('tb-keep', { changed: 'yes' }) }]);
    await waitForReady(f.env, f.ns, 'turns-bad');
    await waitFor('tb-drop to be pruned', async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'tb-drop')) === undefined);
    expect((await f.env.client.get(f.t.configMap, f.ns, 'tb-keep')).data).toEqual({ changed: 'yes' });
  });
});

describe('events for an invalid Bundle', () => {
  it('says InvalidSpec once, not again on every pass over the same problem', async () => {
    await applyBundle(f.env, f.ns, 'noisy', [{ name: 'a', references: [{ resource: 'ghost' }], object: configMap('v-noisy') }]);
    await waitForBundle(f.env, f.ns, 'noisy', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    const reconciles = async () => (await f.op.metrics.reconciles.get()).values.reduce((sum, v) => sum + v.value, 0);
    for (let i = 0; i < 3; i++) {
      const count = await reconciles();
      f.op.operator.bundles.enqueue(`${f.ns}/noisy`);
      await waitFor('another reconcile pass', async () => (await reconciles()) > count);
    }
    const events = await waitFor('the InvalidSpec event', async () => {
      const list = (await eventsFor(f.env, f.ns, 'noisy')).filter((e) => e.reason === 'InvalidSpec');
      return list.length > 0 ? list : undefined;
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', note: expect.stringContaining('"ghost"') as unknown });
  });
});
