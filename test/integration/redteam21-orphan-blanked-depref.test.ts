/**
 * Red team 21: `--cascade=orphan` after another tool blanked the dependency
 * record of an object (`kubectl annotate --overwrite
 * smith.atlassian.com/dependencyReferences=`, the edit red team 16 made to
 * the claim record). The operator holds that a blocking reference to a
 * sibling that its field manager applied is its dependency reference
 * "whatever the dependencyReferences annotation says"
 * (src/core/bundle/owner-references.ts, ReferenceOwnerContext.siblingUids),
 * and the background finalizer and the prune take it out on that ground. The
 * orphan finalizer does not once kube-controller-manager has orphaned first:
 * the sibling is no orphan candidate, so it is not counted as a sibling, the
 * reference reads as the user's and stays, and kube-controller-manager
 * collects the object once its former sibling is deleted.
 *
 * Steps:
 *  1. Bundle bd lists ConfigMaps bd-p and bd-c, bd-c `references:
 *     [{resource: p}]`: the operator's field manager applies bd-c -> bd-p
 *     (blockOwnerDeletion), recorded in the annotation.
 *  2. Another tool blanks bd-c's dependencyReferences annotation (a merge
 *     patch by its own field manager: the operator still owns the reference
 *     in managedFields).
 *  3. The operator restarts (an upgrade) while bd is deleted with
 *     `--cascade=orphan`; kube-controller-manager orphans first
 *     (docs/deletion.md allows it). The operator is back, bd goes.
 *  4. A person deletes bd-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: the finalizer removes the dependency
 * ownerReferences to sibling objects "so each object keeps only the
 * references its user wrote and is not collected later when a former
 * sibling is deleted"): bd-c kept. The user wrote no reference on bd-c.
 *
 * What happens: effectivePropagation reads orphan (applied-hash). The orphan
 * candidates (finalize-keep.ts isOrphanCandidate) are bd-c (its blank
 * annotation is there) but not bd-p (uncontrolled, no dependency record, no
 * stamp); finalize.ts:126 passes siblingUids(candidates) as the siblings,
 * so operatorWrittenReferences' field-manager rule never matches bd-p and
 * the reference is the user's: orphanStep leaves it (it only removes the
 * blank annotation).
 *
 * Fixed: the objects at the Bundle's coordinates are siblings in the orphan
 * step whether or not they are candidates (core/bundle/finalize.ts).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { eventsFor, getBundle } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt21-bd');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('orphan deletion: a dependency reference the operator applied goes, though another tool blanked its record', async () => {
  const { env, ns, t } = f;
  const { bundle: bundle, p, c } = await dependentPair(f, 'bd', 'bd');

  await f.operator.stop();
  // `kubectl annotate --overwrite smith.atlassian.com/dependencyReferences=` (a merge patch by kubectl's manager).
  await env.client.patch(t.configMap, ns, 'bd-c', { metadata: { annotations: { [Annotations.dependencyReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  const blanked = await env.client.get(t.configMap, ns, 'bd-c');
  console.log(
    'bd-c blanked:',
    JSON.stringify(blanked.metadata.ownerReferences ?? []),
    JSON.stringify(blanked.metadata.annotations ?? {}),
    JSON.stringify(blanked.metadata.managedFields ?? []),
  );
  await orphanDeletionFinishedWhileDown(f, 'bd', bundle.metadata.uid);
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'bd-c');
  console.log(
    'bd-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('bd events:', JSON.stringify(await eventsFor(env, ns, 'bd')));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);

it('the same with the operator running throughout (kube-controller-manager orphans within milliseconds, before the finalizer reads)', async () => {
  const { env, ns, t } = f;
  const { bundle: bundle, p, c } = await dependentPair(f, 'bu', 'bu');

  await env.client.patch(t.configMap, ns, 'bu-c', { metadata: { annotations: { [Annotations.dependencyReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  await sleep(500);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'bu', { uid: bundle.metadata.uid, propagationPolicy: 'Orphan' });
  await waitFor('bu to be gone', async () => (await getBundle(env, ns, 'bu')) === undefined, { timeoutMs: 60_000 });
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'bu-c');
  console.log(
    'bu-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('bu events:', JSON.stringify(await eventsFor(env, ns, 'bu')));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
