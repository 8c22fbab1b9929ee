/**
 * Red team 22: `--cascade=orphan` of a Bundle whose spec dropped a dependent
 * and the sibling it depends on (prune held back), where another ApplySet
 * tool took the dropped dependent into its own set (`kubectl apply
 * --applyset=...` rewrites `applyset.kubernetes.io/part-of`). Red team 21's
 * fix counts a dropped object off the coordinates as an orphan candidate
 * only by this Bundle's part-of label, or by a dependency record naming an
 * object AT the coordinates; neither holds for the relabelled dependent, so
 * it keeps the operator's dependency ownerReference to its dropped sibling.
 *
 * Steps:
 *  1. Bundle rl lists ConfigMaps rl-p, rl-c (`references: [{resource: p}]`:
 *     the operator writes rl-c -> rl-p and records it in rl-c's
 *     dependencyReferences annotation) and rl-q.
 *  2. An edit drops rl-p and rl-c and adds a resource the API server refuses:
 *     "not pruning", both stay, still controlled by rl.
 *  3. Another tool's ApplySet takes rl-c (its part-of label rewritten; no
 *     ownerReference touched).
 *  4. The operator restarts while rl is deleted with `--cascade=orphan`;
 *     kube-controller-manager orphans first; the operator is back, rl goes.
 *  5. A person deletes rl-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "every object stays ... the finalizer
 * removes the rest of what the operator wrote (dependency ownerReferences to
 * sibling objects ...) so each object keeps only the references its user
 * wrote and is not collected later when a former sibling is deleted"): rl-c
 * kept. Nobody but the operator wrote a reference on rl-c.
 *
 * What happens: rl-q (member at the coordinates) makes effectivePropagation
 * read orphan, but isOrphanCandidate (src/core/bundle/finalize-keep.ts:220-221,
 * `return isMemberOf(o, input.bundle) || [...recordedDependencyUids(annotations)].some((uid) => coordinateUids.has(uid))`)
 * is false for rl-c: another set's part-of, and its record names rl-p, which
 * is off the coordinates too. rl-c keeps the operator's reference to rl-p,
 * and kube-controller-manager collects rl-c once rl-p is deleted.
 *
 * Fixed: a dependent whose record names another orphan candidate is one
 * too, transitively (core/bundle/finalize-keep.ts orphanCandidates).
 */
import { expectKept } from './harness.js';
import { configMap, eventsFor } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, dropWithPruneHeldBack, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt22-rl');

it('orphan deletion: a dropped dependent another ApplySet took keeps no operator reference to its dropped sibling', async () => {
  const { env, ns, t } = f;
  const { bundle, p, c } = await dependentPair(f, 'rl', 'rl', [{ name: 'q', object: configMap('rl-q') }]);

  // Drop p and c; a new resource fails to apply, so the prune is held back.
  await dropWithPruneHeldBack(f, 'rl', 'rl', [{ name: 'q', object: configMap('rl-q') }], bundle.metadata.uid);

  // Another ApplySet tool takes rl-c into its set (kubectl apply --applyset rewrites the part-of label).
  await env.client.patch(
    t.configMap,
    ns,
    'rl-c',
    { metadata: { labels: { 'applyset.kubernetes.io/part-of': 'applyset-0ther-t00l-v1' } } },
    'merge',
    { fieldManager: 'kubectl-client-side-apply' },
  );

  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'rl', bundle.metadata.uid);
  const orphaned = await env.client.get(t.configMap, ns, 'rl-c');
  console.log(
    'rl-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('rl events:', JSON.stringify(await eventsFor(env, ns, 'rl')));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
