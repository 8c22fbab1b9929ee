/**
 * Red team 24: since red team 23, an orphan deletion cleans an object off
 * the Bundle's coordinates only when "the operator wrote" it
 * (owner-references.ts writtenByOperator: an entry of manager
 * `bundlesmith` in its managedFields). managedFields are no record of who
 * wrote an object (docs/safety.md, finalizer row: red team 14, "whatever
 * happens to managedFields (a reset, a later server-side apply, the API
 * server's cap of ten update managers)"): once the operator's entry is gone
 * from a dependent the spec dropped (red team 21's case), the orphan
 * deletion leaves it the operator's dependency reference and record, and
 * kube-controller-manager collects it when a person deletes its former
 * sibling.
 *
 * Steps (both tests):
 *  1. Bundle lists ConfigMaps p and c, which `references: [{resource: p}]`
 *     (c -> p, recorded in c's dependencyReferences); Ready.
 *  2. The operator restarts (an upgrade). Meanwhile an edit drops c from
 *     the Bundle (its prune not decided yet: docs/safety.md, finalizer row,
 *     "a dependent the spec dropped whose prune was held back or not yet
 *     decided"), c's managedFields lose the operator's entry, the Bundle is
 *     deleted with `--cascade=orphan` and kube-controller-manager orphans
 *     first (docs/deletion.md allows it).
 *       first test: a person resets c's managedFields (`kubectl patch cm c
 *       --type=merge -p '{"metadata":{"managedFields":[{}]}}'`, the
 *       documented way to strip them);
 *       second test: no managedFields edited: c is an IfNotPresent object
 *       the Bundle adopted from a person (the operator's only entry is its
 *       bookkeeping Update) and eleven tools label it (`kubectl label
 *       --field-manager=...`): the API server merges the oldest Update
 *       entries into "ancient-changes" (capmanagers.go,
 *       DefaultMaxUpdateManagers = 10).
 *  3. The operator is back; the Bundle goes. A person deletes p (nobody's
 *     now).
 *
 * Expected (docs/deletion.md, Orphan; docs/safety.md, finalizer row:
 * "orphan also cleans ... one off them that the operator wrote and whose
 * recorded dependency reference names an object at the Bundle's
 * coordinates ... (a dependent the spec dropped ...:
 * `redteam21-orphan-dropped-pair`)", and managedFields are no evidence
 * either way): c kept.
 *
 * What happens: orphanEvidence (src/core/bundle/orphan-evidence.ts:42,
 * `if (!writtenByOperator(o.metadata.managedFields)) return 'none';`) reads
 * c as no evidence: orphanCandidacy 'no' (orphan-evidence.ts:110-112), so
 * orphanCandidates (finalize-keep.ts:206-225) leaves c out and no orphan
 * step takes out its dependency reference to p (recorded in its
 * dependencyReferences annotation, which operatorWrittenReferences would
 * count as the operator's whatever managedFields say). The finalizer goes
 * (p, at the coordinates, carries the traces: the deletion is read as
 * orphan); kube-controller-manager collects c once p is deleted.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations, Finalizers } from '../../src/api/names.js';
import { writtenByOperator } from '../../src/core/bundle/owner-references.js';
import { expectKept, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, eventsFor, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, siblingDeletedDependentKept } from './orphan-traces.js';
import type { KubeObject } from '../../src/kube/types.js';

const f = referenceFixture('rt24-mfd');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** With the operator stopped: `kubectl delete bundle --cascade=orphan`, until kube-controller-manager has orphaned. */
async function orphanDeletionLands(name: string, uid: string): Promise<void> {
  const { env, ns } = f;
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, name, { uid, propagationPolicy: 'Orphan' });
  await waitFor(
    'kube-controller-manager to orphan',
    async () => {
      const cur = await getBundle(env, ns, name);
      return cur !== undefined && !(cur.metadata.finalizers ?? []).includes(Finalizers.orphan);
    },
    { timeoutMs: 60_000 },
  );
}

/** The operator is back; once the Bundle is gone, c is kept and survives a person's deletion of p. */
async function afterRestart(name: string, p: KubeObject, c: KubeObject): Promise<void> {
  const { env, ns, t } = f;
  await f.startOperator();
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, name, { timeoutMs: 60_000 });
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, c.metadata.name);
  console.log(
    `${c.metadata.name} after the orphan deletion:`,
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log(`${name} events:`, JSON.stringify(await eventsFor(env, ns, name)));
  expectKept(orphaned, c.metadata.uid ?? '');
  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}

it('an orphan deletion keeps a dependent the spec dropped whose managedFields a person reset', async () => {
  const { env, ns, t } = f;
  const { bundle: b, p, c } = await dependentPair(f, 'mr', 'mr');
  expect(c.metadata.annotations?.[Annotations.dependencyReferences]).toContain(p.metadata.uid);

  await f.operator.stop();
  await applyBundle(env, ns, 'mr', [{ name: 'p', object: configMap('mr-p') }]);
  await env.client.patch(t.configMap, ns, 'mr-c', { metadata: { managedFields: [{}] } }, 'merge', { fieldManager: 'kubectl-patch' });
  const reset = await env.client.get(t.configMap, ns, 'mr-c');
  console.log('mr-c reset:', JSON.stringify(reset.metadata));
  expect(writtenByOperator(reset.metadata.managedFields)).toBe(false);
  expect(reset.metadata.annotations?.[Annotations.dependencyReferences]).toContain(p.metadata.uid);
  await orphanDeletionLands('mr', b.metadata.uid ?? '');
  await afterRestart('mr', p, c);
}, 300_000);

it('an orphan deletion keeps a dependent the spec dropped whose operator entry eleven labelling tools merged into ancient-changes', async () => {
  const { env, ns, t } = f;
  // A person's ConfigMap, which the Bundle adopts with IfNotPresent: the operator writes only its bookkeeping (an Update).
  await env.client.apply(t.configMap, { ...configMap('ma-c'), metadata: { name: 'ma-c', namespace: ns } }, { fieldManager: 'a-person' });
  await applyBundle(env, ns, 'ma', [
    { name: 'p', object: configMap('ma-p') },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('ma-c', { key: 'value' }, { [Annotations.apply]: 'IfNotPresent' }) },
  ]);
  const b = await waitForReady(env, ns, 'ma');
  const p = await env.client.get(t.configMap, ns, 'ma-p');
  const c = await waitFor('ma-c to reference ma-p, recorded', async () => {
    const o = await env.client.get(t.configMap, ns, 'ma-c');
    return (o.metadata.ownerReferences ?? []).some((r) => r.uid === p.metadata.uid) &&
      o.metadata.annotations?.[Annotations.dependencyReferences] !== undefined
      ? o
      : undefined;
  });
  console.log('ma-c adopted:', JSON.stringify(c.metadata.managedFields));

  await f.operator.stop();
  await applyBundle(env, ns, 'ma', [{ name: 'p', object: configMap('ma-p') }]);
  // Eleven tools label it (each an update under its own field manager).
  for (let i = 0; i < 11; i++)
    await env.client.patch(t.configMap, ns, 'ma-c', { metadata: { labels: { [`tool-${i}`]: 'x' } } }, 'merge', {
      fieldManager: `tool-${i}`,
    });
  const labelled = await env.client.get(t.configMap, ns, 'ma-c');
  console.log('ma-c after eleven tools:', JSON.stringify(labelled.metadata.managedFields));
  expect(writtenByOperator(labelled.metadata.managedFields)).toBe(false);
  expect(labelled.metadata.annotations?.[Annotations.dependencyReferences]).toContain(p.metadata.uid);
  await orphanDeletionLands('ma', b.metadata.uid ?? '');
  await afterRestart('ma', p, c);
}, 300_000);
