/**
 * Red team 5: the dependency reference the operator wrote, misread as the
 * user's, collects a deletionPolicy Orphan object through its sibling.
 *
 * Steps: a Bundle lists ConfigMap rt5d-cfg (no rules), ConfigMap rt5d-web
 * (deletionPolicy Orphan, `references: [{resource: cfg}]`: the operator
 * writes a dependency ownerReference web -> cfg, blockOwnerDeletion, and
 * records cfg's uid in the dependencyReferences annotation) and a Gadget.
 * The Gadget CRD serves no version for a while (a routine upgrade step) and
 * the Bundle is deleted (background): the finalizer holds. Meanwhile a tool
 * writes the dependencyReferences bookkeeping annotation back with a stale
 * value (here: a uid of something else; nothing re-applies the object while
 * the finalizer holds). The CRD serves again.
 *
 * Cause: src/core/bundle/ownership.ts:150 (operatorWrittenReferences) takes
 * a non-controller reference for the operator's only when the annotation
 * names its uid, so the reference to cfg, which the operator wrote (to a
 * sibling the finalizer itself is about to delete, blockOwnerDeletion as
 * the operator writes it), counts as the user's. The Orphan release
 * (src/core/bundle/finalize.ts:210, keptReleasePatch -> userReferences)
 * leaves it on web; the finalizer then deletes cfg (finalize.ts:207) and
 * kube-controller-manager collects web, whose only owner is gone. The
 * legacy-sibling rule (ownership.ts:151) would have recognised it had the
 * annotation been removed rather than rewritten.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { conditionOf, expectKept, uniqueName, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt5dep');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function setServed(group: string, served: boolean): Promise<void> {
  await setGadgetVersions(f.env, group, [{ name: 'v1', served, storage: true }]);
  await gadgetsServed(f.env, group, 'v1', served);
}

it('an Orphan object is not collected through a dependency reference the operator wrote when its bookkeeping annotation went stale', async () => {
  const { env, ns, t } = f;
  const group = `${uniqueName('dr')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1', served: true, storage: true }]);
  await applyBundle(env, ns, 'dep', [
    { name: 'cfg', object: configMap('rt5d-cfg') },
    {
      name: 'web',
      references: [{ resource: 'cfg' }],
      object: configMap('rt5d-web', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }),
    },
    { name: 'g', object: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'rt5d-g' }, spec: { size: 1 } } },
  ]);
  await waitForReady(env, ns, 'dep');
  const cfg = await env.client.get(t.configMap, ns, 'rt5d-cfg');
  const web = await waitFor('web to carry its dependency reference', async () => {
    const w = await env.client.get(t.configMap, ns, 'rt5d-web');
    return w.metadata.ownerReferences?.some((r) => r.uid === cfg.metadata.uid) ? w : undefined;
  });
  expect(web.metadata.annotations?.[Annotations.dependencyReferences]).toBe(cfg.metadata.uid);

  await setServed(group, false);
  const bundle = await getBundle(env, ns, 'dep');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'dep', { uid: bundle?.metadata.uid ?? '' });
  await waitFor(
    'the finalizer to hold',
    async () => conditionOf(await getBundle(env, ns, 'dep'), 'Error')?.message?.includes('cannot be seen') === true,
  );
  // A tool writes the bookkeeping annotation back with a stale value.
  await env.client.patch(
    t.configMap,
    ns,
    'rt5d-web',
    { metadata: { annotations: { [Annotations.dependencyReferences]: '00000000-0000-0000-0000-000000000000' } } },
    'merge',
    { fieldManager: 'another-tool' },
  );
  await setServed(group, true);

  await waitFor('Bundle dep to be gone', async () => (await getBundle(env, ns, 'dep')) === undefined, { timeoutMs: 60_000 });
  await waitFor('cfg to be deleted', async () => (await env.client.tryGet(t.configMap, ns, 'rt5d-cfg')) === undefined, {
    timeoutMs: 60_000,
  });
  await sleep(15_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt5d-web'), web.metadata.uid);
}, 240_000);
