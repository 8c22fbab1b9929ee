/**
 * Red team 22: `--cascade=orphan` after another tool REMOVED (rather than
 * blanked: red team 21's `redteam21-orphan-blanked-depref`) the dependency
 * record of an object at the Bundle's coordinates (`kubectl annotate
 * smith.atlassian.com/dependencyReferences-`). Red team 21's fix made every
 * object at the coordinates a sibling in the orphan step, so the field
 * manager rule recognises the operator's blocking reference; but the object
 * carrying that reference is never an orphan candidate, so no orphan step is
 * planned for it at all.
 *
 * Steps:
 *  1. Bundle rd lists ConfigMaps rd-p and rd-c, rd-c `references:
 *     [{resource: p}]`: the operator's field manager applies rd-c -> rd-p
 *     (blockOwnerDeletion), recorded in the annotation.
 *  2. While the operator restarts (an upgrade), another tool removes rd-c's
 *     dependencyReferences annotation (a merge patch by its own field
 *     manager; the operator still owns the reference in managedFields), and
 *     rd is deleted with `--cascade=orphan`; kube-controller-manager orphans
 *     first (docs/deletion.md allows it). The operator is back, rd goes.
 *  3. A person deletes rd-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: the finalizer removes the dependency
 * ownerReferences to sibling objects "so each object keeps only the
 * references its user wrote and is not collected later when a former
 * sibling is deleted"; docs/safety.md: the operator's references are "a
 * blocking reference to a sibling that its field manager applied, whatever
 * a stale annotation says"): rd-c kept. The user wrote no reference on rd-c.
 *
 * What happens: effectivePropagation reads orphan (rd-c's applied-hash).
 * isOrphanCandidate (src/core/bundle/finalize-keep.ts:222, at the
 * coordinates: `return annotations[Annotations.dependencyReferences] !==
 * undefined || annotations[Annotations.deletionTimestamp] !== undefined`)
 * is false for rd-c (uncontrolled, no reference to rd, no record, no stamp)
 * and for rd-p, so finalize.ts:118-123 plans no orphan step: rd-c keeps the
 * operator's reference to rd-p, and kube-controller-manager collects rd-c
 * once rd-p is deleted.
 *
 * The second case (the operator running throughout) passes: the finalizer
 * sees rd's orphan finalizer while the object is still controlled, so it is
 * a candidate; it is a control showing the restart is the condition.
 *
 * Fixed: at the coordinates, the operator's applied-hash (or the Bundle's
 * ApplySet membership) makes an uncontrolled object an orphan candidate
 * (core/bundle/finalize-keep.ts orphanCandidates).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { eventsFor, getBundle } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt22-rd');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('orphan deletion: a dependency reference the operator applied goes, though another tool removed its record', async () => {
  const { env, ns, t } = f;
  const { bundle: bundle, p, c } = await dependentPair(f, 'rd', 'rd');

  await f.operator.stop();
  // `kubectl annotate smith.atlassian.com/dependencyReferences-` (a merge patch by kubectl's manager).
  await env.client.patch(t.configMap, ns, 'rd-c', { metadata: { annotations: { [Annotations.dependencyReferences]: null } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  const removed = await env.client.get(t.configMap, ns, 'rd-c');
  console.log(
    'rd-c record removed:',
    JSON.stringify(removed.metadata.ownerReferences ?? []),
    JSON.stringify(removed.metadata.annotations ?? {}),
  );
  expect(removed.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
  await orphanDeletionFinishedWhileDown(f, 'rd', bundle.metadata.uid);
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'rd-c');
  console.log(
    'rd-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('rd events:', JSON.stringify(await eventsFor(env, ns, 'rd')));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);

it('the same with the operator running throughout', async () => {
  const { env, ns, t } = f;
  const { bundle: bundle, p, c } = await dependentPair(f, 'ru', 'ru');

  await env.client.patch(t.configMap, ns, 'ru-c', { metadata: { annotations: { [Annotations.dependencyReferences]: null } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  await sleep(500);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'ru', { uid: bundle.metadata.uid ?? '', propagationPolicy: 'Orphan' });
  await waitFor('ru to be gone', async () => (await getBundle(env, ns, 'ru')) === undefined, { timeoutMs: 60_000 });
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'ru-c');
  console.log(
    'ru-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('ru events:', JSON.stringify(await eventsFor(env, ns, 'ru')));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
