/**
 * Pruning and Bundle deletion: what leaves the spec is deleted (dependents
 * first, with preconditions), never while an apply of the pass failed; a
 * deleted Bundle takes its objects with it in reverse dependency order.
 */
import { Annotations, Finalizers } from '../../src/api/names.js';
import { conditionOf, expectKept, run, uidOf, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, getBundle, waitForBundle, waitForReady, type ResourceFixture } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('prune');

/** Records DELETED events of ConfigMaps and Secrets with their deletion revision, to check order. */
async function recordDeletions(): Promise<{ deletions: { name: string; rv: number }[]; stop: () => void }> {
  const deletions: { name: string; rv: number }[] = [];
  const abort = new AbortController();
  for (const rt of [f.t.configMap, f.t.secret]) {
    const { resourceVersion } = await f.env.client.list(rt, f.ns);
    void f.env.client
      .watch(rt, f.ns, resourceVersion, { signal: abort.signal }, (e) => {
        if (e.type === 'DELETED') deletions.push({ name: e.object.metadata.name, rv: Number(e.object.metadata.resourceVersion) });
      })
      .catch(() => undefined); // the watch ends with the abort
  }
  return { deletions, stop: () => abort.abort() };
}

const chain = (prefix: string): ResourceFixture[] => [
  { name: 'base', object: configMap(`${prefix}-base`) },
  { name: 'middle', references: [{ resource: 'base' }], object: configMap(`${prefix}-middle`) },
  {
    name: 'top',
    references: [{ resource: 'middle' }],
    object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${prefix}-top` }, stringData: { a: 'b' } },
  },
];

describe('pruning', () => {
  it('deletes what left the spec, dependents before what they reference, and says so', async () => {
    await applyBundle(f.env, f.ns, 'shrink', [...chain('sh'), { name: 'stay', object: configMap('sh-stay') }]);
    await waitForReady(f.env, f.ns, 'shrink');
    const stayUid = await uidOf(f.env, f.t.configMap, f.ns, 'sh-stay');
    const rec = await recordDeletions();
    await applyBundle(f.env, f.ns, 'shrink', [{ name: 'stay', object: configMap('sh-stay') }]);
    await waitFor('the three objects to be deleted', () => (rec.deletions.length >= 3 ? true : undefined));
    rec.stop();
    const order = [...rec.deletions].sort((a, b) => a.rv - b.rv).map((d) => d.name);
    expect(order).toEqual(['sh-top', 'sh-middle', 'sh-base']);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'sh-stay'), stayUid);
    await waitForReady(f.env, f.ns, 'shrink');
    expect((await eventsFor(f.env, f.ns, 'shrink')).filter((e) => e.reason === 'Pruned')).toHaveLength(3);
  });

  it('50 countdowns due together go in one pass, a chain among them dependents first, with one summary Event per reason', async () => {
    const delay = { [Annotations.deletionDelay]: '2s' };
    const many: ResourceFixture[] = Array.from({ length: 50 }, (_, i) => ({
      name: `cm-${i}`,
      object: configMap(`many-${i}`, { i: String(i) }, delay),
    }));
    const delayedChain = chain('mc').map((r) => ({
      ...r,
      object: { ...r.object, metadata: { ...(r.object.metadata as Record<string, unknown>), annotations: delay } },
    }));
    await applyBundle(f.env, f.ns, 'many', [...many, ...delayedChain, { name: 'stay', object: configMap('many-stay') }]);
    await waitForReady(f.env, f.ns, 'many');
    const rec = await recordDeletions();
    await applyBundle(f.env, f.ns, 'many', [{ name: 'stay', object: configMap('many-stay') }]);
    await waitFor('the 53 objects to be deleted after their delay', () =>
      rec.deletions.filter((d) => d.name.startsWith('m')).length >= 53 ? true : undefined,
    );
    rec.stop();
    const order = [...rec.deletions]
      .sort((a, b) => a.rv - b.rv)
      .map((d) => d.name)
      .filter((n) => n.startsWith('mc-'));
    expect(order).toEqual(['mc-top', 'mc-middle', 'mc-base']);
    await waitForReady(f.env, f.ns, 'many');
    const events = await eventsFor(f.env, f.ns, 'many');
    // One pass deleted all 53 (one stamp for all, so one deadline): one Event says so, and one said the stamps.
    expect(events.filter((e) => e.reason === 'DeletedAfterDelay').map((e) => e.note)).toEqual([
      expect.stringMatching(/^deleted 53 objects whose deletion delay ended \(ConfigMap: 52, Secret: 1\): e\.g\. /),
    ]);
    expect(events.filter((e) => e.reason === 'DeletionScheduled').map((e) => e.note)).toEqual([
      expect.stringMatching(/^started the deletion countdown of 53 objects no longer in the Bundle \(ConfigMap: 52, Secret: 1\)/),
    ]);
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'many-stay')).toBeDefined();
  });

  it('prunes nothing while an apply of the pass fails', async () => {
    await applyBundle(f.env, f.ns, 'held', [
      { name: 'a', object: configMap('hd-a') },
      { name: 'b', object: configMap('hd-b') },
    ]);
    await waitForReady(f.env, f.ns, 'held');
    const bUid = await uidOf(f.env, f.t.configMap, f.ns, 'hd-b');
    // "a" becomes something the apiserver rejects (a ConfigMap's data keys must be valid config keys) while "b" leaves.
    await applyBundle(f.env, f.ns, 'held', [
      { name: 'a', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hd-a' }, data: { 'not a key!': '5' } } },
    ]);
    const failing = await waitForBundle(f.env, f.ns, 'held', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(failing, 'Error')?.message).toContain('"a"');
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'hd-b'), bUid);
    const objectsToDelete = (failing.status as { objectsToDelete?: { kind: string; name: string }[] }).objectsToDelete;
    expect(objectsToDelete).toEqual([expect.objectContaining({ kind: 'ConfigMap', name: 'hd-b' })]);
    // Fixed: now it goes.
    await applyBundle(f.env, f.ns, 'held', [{ name: 'a', object: configMap('hd-a') }]);
    await waitFor('hd-b to be pruned', async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'hd-b')) === undefined);
  });

  it('never deletes a same-named object that is not the one it controlled', async () => {
    await applyBundle(f.env, f.ns, 'uid', [
      { name: 'a', object: configMap('uid-a') },
      { name: 'b', object: configMap('uid-b') },
    ]);
    await waitForReady(f.env, f.ns, 'uid');
    await f.op.operator.stop();
    try {
      // While the operator is down, someone replaces uid-b with their own object.
      const old = await f.env.client.get(f.t.configMap, f.ns, 'uid-b');
      await f.env.client.delete(f.t.configMap, f.ns, 'uid-b', { uid: old.metadata.uid });
      const theirs = await f.env.client.create(f.t.configMap, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'uid-b', namespace: f.ns },
        data: { theirs: 'yes' },
      });
      await applyBundle(f.env, f.ns, 'uid', [{ name: 'a', object: configMap('uid-a') }]);
      f.op = await startOperator({ namespace: f.ns });
      await waitForBundle(f.env, f.ns, 'uid', 'reconciled', (b) => (b.status as { resourcesReady?: string }).resourcesReady === '1/1');
      expect((await f.env.client.get(f.t.configMap, f.ns, 'uid-b')).metadata.uid).toBe(theirs.metadata.uid);
    } finally {
      if (!f.op.operator.ready()) f.op = await startOperator({ namespace: f.ns });
    }
  });
});

describe('deleting a Bundle', () => {
  it('deletes its objects in reverse dependency order, then lets the Bundle go', async () => {
    await applyBundle(f.env, f.ns, 'doomed', chain('dm'));
    const bundle = await waitForReady(f.env, f.ns, 'doomed');
    expect(bundle.metadata.finalizers).toContain(Finalizers.deleteResources);
    const rec = await recordDeletions();
    expect((await run('kubectl', ['delete', 'bundle', 'doomed', '-n', f.ns])).code).toBe(0);
    await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, 'doomed')) === undefined);
    await waitFor('the objects to be deleted', () => (rec.deletions.length >= 3 ? true : undefined));
    rec.stop();
    expect([...rec.deletions].sort((a, b) => a.rv - b.rv).map((d) => d.name)).toEqual(['dm-top', 'dm-middle', 'dm-base']);
  });

  it("with orphan propagation, leaves the objects to the garbage collector's orphaning", async () => {
    await applyBundle(f.env, f.ns, 'orphaning', [{ name: 'a', object: configMap('or-a') }]);
    await waitForReady(f.env, f.ns, 'orphaning');
    const aUid = await uidOf(f.env, f.t.configMap, f.ns, 'or-a');
    expect((await run('kubectl', ['delete', 'bundle', 'orphaning', '-n', f.ns, '--cascade=orphan', '--wait=false'])).code).toBe(0);
    // Our finalizer goes at once; the orphan finalizer stays for a garbage collector (none runs in this file).
    const terminating = await waitFor('our finalizer to be removed', async () => {
      const b = await getBundle(f.env, f.ns, 'orphaning');
      return b && !(b.metadata.finalizers ?? []).includes(Finalizers.deleteResources) ? b : undefined;
    });
    expect(terminating.metadata.finalizers).toEqual([Finalizers.orphan]);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'or-a'), aUid);
  });
});
