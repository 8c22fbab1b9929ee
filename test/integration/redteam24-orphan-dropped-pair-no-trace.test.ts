/**
 * Red team 24: when kube-controller-manager finishes a `--cascade=orphan`
 * deletion before the finalizer's first pass, the deletion is told from
 * the objects' traces; off the Bundle's coordinates an object the operator
 * wrote is a trace only when its dependency record names an object AT them
 * (orphan-evidence.ts isOrphanTrace). The orphan clean-up follows records
 * transitively (finalize-keep.ts orphanCandidates: "an object at the
 * coordinates or another candidate", red team 21's dropped pair), the trace
 * does not. An edit that drops a dependent together with the sibling it
 * depends on (a rename of both in the spec), landed while the operator is
 * down, leaves nothing at the coordinates: the orphan deletion reads as
 * background, the dependent keeps the operator's dependency reference, and
 * kube-controller-manager collects it once its former sibling is deleted.
 * (red team 21's `redteam21-orphan-dropped-pair` kept an object at the
 * coordinates, which carried the trace.)
 *
 * Steps:
 *  1. Bundle rn lists ConfigMaps rn-p and rn-c, which `references:
 *     [{resource: p}]` (rn-c -> rn-p, recorded in rn-c's
 *     dependencyReferences); Ready.
 *  2. The operator restarts (an upgrade). Meanwhile an edit replaces both
 *     with ConfigMap rn-q (not applied yet: the operator is down; rn-p and
 *     rn-c not pruned yet: docs/safety.md, finalizer row, "a dependent the
 *     spec dropped whose prune was held back or not yet decided"); rn is
 *     deleted with `--cascade=orphan` and kube-controller-manager orphans
 *     first (docs/deletion.md allows it).
 *  3. The operator is back; rn goes. A person deletes rn-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "every object stays ... the finalizer
 * removes ... dependency ownerReferences to sibling objects ... so each
 * object ... is not collected later when a former sibling is deleted. The
 * collector may finish ... before the operator looks: the operator then
 * recognises the orphaning from the objects"; docs/safety.md, finalizer
 * row: "orphan strips what the operator wrote so a later sibling deletion
 * cannot cascade, also when the collector finished the orphaning before the
 * finalizer's first pass"): rn-c kept.
 *
 * What happens: effectivePropagation (src/core/bundle/finalize.ts:73) finds
 * no trace: nothing is at the coordinates (rn-q does not exist, so
 * coordinateUids is empty); rn-p and rn-c are the operator's and rn's
 * members off the coordinates ('member-off-coordinates'), a trace only when
 * the record names a coordinate uid (src/core/bundle/orphan-evidence.ts:
 * 77-79, recordNamesAny(annotations, coordinateUids)): rn-c's names rn-p,
 * off them too. Read as background, nothing held (the collector took rn's
 * references off), the finalizer goes; rn-c keeps the operator's reference
 * to rn-p and its record, and kube-controller-manager collects it.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept } from './harness.js';
import { applyBundle, configMap, eventsFor } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt24-rn');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('an orphan deletion keeps a dependent the spec dropped with its sibling, when nothing is left at the coordinates', async () => {
  const { env, ns, t } = f;
  const { bundle: b, p, c } = await dependentPair(f, 'rn', 'rn');
  expect(c.metadata.annotations?.[Annotations.dependencyReferences]).toContain(p.metadata.uid);

  // The operator restarts (an upgrade): the edit and the orphan deletion land meanwhile.
  await f.operator.stop();
  await applyBundle(env, ns, 'rn', [{ name: 'q', object: configMap('rn-q') }]);
  await orphanDeletionFinishedWhileDown(f, 'rn', b.metadata.uid);
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'rn-c');
  console.log(
    'rn-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('rn events:', JSON.stringify(await eventsFor(env, ns, 'rn')));
  expectKept(orphaned, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 300_000);
