/**
 * Issue 23, class 5: every value the operator writes fits the API's limits
 * for every input the CRD accepts. A Bundle name may be 253 characters; a
 * label value only 63. Releases wrote the name as the former-bundle label's
 * value, the server refused them (422), the operator read every 422 as "changed
 * since read" and retried forever: nothing was let go, and deleting the
 * Bundle never finished. Also: which 422 is stale and which is invalid, as
 * the real API server answers them.
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { isInvalidWrite, isStaleWrite } from '../../src/kube/errors.js';
import { expectKept, run, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('limits', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
}));

it('5. a Bundle named with 253 characters releases what it keeps and lets go when deleted', async () => {
  const name = `long-${'n'.repeat(120)}.${'m'.repeat(127)}`;
  expect(name).toHaveLength(253);
  const objects = {
    orphan: configMap('ln-orphan', { a: 'b' }, { [Annotations.deletionPolicy]: 'Orphan' }),
    delayed: configMap('ln-delayed', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }),
    plain: configMap('ln-plain'),
  };
  await applyBundle(
    f.env,
    f.ns,
    name,
    Object.entries(objects).map(([r, object]) => ({ name: r, object })),
  );
  await waitForReady(f.env, f.ns, name);
  const uid = async (n: string): Promise<string> => (await f.env.client.get(f.t.configMap, f.ns, n)).metadata.uid;
  const uids = { orphan: await uid('ln-orphan'), delayed: await uid('ln-delayed') };

  // The Orphan object leaves the live Bundle: released for good, labelled with a value that fits, named whole.
  await applyBundle(f.env, f.ns, name, [
    { name: 'delayed', object: objects.delayed },
    { name: 'plain', object: objects.plain },
  ]);
  const kept = await waitFor('the Orphan object to be released', async () => {
    const o = await f.env.client.get(f.t.configMap, f.ns, 'ln-orphan');
    return (o.metadata.ownerReferences ?? []).length === 0 ? o : undefined;
  });
  expect(kept.metadata.annotations?.[Annotations.formerBundle]).toBe(name);
  expect(kept.metadata.labels?.[Labels.formerBundle]?.length).toBeLessThanOrEqual(63);

  expect((await run('kubectl', ['delete', 'bundle', name, '-n', f.ns, '--wait=false'])).code).toBe(0);
  await waitFor('the Bundle to be gone', async () => (await getBundle(f.env, f.ns, name)) === undefined, { timeoutMs: 60_000 });
  expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'ln-orphan'), uids.orphan);
  const released = await f.env.client.tryGet(f.t.configMap, f.ns, 'ln-delayed');
  expectKept(released, uids.delayed);
  expect(released?.metadata.annotations?.[Annotations.formerBundle]).toBe(name);
  expect(released?.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
  expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'ln-plain')).toBeUndefined();
}, 120_000);

it("a failed JSON-patch test is a stale write; a label value over 63 characters is an invalid one (the real API server's answers)", async () => {
  const cm = await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'answers', namespace: f.ns },
  });
  const failedTest = await f.env.client
    .patch(f.t.configMap, f.ns, 'answers', [{ op: 'test', path: '/metadata/resourceVersion', value: 'not-it' }], 'json')
    .catch((err: unknown) => err);
  expect(isStaleWrite(failedTest)).toBe(true);
  expect(isInvalidWrite(failedTest)).toBe(false);
  const removedGone = await f.env.client
    .patch(f.t.configMap, f.ns, 'answers', [{ op: 'remove', path: '/metadata/labels/absent' }], 'json')
    .catch((err: unknown) => err);
  expect(isStaleWrite(removedGone)).toBe(true);
  const tooLong = await f.env.client
    .patch(
      f.t.configMap,
      f.ns,
      'answers',
      [
        { op: 'test', path: '/metadata/uid', value: cm.metadata.uid },
        { op: 'add', path: '/metadata/labels', value: { x: 'v'.repeat(64) } },
      ],
      'json',
    )
    .catch((err: unknown) => err);
  expect(isInvalidWrite(tooLong)).toBe(true);
  expect(isStaleWrite(tooLong)).toBe(false);
});
