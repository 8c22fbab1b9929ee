/**
 * Red team 8: a manifest that says `deletionPolicy: Orphan` next to a
 * deletion value the operator cannot read (a typo in its deletionDelay,
 * "1h30"; or in its deleteWhen) is thrown away whole by the Bundle's
 * finalizer: the Orphan, perfectly readable, is never applied (the resource
 * is an Error), never sealed (declareOps refuses rules it cannot read), and
 * the finalizer's floor from the manifest is dropped because the whole set
 * does not read. A background deletion of the Bundle, the operator running
 * throughout, then deletes the object outright, as if the manifest said
 * nothing.
 *
 * Steps: a Bundle lists ConfigMaps rt8m-x and rt8m-y (no rules),
 * rt8m-control (deletionPolicy Orphan from the start) and rt8m-plain. It is
 * Ready. One edit: rt8m-x's manifest gains `deletionPolicy: Orphan` and
 * `deletionDelay: "1h30"` (Go wants a unit after 30), rt8m-y's gains
 * `deletionPolicy: Orphan` and `deleteWhen: BundleRead`. The operator
 * reports both resources as errors (the Bundle's Error names them).
 * `kubectl delete bundle` (background, the default).
 *
 * Expected (docs/deletion.md: "Values that cannot be read are never guessed
 * at; the object is kept"; docs/safety.md, known limits: an Orphan added to
 * a manifest and not yet on the object is exposed in a foreground deletion
 * only, "a background deletion keeps it: the finalizer reads the
 * manifest"; finalize.ts: "Nothing is deleted on a value that could not be
 * read"): rt8m-x and rt8m-y are kept (released), like rt8m-control.
 * Actual: rt8m-control kept, rt8m-x and rt8m-y deleted by the finalizer.
 *
 * Cause: src/core/bundle/finalize.ts:104-109 (manifestFloor) returns no
 * floor when readDeletionRules fails on the manifest's annotations, so the
 * background plan (finalize.ts:190-216, planPrune with floorFor) reads only
 * the live object (no rules: Delete) and plans a 'delete';
 * src/core/bundle/claims.ts:123 (declareOps) writes no proof for rules it
 * cannot read, and src/core/bundle/countdown.ts:109-121
 * (readableDeclaredRules) keeps only the record's previous entry (none).
 * The unreadable manifest is treated as "declares nothing" rather than
 * "cannot be read: keep".
 *
 * Suggested fix: in the finalizer, a listed object whose manifest's rules
 * cannot be read is released and kept (as keptFromCascade does for live
 * rules that cannot be read): manifestFloor should say "unreadable" and
 * the background and foreground plans release on it; at the least read the
 * readable parts (a known policy keeps its Orphan/Approve even when the
 * delay beside it is a typo), and let declareOps seal a readable keeping
 * policy even when another field of the manifest's rules cannot be read.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt8-mo');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('background deletion: an Orphan in the manifest beside a typo in another deletion rule keeps the object', async () => {
  const { env, ns, t } = f;
  const orphan = { [Annotations.deletionPolicy]: 'Orphan' };
  const manifest = (edited: boolean) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'mo', namespace: ns },
    spec: {
      resources: [
        {
          name: 'x',
          spec: { object: configMap('rt8m-x', { k: 'v' }, edited ? { ...orphan, [Annotations.deletionDelay]: '1h30' } : undefined) },
        },
        {
          name: 'y',
          spec: { object: configMap('rt8m-y', { k: 'v' }, edited ? { ...orphan, [Annotations.deleteWhen]: 'BundleRead' } : undefined) },
        },
        { name: 'control', spec: { object: configMap('rt8m-control', { k: 'v' }, orphan) } },
        { name: 'plain', spec: { object: configMap('rt8m-plain', { k: 'v' }) } },
      ],
    },
  });
  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(false), { fieldManager: 'test-user', force: true });
  await waitForReady(env, ns, 'mo');
  const uid = async (name: string) => (await env.client.get(t.configMap, ns, name)).metadata.uid;
  const uids = { x: await uid('rt8m-x'), y: await uid('rt8m-y'), control: await uid('rt8m-control') };

  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(true), { fieldManager: 'test-user', force: true });
  await waitFor('the operator to report both typos', async () => {
    const b = await getBundle(env, ns, 'mo');
    const status = b?.status as
      { observedGeneration?: number; conditions?: { type: string; status: string; message?: string }[] } | undefined;
    const error = (status?.conditions ?? []).find((c) => c.type === 'Error' && c.status === 'True')?.message ?? '';
    return status?.observedGeneration === b?.metadata.generation && error.includes('1h30') && error.includes('BundleRead');
  });
  await sleep(3_000);

  const bundle = await getBundle(env, ns, 'mo');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'mo', { uid: bundle?.metadata.uid ?? '' });
  await waitFor('mo to be gone', async () => (await getBundle(env, ns, 'mo')) === undefined, { timeoutMs: 60_000 });
  await sleep(3_000);
  expect(await env.client.tryGet(t.configMap, ns, 'rt8m-plain')).toBeUndefined();
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt8m-control'), uids.control ?? '');
  const survivors = [];
  for (const [name, u] of [
    ['rt8m-x', uids.x],
    ['rt8m-y', uids.y],
  ] as const) {
    const o = await env.client.tryGet(t.configMap, ns, name);
    if (o?.metadata.uid === u && o.metadata.deletionTimestamp === undefined) survivors.push(name);
  }
  expect(survivors).toEqual(['rt8m-x', 'rt8m-y']);
}, 150_000);
