/**
 * Red team 21: the orphan trace is read only on objects at the Bundle's
 * coordinates, while the orphan clean-up also covers a dependent the spec
 * dropped (red team 13). When the one object left at the coordinates carries
 * no trace (an IfNotPresent object whose part-of label the person's ApplySet
 * tooling wrote back: red team 20), the dropped dependent's trace (its
 * dependency record, its applied-hash, its part-of label naming this
 * Bundle) is not looked at: the orphan deletion reads as background, the
 * dependent keeps the operator's dependency reference, and
 * kube-controller-manager collects it once its former sibling is deleted.
 *
 * Steps:
 *  1. A person creates ConfigMap rd-p with their ApplySet's part-of label
 *     (field manager "kubectl").
 *  2. Bundle rd lists rd-p (`smith.atlassian.com/apply: IfNotPresent`,
 *     adopted by bookkeeping: no applied-hash) and rd-c, which
 *     `references: [{resource: p}]` (the operator writes rd-c -> rd-p,
 *     recorded in rd-c's dependencyReferences annotation).
 *  3. The operator restarts (an upgrade). Meanwhile: an edit drops rd-c
 *     from rd (not yet decided: docs/safety.md, finalizer row, "a dependent
 *     the spec dropped whose prune was held back or not yet decided"); the
 *     person's pipeline re-applies rd-p (server-side apply, force: part-of
 *     names their set again); rd is deleted with `--cascade=orphan` and
 *     kube-controller-manager orphans first (docs/deletion.md allows it).
 *  4. The operator is back; rd goes. A person deletes rd-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan; docs/safety.md: "orphan also cleans
 * an uncontrolled object whose recorded dependency reference names an
 * object at the Bundle's coordinates"): rd-c kept.
 *
 * What happens: effectivePropagation (src/core/bundle/finalize.ts:74-95)
 * returns false for every object not at the coordinates (line 80), so
 * rd-c's traces (dependencyReferences, applied-hash, part-of = rd's id) do
 * not count; rd-p has none (IfNotPresent: no applied-hash; part-of
 * rewritten; no dependency of its own). Read as background, nothing held,
 * the finalizer goes; isOrphanCandidate (finalize-keep.ts), which would
 * have cleaned rd-c, only runs for an orphan reading.
 *
 * Second test: no drift control and no ApplySet tooling. The kept sibling
 * loses its traces to the commonest way of updating a ConfigMap by hand
 * (`kubectl create configmap ... --dry-run=client -o yaml | kubectl replace
 * -f -`: the manifest has no labels or annotations), done while the
 * operator is still down after the orphan deletion: same outcome.
 *
 * Fixed: the orphan trace counts the Bundle's ApplySet member wherever it
 * is, and off the coordinates a dependency record naming an object at them
 * (core/bundle/finalize.ts effectivePropagation).
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations, ApplySetLabels, Finalizers } from '../../src/api/names.js';
import { applySetId } from '../../src/core/bundle/applyset.js';
import { expectKept, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, eventsFor, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { dependentPair, orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt21-rd');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const PERSONS_SET = 'applyset-personsPipelineSetIdXXXXXXXXXXXXXXXXXXX-v1';

it('an orphan deletion keeps a dependent the spec dropped, when the object left at the coordinates carries no trace', async () => {
  const { env, ns, t } = f;
  const personsApply = async (): Promise<void> => {
    await env.client.apply(
      t.configMap,
      { ...configMap('rd-p'), metadata: { name: 'rd-p', namespace: ns, labels: { [ApplySetLabels.partOf]: PERSONS_SET } } },
      { fieldManager: 'kubectl', force: true },
    );
  };
  await personsApply();
  const ifnp = { [Annotations.apply]: 'IfNotPresent' };
  await applyBundle(env, ns, 'rd', [
    { name: 'p', object: configMap('rd-p', { key: 'value' }, ifnp) },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('rd-c') },
  ]);
  const b = await waitForReady(env, ns, 'rd');
  const p = await env.client.get(t.configMap, ns, 'rd-p');
  await waitFor("rd-c to reference rd-p and rd, and rd-p to be rd's member", async () => {
    const c = await env.client.get(t.configMap, ns, 'rd-c');
    const cur = await env.client.get(t.configMap, ns, 'rd-p');
    const refs = c.metadata.ownerReferences ?? [];
    return (
      refs.some((r) => r.uid === p.metadata.uid) &&
      refs.some((r) => r.uid === b.metadata.uid && r.controller === true) &&
      cur.metadata.labels?.[ApplySetLabels.partOf] === applySetId('rd', ns)
    );
  });
  await sleep(2_000);
  const c = await env.client.get(t.configMap, ns, 'rd-c');
  console.log('rd-c before:', JSON.stringify(c.metadata.ownerReferences), JSON.stringify(c.metadata.annotations));

  await f.operator.stop();
  await applyBundle(env, ns, 'rd', [{ name: 'p', object: configMap('rd-p', { key: 'value' }, ifnp) }]);
  await personsApply();
  const relabeled = await env.client.get(t.configMap, ns, 'rd-p');
  console.log('rd-p re-applied by the person:', JSON.stringify(relabeled.metadata.labels), JSON.stringify(relabeled.metadata.annotations));
  await orphanDeletionFinishedWhileDown(f, 'rd', b.metadata.uid ?? '');
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'rd-c');
  console.log(
    'rd-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('rd events:', JSON.stringify(await eventsFor(env, ns, 'rd')));
  expectKept(orphaned, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 300_000);

it('the same with no drift control: the person updates the kept sibling the usual way (`kubectl create configmap --dry-run=client -o yaml | kubectl replace -f -`)', async () => {
  const { env, ns, t } = f;
  const { bundle: b, p, c } = await dependentPair(f, 'rr', 'rr');

  // The operator restarts (an upgrade): the edit that drops rr-c and the orphan deletion land meanwhile.
  await f.operator.stop();
  await applyBundle(env, ns, 'rr', [{ name: 'p', object: configMap('rr-p') }]);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rr', { uid: b.metadata.uid ?? '', propagationPolicy: 'Orphan' });
  await waitFor(
    'kube-controller-manager to orphan',
    async () => {
      const cur = await getBundle(env, ns, 'rr');
      return cur !== undefined && !(cur.metadata.finalizers ?? []).includes(Finalizers.orphan);
    },
    { timeoutMs: 60_000 },
  );
  // rr-p is the person's now: they update it with `kubectl replace` from a manifest of their own (no labels, no
  // annotations, no ownerReferences: what a replace leaves of the metadata), as a JSON patch of the same effect.
  const live = await env.client.get(t.configMap, ns, 'rr-p');
  await env.client.patch(
    t.configMap,
    ns,
    'rr-p',
    [
      { op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion },
      { op: 'remove', path: '/metadata/labels' },
      { op: 'remove', path: '/metadata/annotations' },
      { op: 'replace', path: '/data', value: { key: 'new value' } },
    ],
    'json',
    { fieldManager: 'kubectl-replace' },
  );
  const replaced = await env.client.get(t.configMap, ns, 'rr-p');
  console.log('rr-p replaced:', JSON.stringify(replaced.metadata.labels ?? {}), JSON.stringify(replaced.metadata.annotations ?? {}));
  await f.startOperator();
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'rr', { timeoutMs: 60_000 });
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'rr-c');
  console.log(
    'rr-c after the orphan deletion:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  console.log('rr events:', JSON.stringify(await eventsFor(env, ns, 'rr')));
  expectKept(orphaned, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 300_000);
