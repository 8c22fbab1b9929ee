/**
 * Red team 13: `--cascade=orphan` leaves the operator's dependency reference
 * on an object whose prune was held back, so a later deletion of its former
 * sibling takes it with it.
 *
 * What a user does: Bundle ow lists ConfigMaps ow-p and ow-c, ow-c
 * `references: [{resource: p}]` (the operator writes a dependency
 * ownerReference ow-c -> ow-p, blockOwnerDeletion, recorded in ow-c's
 * dependencyReferences annotation). An edit drops ow-c while another
 * resource fails to apply (here a ConfigMap whose data key the API server
 * refuses; any failing resource does): "not pruning: ... could not be
 * applied", so ow-c stays, still controlled by ow. The Bundle is then
 * deleted with `--cascade=orphan` (hand the objects over to another tool):
 * kube-controller-manager takes ow's references out (here before the
 * operator looks: it restarts meanwhile), the finalizer orphans.
 * Later ow-p, now nobody's, is deleted by hand. Second test: no failing
 * resource; the edit dropping the dependent and the orphan deletion both
 * land while the operator restarts (an upgrade), so no pass prunes between.
 *
 * Why ow-c should be kept: docs/deletion.md, Orphan: "every object stays
 * ... the finalizer removes the rest of what the operator wrote (dependency
 * ownerReferences to sibling objects, ...) so each object keeps only the
 * references its user wrote and is not collected later when a former
 * sibling is deleted". The user wrote no reference on ow-c.
 *
 * What happens: the finalizer's orphan candidates (core/bundle/finalize.ts
 * isOrphanCandidate) are objects still naming the Bundle, or uncontrolled
 * ones at its coordinates (spec and status.pendingDeletions); ow-c left the
 * spec and was never stamped (the prune was held back), and the collector
 * took ow's reference out first, so ow-c is no candidate and keeps the
 * operator's reference to ow-p. Deleting ow-p then makes
 * kube-controller-manager collect ow-c.
 */
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, dropWithPruneHeldBack, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt13ow');

it('orphan deletion with a prune held back: a former dependent keeps no operator reference to its sibling', async () => {
  const { env, ns, t } = f;
  const { bundle, p, c } = await dependentPair(f, 'ow', 'ow');

  // Drop c; a new resource fails to apply, so the prune is held back.
  await dropWithPruneHeldBack(f, 'ow', 'ow', [{ name: 'p', object: configMap('ow-p') }], bundle.metadata.uid);

  // The operator restarts (an upgrade) while the Bundle is deleted: the collector finishes first, as docs/deletion.md allows.
  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'ow', bundle.metadata.uid);
  await waitFor('ow to be gone', async () => (await getBundle(env, ns, 'ow')) === undefined, { timeoutMs: 60_000 });
  const orphaned = await env.client.get(t.configMap, ns, 'ow-c');
  console.log(
    'ow-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  expectKept(orphaned, c.metadata.uid);

  // ow-p is nobody's now; a person deletes it.
  // kube-controller-manager acts on ow-c once ow-p is gone: either it takes the dangling reference out (kept) or collects it.
  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);

it('the same with no failing resource: the edit that drops the dependent and the orphan deletion both land while the operator restarts', async () => {
  const { env, ns, t } = f;
  const { bundle, p, c } = await dependentPair(f, 'ow2', 'ow2');

  await f.operator.stop();
  await applyBundle(env, ns, 'ow2', [{ name: 'p', object: configMap('ow2-p') }]);
  await orphanDeletionFinishedWhileDown(f, 'ow2', bundle.metadata.uid);
  await waitFor('ow2 to be gone', async () => (await getBundle(env, ns, 'ow2')) === undefined, { timeoutMs: 60_000 });
  const orphaned = await env.client.get(t.configMap, ns, 'ow2-c');
  console.log('ow2-c after the orphan deletion:', JSON.stringify(orphaned.metadata.ownerReferences ?? []));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
