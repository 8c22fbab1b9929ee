/**
 * Red team 21: `--cascade=orphan` of a Bundle whose spec dropped a
 * dependent and the sibling it depends on, while their prune was held back
 * (another resource fails to apply): the finalizer cleans a dropped
 * dependent only when its recorded dependency reference names an object at
 * the Bundle's coordinates (red team 13), and the sibling was dropped too.
 * The dependent keeps the operator's dependency reference, and
 * kube-controller-manager collects it once its former sibling is deleted.
 *
 * Steps:
 *  1. Bundle dp lists ConfigMaps dp-p and dp-c, dp-c `references:
 *     [{resource: p}]` (the operator writes dp-c -> dp-p, recorded in dp-c's
 *     dependencyReferences annotation), and dp-q.
 *  2. An edit drops dp-p and dp-c and adds a resource the API server refuses
 *     (red team 13's ow-bad): "not pruning", both stay, still controlled.
 *  3. The operator restarts (an upgrade) while dp is deleted with
 *     `--cascade=orphan`; kube-controller-manager orphans first.
 *  4. The operator is back, dp goes. A person deletes dp-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "every object stays ... the finalizer
 * removes the rest of what the operator wrote (dependency ownerReferences to
 * sibling objects ...) so each object keeps only the references its user
 * wrote and is not collected later when a former sibling is deleted"): dp-c
 * kept. The user wrote no reference on dp-c.
 *
 * What happens: dp-q carries the trace (effectivePropagation reads orphan),
 * but isOrphanCandidate (src/core/bundle/finalize-keep.ts, the line
 * `if (!input.coordinates.has(objectKey(o))) return [...recordedDependencyUids(annotations)].some((uid) => coordinateUids.has(uid))`)
 * takes an uncontrolled object off the coordinates only when its dependency
 * record names an object at them; dp-p is off them too. dp-c keeps the
 * operator's reference to dp-p, and kube-controller-manager collects it.
 *
 * Fixed: off the coordinates, the Bundle's ApplySet member is an orphan
 * candidate too (core/bundle/finalize-keep.ts orphanCandidates).
 */
import { expectKept } from './harness.js';
import { configMap, eventsFor } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, dropWithPruneHeldBack, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt21-dp');

it('orphan deletion with a prune held back: a dropped dependent keeps no operator reference to its dropped sibling', async () => {
  const { env, ns, t } = f;
  const { bundle, p, c } = await dependentPair(f, 'dp', 'dp', [{ name: 'q', object: configMap('dp-q') }]);

  // Drop p and c; a new resource fails to apply, so the prune is held back.
  await dropWithPruneHeldBack(f, 'dp', 'dp', [{ name: 'q', object: configMap('dp-q') }], bundle.metadata.uid);

  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'dp', bundle.metadata.uid);
  const orphaned = await env.client.get(t.configMap, ns, 'dp-c');
  console.log(
    'dp-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('dp events:', JSON.stringify(await eventsFor(env, ns, 'dp')));
  expectKept(orphaned, c.metadata.uid);

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
