/**
 * Issue 27, drift controls, on the real API server with a second field
 * manager ("other") writing by server-side apply (force, as a controller
 * taking a field would): `smith.atlassian.com/ignore` leaves a field to it
 * while the other fields are put back; `apply: IfNotPresent` creates an
 * object and never writes its fields again, yet it stays the Bundle's
 * (controller reference, deletion rules kept current, soft-deleted and
 * cancelled, same UID); `drift: Warn` reports drift (Drifted condition,
 * event, metric) and writes nothing. A pointer the operator needs is the
 * Bundle's terminal error and nothing is deleted.
 */
import { Annotations, FIELD_MANAGER, Labels } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, expectKept, waitFor } from './harness.js';
import {
  applyBundle,
  BUNDLE_RESOURCE_TYPE,
  bundleManifest,
  configMap,
  eventsFor,
  getBundle,
  resourceCondition,
  waitForBundle,
  waitForReady,
  type ResourceFixture,
} from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('drift');
const OTHER = 'other';

/** The second field manager's write: server-side apply of the data keys given, forced. */
async function otherApplies(name: string, data: Record<string, string>): Promise<void> {
  await f.env.client.apply(
    f.t.configMap,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: f.ns }, data },
    { fieldManager: OTHER, force: true },
  );
}

const cm = async (name: string): Promise<KubeObject> => await f.env.client.get(f.t.configMap, f.ns, name);
const dataOf = (o: KubeObject): Record<string, string> => (o.data ?? {}) as Record<string, string>;

/** The data keys a field manager owns, from managedFields. */
function dataKeysOwnedBy(o: KubeObject, manager: string): string[] {
  const entries = (o.metadata.managedFields ?? []) as { manager?: string; fieldsV1?: Record<string, unknown> }[];
  const keys = entries
    .filter((e) => e.manager === manager)
    .flatMap((e) => Object.keys((e.fieldsV1?.['f:data'] ?? {}) as Record<string, unknown>));
  return [...new Set(keys)].map((k) => k.replace(/^f:/, '')).sort();
}

const controllerUid = (o: KubeObject): string | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

async function applyWithSpec(name: string, resources: ResourceFixture[], spec: Record<string, unknown>): Promise<void> {
  const manifest = bundleManifest(f.ns, name, resources);
  await f.env.client.apply(
    BUNDLE_RESOURCE_TYPE,
    { ...manifest, spec: { ...(manifest['spec'] as Record<string, unknown>), ...spec } },
    { fieldManager: 'test-user', force: true },
  );
}

it('ignore: another manager keeps an ignored field; a field that is not ignored is put back', async () => {
  const object = configMap('ig', { a: 'mine', b: 'initial' }, { [Annotations.ignore]: '/data/b' });
  await applyBundle(f.env, f.ns, 'ignore', [{ name: 'cm', object }]);
  await waitForReady(f.env, f.ns, 'ignore');
  const created = await cm('ig');
  // Created with the whole manifest.
  expect(dataOf(created)).toEqual({ a: 'mine', b: 'initial' });

  await otherApplies('ig', { a: 'theirs', b: 'theirs' });
  // The operator's next pass (woken by the change) puts a back...
  const after = await waitFor('data.a put back', async () => {
    const o = await cm('ig');
    return dataOf(o).a === 'mine' ? o : undefined;
  });
  // ...and leaves b to the other manager: the operator let go of it, so their next apply needs no force.
  expect(dataOf(after).b).toBe('theirs');
  expect(dataKeysOwnedBy(after, OTHER)).toContain('b');
  expect(dataKeysOwnedBy(after, FIELD_MANAGER)).toEqual(['a']);
  expectKept(after, created.metadata.uid ?? '');
  await f.env.client.apply(
    f.t.configMap,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ig', namespace: f.ns }, data: { b: 'theirs again' } },
    { fieldManager: OTHER, force: false },
  );
  expect(dataOf(await cm('ig')).b).toBe('theirs again');

  // An edit of the Bundle is applied, b still untouched.
  await applyBundle(f.env, f.ns, 'ignore', [{ name: 'cm', object: { ...object, data: { a: 'mine', b: 'initial', c: 'new' } } }]);
  const edited = await waitFor('data.c applied', async () => {
    const o = await cm('ig');
    return dataOf(o).c === 'new' ? o : undefined;
  });
  expect(dataOf(edited)).toEqual({ a: 'mine', b: 'theirs again', c: 'new' });
  expect(conditionOf(await waitForReady(f.env, f.ns, 'ignore'), 'Error')?.status).toBe('False');
});

it('ignore from spec.driftDefaults: the same, for every object without its own annotation', async () => {
  await applyWithSpec('defaults', [{ name: 'cm', object: configMap('ig-def', { a: 'mine', b: 'initial' }) }], {
    driftDefaults: { ignore: ['/data/b'] },
  });
  await waitForReady(f.env, f.ns, 'defaults');
  await otherApplies('ig-def', { a: 'theirs', b: 'theirs' });
  const after = await waitFor('data.a put back', async () => {
    const o = await cm('ig-def');
    return dataOf(o).a === 'mine' ? o : undefined;
  });
  expect(dataOf(after).b).toBe('theirs');
});

it('apply: IfNotPresent: created, never updated; still owned, its deletion rules kept current, soft-deleted and cancelled with the same UID', async () => {
  const once = (data: Record<string, string>, delay: string): ResourceFixture => ({
    name: 'once',
    object: configMap('once', data, { [Annotations.apply]: 'IfNotPresent', [Annotations.deletionDelay]: delay }),
  });
  const keep = { name: 'keep', object: configMap('once-keep') };
  await applyBundle(f.env, f.ns, 'once', [once({ a: '1' }, '1h'), keep]);
  const bundle = await waitForReady(f.env, f.ns, 'once');
  const created = await cm('once');
  expect(dataOf(created)).toEqual({ a: '1' });
  expect(controllerUid(created)).toBe(bundle.metadata.uid);

  // Another manager changes the field: not put back.
  await otherApplies('once', { a: 'theirs' });
  // A change of the manifest: not applied either; its deletion rule is (the operator's bookkeeping).
  await applyBundle(f.env, f.ns, 'once', [once({ a: '2' }, '2h'), keep]);
  const bookkept = await waitFor('the new deletionDelay on the object', async () => {
    const o = await cm('once');
    return o.metadata.annotations?.[Annotations.deletionDelay] === '2h' ? o : undefined;
  });
  await waitForReady(f.env, f.ns, 'once');
  expect(dataOf(bookkept)).toEqual({ a: 'theirs' });
  expect(controllerUid(bookkept)).toBe(bundle.metadata.uid);
  expect(bookkept.metadata.labels?.[Labels.managed]).toBe('true');
  expect(dataKeysOwnedBy(bookkept, OTHER)).toEqual(['a']);

  // Out of the Bundle: counted down, not deleted.
  await applyBundle(f.env, f.ns, 'once', [keep]);
  await waitForBundle(
    f.env,
    f.ns,
    'once',
    'a pending deletion',
    (b) => ((b.status as { pendingDeletionCount?: number }).pendingDeletionCount ?? 0) === 1,
  );
  const stamped = await cm('once');
  expect(stamped.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
  expectKept(stamped, created.metadata.uid ?? '');

  // Back in: the countdown is cancelled, the same object, its fields still the other manager's.
  await applyBundle(f.env, f.ns, 'once', [once({ a: '2' }, '2h'), keep]);
  await waitForBundle(
    f.env,
    f.ns,
    'once',
    'nothing pending, Ready',
    (b) => ((b.status as { pendingDeletionCount?: number }).pendingDeletionCount ?? 0) === 0 && conditionOf(b, 'Ready')?.status === 'True',
  );
  const back = await waitFor('the stamp removed', async () => {
    const o = await cm('once');
    return o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined ? o : undefined;
  });
  expectKept(back, created.metadata.uid ?? '');
  expect(dataOf(back)).toEqual({ a: 'theirs' });
  expect(controllerUid(back)).toBe(bundle.metadata.uid);
});

it('apply: IfNotPresent on an object that exists: adopted (owned, labelled), its fields untouched', async () => {
  await otherApplies('pre', { a: 'theirs' });
  const before = await cm('pre');
  await applyBundle(f.env, f.ns, 'adopt', [
    { name: 'pre', object: configMap('pre', { a: 'mine' }, { [Annotations.apply]: 'IfNotPresent' }) },
  ]);
  const bundle = await waitForReady(f.env, f.ns, 'adopt');
  const adopted = await waitFor('the controller reference', async () => {
    const o = await cm('pre');
    return controllerUid(o) === bundle.metadata.uid ? o : undefined;
  });
  expectKept(adopted, before.metadata.uid ?? '');
  expect(dataOf(adopted)).toEqual({ a: 'theirs' });
  expect(adopted.metadata.labels?.[Labels.managed]).toBe('true');
  expect(dataKeysOwnedBy(adopted, FIELD_MANAGER)).toEqual([]);
});

it('drift: Warn: reports the drifted fields (condition, event, metric), writes none, and stays Ready; an edit of the manifest is applied', async () => {
  const object = (a: string): ResourceFixture => ({
    name: 'cm',
    object: configMap('warn', { a, b: 'initial' }, { [Annotations.drift]: 'Warn', [Annotations.ignore]: '/data/b' }),
  });
  await applyBundle(f.env, f.ns, 'warn', [object('mine')]);
  await waitForBundle(f.env, f.ns, 'warn', 'Drifted False', (b) => resourceCondition(b, 'cm', 'Drifted')?.status === 'False');

  await otherApplies('warn', { a: 'theirs', b: 'theirs' });
  const drifted = await waitForBundle(f.env, f.ns, 'warn', 'Drifted True', (b) => resourceCondition(b, 'cm', 'Drifted')?.status === 'True');
  expect(resourceCondition(drifted, 'cm', 'Drifted')).toMatchObject({
    reason: 'FieldsDrifted',
    message: '1 field differs from the manifest (drift: Warn, not written): /data/a',
  });
  // Drift is information: the resource and the Bundle stay Ready.
  expect(resourceCondition(drifted, 'cm', 'Ready')?.status).toBe('True');
  expect(conditionOf(drifted, 'Ready')?.status).toBe('True');
  expect(dataOf(await cm('warn'))).toEqual({ a: 'theirs', b: 'theirs' });
  await waitFor('a Drifted event', async () =>
    (await eventsFor(f.env, f.ns, 'warn')).some((e) => e.reason === 'Drifted' && e.type === 'Warning' && e.note.includes('/data/a')),
  );
  const gauge = (await f.op.metrics.resourcesDrifted.get()).values.find(
    (v) => v.labels['namespace'] === f.ns && v.labels['bundle'] === 'warn',
  );
  expect(gauge?.value).toBe(1);

  // The Bundle changes the manifest: applied whole (a put back, b still ignored), no drift left.
  await applyBundle(f.env, f.ns, 'warn', [object('edited')]);
  await waitForBundle(f.env, f.ns, 'warn', 'Drifted False', (b) => resourceCondition(b, 'cm', 'Drifted')?.status === 'False');
  expect(dataOf(await cm('warn'))).toEqual({ a: 'edited', b: 'theirs' });
  expect((await f.op.metrics.resourcesDrifted.get()).values.find((v) => v.labels['bundle'] === 'warn')).toBeUndefined();
});

it('a pointer the operator needs is a terminal error of the Bundle, and nothing is deleted', async () => {
  await applyBundle(f.env, f.ns, 'bad', [
    { name: 'a', object: configMap('bad-a') },
    { name: 'b', object: configMap('bad-b') },
  ]);
  await waitForReady(f.env, f.ns, 'bad');
  const b = await cm('bad-b');
  // b leaves the Bundle in the same edit that makes a's ignore unreadable: nothing is pruned.
  await applyBundle(f.env, f.ns, 'bad', [
    { name: 'a', object: configMap('bad-a', { key: 'value' }, { [Annotations.ignore]: '/metadata/ownerReferences' }) },
  ]);
  const failed = await waitForBundle(f.env, f.ns, 'bad', 'Error True', (x) => conditionOf(x, 'Error')?.status === 'True');
  expect(conditionOf(failed, 'Error')?.message).toMatch(
    /resource "a": annotation smith\.atlassian\.com\/ignore: "\/metadata\/ownerReferences" may not be ignored/,
  );
  expect(conditionOf(failed, 'Stalled')?.status).toBe('True');
  expectKept(await cm('bad-b'), b.metadata.uid ?? '');

  // The CRD refuses such a default at the door.
  await expect(
    applyWithSpec('bad-default', [{ name: 'a', object: configMap('bad-default-a') }], { driftDefaults: { ignore: ['/kind'] } }),
  ).rejects.toThrow(/spec\.driftDefaults\.ignore\[0\]: Invalid value: .*may not ignore apiVersion or kind/);
  expect(await getBundle(f.env, f.ns, 'bad-default')).toBeUndefined();
});
