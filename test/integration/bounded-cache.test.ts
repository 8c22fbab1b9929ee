/**
 * The Bundle controller keeps in memory only what bundlesmith applied (the
 * managed label its watches select on), not every object of the kinds
 * Bundles list: a Bundle listing one Secret does not cache the namespace's
 * other Secrets. What it does not cache it reads with GETs: an orphan is
 * still adopted, a foreign controller still refused. An object a Bundle
 * controls without the label (written before the operator labelled, or
 * unlabelled by hand) is found and labelled on the next start, then pruned
 * and counted down like any other.
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { applyBundle, configMap, getBundle, resourceCondition, waitForBundle, waitForReady } from './bundles.js';
import { expectKept, uidOf, waitFor, waitForGone } from './harness.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('bounded-cache');

const secret = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  stringData: { k: name },
});

test('unrelated Secrets are not cached; the listed one is, with the managed label', async () => {
  for (let i = 0; i < 50; i++)
    await f.env.client.create(f.t.secret, { ...secret(`unrelated-${i}`), metadata: { name: `unrelated-${i}`, namespace: f.ns } });
  await applyBundle(f.env, f.ns, 'one-secret', [
    { name: 's', object: secret('mine') },
    { name: 'c', object: configMap('mine-cm') },
  ]);
  await waitForReady(f.env, f.ns, 'one-secret');
  expect((await f.env.client.get(f.t.secret, f.ns, 'mine')).metadata.labels?.[Labels.managed]).toBe('true');
  await waitFor('the caches to hold the two applied objects', () => f.op.operator.bundles.objects.size() === 2);
  expect(f.op.operator.bundles.objects.get(f.t.secret, f.ns, 'unrelated-0')).toBeUndefined();
});

test('an unlabelled orphan is read with a GET and adopted; an unlabelled object another controller holds is refused', async () => {
  const orphan = await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'plain-orphan', namespace: f.ns },
    data: { a: 'b' },
  });
  const owner = await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'foreign-owner', namespace: f.ns },
  });
  const held = await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'held',
      namespace: f.ns,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'foreign-owner', uid: owner.metadata.uid, controller: true }],
    },
  });
  await applyBundle(f.env, f.ns, 'reader', [
    { name: 'o', object: configMap('plain-orphan') },
    { name: 'h', object: configMap('held') },
  ]);
  const bundle = await waitForBundle(
    f.env,
    f.ns,
    'reader',
    'adopted one, refused the other',
    (b) => resourceCondition(b, 'h', 'Error')?.reason === 'Conflict' && resourceCondition(b, 'o', 'Ready')?.status === 'True',
  );
  expect(bundle).toBeDefined();
  const adopted = await f.env.client.get(f.t.configMap, f.ns, 'plain-orphan');
  expect(adopted.metadata.uid).toBe(orphan.metadata.uid);
  expect(adopted.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'reader', controller: true });
  const stillHeld = await f.env.client.get(f.t.configMap, f.ns, 'held');
  expectKept(stillHeld, held.metadata.uid);
  expect(stillHeld.metadata.ownerReferences?.find((r) => r.controller)?.uid).toBe(owner.metadata.uid);
});

test('objects a Bundle controls without the label are labelled after a restart, then pruned or counted down as usual', async () => {
  await applyBundle(f.env, f.ns, 'legacy', [{ name: 'keep', object: configMap('legacy-keep') }]);
  const live = await waitForReady(f.env, f.ns, 'legacy');
  await f.op.stop();
  // What an earlier operator version left: controlled by the Bundle, not labelled, no longer listed.
  const ownerRef = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    name: 'legacy',
    uid: live.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'legacy-gone', namespace: f.ns, ownerReferences: [ownerRef] },
  });
  await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'legacy-slow', namespace: f.ns, ownerReferences: [ownerRef], annotations: { [Annotations.deletionDelay]: '1h' } },
  });
  const slowUid = await uidOf(f.env, f.t.configMap, f.ns, 'legacy-slow');
  const keepUid = await uidOf(f.env, f.t.configMap, f.ns, 'legacy-keep');
  f.op = await startOperator({ namespace: f.ns });
  // A pass of the Bundle (a spec change) finds them and labels them; then they are seen like any other.
  await applyBundle(f.env, f.ns, 'legacy', [{ name: 'keep', object: configMap('legacy-keep', { v: '2' }) }]);
  await waitForGone(f.env, f.t.configMap, f.ns, 'legacy-gone');
  const slow = await waitFor('the countdown stamp', async () => {
    const o = await f.env.client.get(f.t.configMap, f.ns, 'legacy-slow');
    return o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined ? o : undefined;
  });
  expectKept(slow, slowUid);
  expect(slow.metadata.labels?.[Labels.managed]).toBe('true');
  expectKept(await f.env.client.get(f.t.configMap, f.ns, 'legacy-keep'), keepUid);
  expect(await getBundle(f.env, f.ns, 'legacy')).toBeDefined();
});
