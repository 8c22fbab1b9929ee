/**
 * Red team 5: foreground deletion of a Bundle whose deletionPolicy Orphan
 * object carries one unreadable deletion annotation.
 *
 * Steps: a Bundle lists ConfigMap rt5-keep with deletionPolicy Orphan (the
 * operator applies it, with its declared-rules proof). Another tool (or a
 * person) writes a deletionDelay the operator cannot read ("soon") on the
 * live object; the operator's apply does not own that key, so it stays.
 * `kubectl delete bundle --cascade=foreground`.
 *
 * Cause: src/core/bundle/finalize.ts:253 (keptFromCascade) returns
 * undefined as soon as the live annotations cannot be read, before the
 * manifest floor (finalize.ts:254), the declared-rules proof and the
 * countdown floor (countdownOf) are consulted, so the step becomes
 * 'leave'/'collector-deletes' (finalize.ts:170), the plan is done, the
 * finalizer goes and kube-controller-manager deletes an object that the
 * manifest, the live policy and its sealed declared rules all say Orphan.
 * Background propagation of the same Bundle keeps it (planPrune ->
 * decideSoftDelete 'invalid' -> release): "nothing is deleted on a value
 * that could not be read" holds there and not under foreground.
 */
import { Annotations, Finalizers } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt5fg');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('foreground: an Orphan object with an unreadable deletionDelay is not left to the collector', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'fgu', [
    { name: 'keep', object: configMap('rt5-keep', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'plain', object: configMap('rt5-plain') },
  ]);
  await waitForReady(env, ns, 'fgu');
  const keep = await env.client.get(t.configMap, ns, 'rt5-keep');
  expect(keep.metadata.annotations?.[Annotations.declaredRules]).toBeDefined();
  await env.client.patch(t.configMap, ns, 'rt5-keep', { metadata: { annotations: { [Annotations.deletionDelay]: 'soon' } } }, 'merge', {
    fieldManager: 'another-tool',
  });
  await sleep(2_000);
  await f.ref.collectorDown();
  try {
    const bundle = await getBundle(env, ns, 'fgu');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'fgu', { uid: bundle?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    await waitFor(
      'our finalizer to go while fgu waits on the collector',
      async () => {
        const b = await getBundle(env, ns, 'fgu');
        return b && !(b.metadata.finalizers ?? []).includes(Finalizers.deleteResources) ? b : undefined;
      },
      { timeoutMs: 30_000 },
    );
  } finally {
    await f.ref.collectorUp();
  }
  await waitFor('fgu to be gone', async () => (await getBundle(env, ns, 'fgu')) === undefined, { timeoutMs: 90_000 });
  await waitFor('the plain object to be collected', async () => (await env.client.tryGet(t.configMap, ns, 'rt5-plain')) === undefined, {
    timeoutMs: 90_000,
  });
  await sleep(3_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt5-keep'), keep.metadata.uid);
}, 240_000);
