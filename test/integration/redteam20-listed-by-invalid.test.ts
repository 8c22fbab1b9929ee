/**
 * Red team 20: an orphan deletion finished by the collector first is read as
 * a background one when another live Bundle lists the objects (but has not
 * taken them: its spec is invalid); the dependency reference the operator
 * wrote stays, and kube-controller-manager later collects the orphaned
 * dependent through its former sibling, an object a live Bundle lists.
 *
 * Steps:
 *  1. Bundle rd-b lists ConfigMaps rd-p and rd-c, rd-c with
 *     `references: [{resource: p}]`: rd-b controls both, rd-c carries the
 *     dependency ownerReference rd-c -> rd-p (blockOwnerDeletion).
 *  2. The operator stops. Bundle rd-z is created listing rd-p and rd-c too,
 *     plus a resource whose reference names a missing resource (an invalid
 *     spec: it writes nothing, takes nothing).
 *  3. rd-b is deleted with `--cascade=orphan`; kube-controller-manager
 *     orphans first (rd-b's references go, the `orphan` finalizer goes), as
 *     docs/deletion.md allows. The operator starts.
 *  4. A person deletes rd-p.
 *
 * Expected (docs/deletion.md, Orphan: "the finalizer removes the rest of
 * what the operator wrote (dependency ownerReferences to sibling objects
 * ...) so each object ... is not collected later when a former sibling is
 * deleted"; docs/safety.md, Bundle finalizer row: "objects another live
 * Bundle lists are let go to it, in every propagation; orphan strips what
 * the operator wrote so a later sibling deletion cannot cascade"; the brief's
 * standard: an object a live Bundle lists is never deleted): rd-c kept.
 *
 * What happens: rd-c is collected by kube-controller-manager. The
 * finalizer's effectivePropagation (src/core/bundle/finalize.ts:80,
 * `listedByOther(...) !== undefined` -> not a trace) skips every object
 * another live Bundle lists, so rd-p and rd-c (both listed by rd-z, the only
 * objects at rd-b's coordinates) leave no orphan trace: read as background,
 * the plan holds nothing (the collector took rd-b's references off;
 * backgroundSteps only looks at what rd-b controls), no let-go runs, the
 * finalizer goes, and rd-c keeps the operator's dependency reference to
 * rd-p. rd-z, invalid, never applies rd-c (the apply would have rewritten
 * its references), so deleting rd-p cascades to rd-c.
 *
 * Fix direction: an object another live Bundle lists is not evidence
 * against an orphan deletion, it is just not evidence for one; keep it out
 * of the "released" exclusions and count the part-of label / applied-hash
 * on it as a trace (the orphan path lets it go to the lister anyway), or
 * in background also let go (strip the operator's references from) every
 * uncontrolled object at the coordinates that another live Bundle lists.
 */
import { conditionOf, expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt20-lsinv');

it('an orphan deletion of a Bundle whose objects another (invalid) Bundle lists strips its dependency references', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rd-b', [
    { name: 'p', object: configMap('rd-p') },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('rd-c') },
  ]);
  const b = await waitForReady(env, ns, 'rd-b');
  await waitFor('rd-c to reference rd-p', async () => {
    const p = await env.client.get(t.configMap, ns, 'rd-p');
    const c = await env.client.get(t.configMap, ns, 'rd-c');
    return (c.metadata.ownerReferences ?? []).some((r) => r.uid === p.metadata.uid);
  });
  const p = await env.client.get(t.configMap, ns, 'rd-p');
  const c = await env.client.get(t.configMap, ns, 'rd-c');
  console.log('rd-c before:', JSON.stringify(c.metadata.ownerReferences), JSON.stringify(c.metadata.labels));

  await f.operator.stop();
  await applyBundle(env, ns, 'rd-z', [
    { name: 'p', object: configMap('rd-p') },
    { name: 'c', object: configMap('rd-c') },
    { name: 'g', references: [{ resource: 'ghost' }], object: configMap('rd-g') },
  ]);
  await orphanDeletionFinishedWhileDown(f, 'rd-b', b.metadata.uid ?? '');
  await waitFor('rd-z to report its invalid spec', async () => conditionOf(await getBundle(env, ns, 'rd-z'), 'Error')?.status === 'True');
  const after = await env.client.get(t.configMap, ns, 'rd-c');
  console.log('rd-c after the orphan deletion:', JSON.stringify(after.metadata.ownerReferences ?? []));
  expectKept(after, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 300_000);
