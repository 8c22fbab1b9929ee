/**
 * Red team 19: a manifest that carries the `smith.atlassian.com/former-bundle`
 * annotation (an object exported with `kubectl get -o yaml` after a let-go,
 * pasted into a Bundle) hides every orphan trace: `--cascade=orphan` that
 * the collector finishes first is read as background, the operator's
 * dependency reference stays, and kube-controller-manager later collects
 * the orphaned dependent through its former sibling.
 *
 * Steps:
 *  1. Bundle mf lists ConfigMaps mf-p and mf-c (mf-c `references: [{resource:
 *     p}]`); both manifests carry `smith.atlassian.com/former-bundle: old`
 *     (copied from an exported let-go object). The operator applies it
 *     as is (desired.ts drops claimReferences, applied-hash, declared-rules
 *     and dependencyReferences from a manifest, not former-bundle).
 *  2. The operator restarts while mf is deleted with `--cascade=orphan`;
 *     kube-controller-manager orphans first (docs/deletion.md allows it).
 *  3. A person deletes mf-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "every object stays ... the finalizer
 * removes ... dependency ownerReferences to sibling objects ... so each
 * object ... is not collected later when a former sibling is deleted. The
 * collector may finish (and remove the `orphan` finalizer) before the
 * operator looks: the operator then recognises the orphaning from the
 * objects"; docs/safety.md, Bundle finalizer row): mf-c kept.
 *
 * What happens: mf-c is collected. effectivePropagation
 * (src/core/bundle/finalize.ts:69-82) excludes from the orphan trace every
 * object with a former-bundle annotation (formerBundleOf, new with the
 * let-go mark); the manifest put one on each object, so no trace is left,
 * the deletion reads as background, nothing is held any more (the
 * collector took mf's references off), the finalizer goes and mf-c keeps
 * the operator's dependency reference to mf-p.
 *
 * Fix direction: drop `smith.atlassian.com/former-bundle` (annotation and
 * label) from what is applied, as desired.ts:102-108 already does for
 * claimReferences (red team 15), and/or have effectivePropagation honour
 * only a mark the operator's own let-go wrote (e.g. sealed, or recorded in
 * the taking Bundle's status).
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt19-mfb');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('an orphan deletion keeps a dependent whose manifest carried a former-bundle annotation', async () => {
  const { env, ns, t } = f;
  const mark = { [Annotations.formerBundle]: 'old' };
  await applyBundle(env, ns, 'mf', [
    { name: 'p', object: configMap('mf-p', { key: 'value' }, mark) },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('mf-c', { key: 'value' }, mark) },
  ]);
  const b = await waitForReady(env, ns, 'mf');
  const p = await env.client.get(t.configMap, ns, 'mf-p');
  const c = await env.client.get(t.configMap, ns, 'mf-c');
  expect((c.metadata.ownerReferences ?? []).some((r) => r.uid === p.metadata.uid)).toBe(true);
  console.log('mf-c before:', JSON.stringify(c.metadata.ownerReferences), JSON.stringify(c.metadata.annotations));

  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'mf', b.metadata.uid ?? '');
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'mf-c');
  console.log('mf-c after the orphan deletion:', JSON.stringify(orphaned.metadata.ownerReferences ?? []));
  expectKept(orphaned, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
