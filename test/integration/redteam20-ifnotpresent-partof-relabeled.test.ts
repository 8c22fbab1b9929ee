/**
 * Red team 20: `--cascade=orphan` of a Bundle that adopted a person's
 * objects with `smith.atlassian.com/apply: IfNotPresent`, when the person's
 * own tooling (a kubectl ApplySet: `kubectl apply --server-side
 * --applyset=... --force-conflicts`) re-applies its manifests while the
 * operator is down: the ApplySet part-of label names the person's set again,
 * the objects never carried applied-hash, so the orphan deletion finished by
 * kube-controller-manager first is read as a background one; the
 * operator's dependency reference stays, and kube-controller-manager later
 * collects the orphaned dependent through its former sibling.
 *
 * Steps:
 *  1. A person creates ConfigMaps ip-p and ip-c with their ApplySet's label
 *     (applyset.kubernetes.io/part-of: the person's set id), field manager
 *     "kubectl".
 *  2. Bundle ip lists both with `smith.atlassian.com/apply: IfNotPresent`,
 *     ip-c `references: [{resource: p}]`. The operator adopts them by its
 *     bookkeeping patch (controller and dependency references, its
 *     annotations, part-of rewritten to the Bundle's id), no applied-hash.
 *  3. The operator stops; the person's pipeline re-applies its manifests
 *     (server-side apply, force): part-of names the person's set again
 *     (nothing else changes: ownerReferences and the operator's annotations
 *     stay, the managed label too).
 *  4. ip is deleted with `--cascade=orphan`; kube-controller-manager orphans
 *     first (docs/deletion.md allows it). The operator starts.
 *  5. A person deletes ip-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "every object stays ... the finalizer
 * removes ... dependency ownerReferences to sibling objects ... so each
 * object ... is not collected later when a former sibling is deleted. The
 * collector may finish ... before the operator looks: the operator then
 * recognises the orphaning from the objects"; docs/safety.md, Bundle
 * finalizer row: "orphan strips what the operator wrote so a later sibling
 * deletion cannot cascade"): ip-c kept.
 *
 * What happens: ip-c is collected by kube-controller-manager.
 * effectivePropagation (src/core/bundle/finalize.ts:87-88) takes as a trace
 * only the part-of label with this Bundle's id (a label another ApplySet
 * tool owns and rewrites: it is the standard label kubectl writes) or the
 * applied-hash annotation (never written on an IfNotPresent object adopted
 * by bookkeeping, src/core/bundle/drift.ts:127-129). Neither is there:
 * read as background, nothing held (the collector took ip's references
 * off), the finalizer goes, ip-c keeps the operator's dependency reference
 * (and its `smith.atlassian.com/dependencyReferences` record) to ip-p.
 *
 * Fix direction: count as a trace what only the operator writes and no
 * standard tool rewrites: the dependencyReferences annotation (exactly the
 * bookkeeping whose survival does the harm), the declared-rules proof, the
 * managed label; or strip recorded dependency references from every
 * uncontrolled object at the coordinates in background too (nothing the
 * Bundle no longer controls needs them).
 */
import { Annotations, ApplySetLabels } from '../../src/api/names.js';
import { applySetId } from '../../src/core/bundle/applyset.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt20-ifrl');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const PERSONS_SET = 'applyset-personsPipelineSetIdXXXXXXXXXXXXXXXXXXX-v1';

it('an orphan deletion keeps an IfNotPresent dependent whose part-of label a kubectl ApplySet wrote back', async () => {
  const { env, ns, t } = f;
  const personsApply = async (): Promise<void> => {
    for (const n of ['ip-p', 'ip-c']) {
      await env.client.apply(
        t.configMap,
        { ...configMap(n), metadata: { name: n, namespace: ns, labels: { [ApplySetLabels.partOf]: PERSONS_SET } } },
        { fieldManager: 'kubectl', force: true },
      );
    }
  };
  await personsApply();
  const ifnp = { [Annotations.apply]: 'IfNotPresent' };
  await applyBundle(env, ns, 'ip', [
    { name: 'p', object: configMap('ip-p', { key: 'value' }, ifnp) },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('ip-c', { key: 'value' }, ifnp) },
  ]);
  const b = await waitForReady(env, ns, 'ip');
  const p = await env.client.get(t.configMap, ns, 'ip-p');
  await waitFor("ip-c to reference ip-p and ip, and be ip's member", async () => {
    const c = await env.client.get(t.configMap, ns, 'ip-c');
    const refs = c.metadata.ownerReferences ?? [];
    return (
      refs.some((r) => r.uid === p.metadata.uid) &&
      refs.some((r) => r.uid === b.metadata.uid && r.controller === true) &&
      c.metadata.labels?.[ApplySetLabels.partOf] === applySetId('ip', ns)
    );
  });
  await sleep(2_000);
  const c = await env.client.get(t.configMap, ns, 'ip-c');
  console.log(
    'ip-c before:',
    JSON.stringify(c.metadata.ownerReferences),
    JSON.stringify(c.metadata.labels),
    JSON.stringify(c.metadata.annotations),
  );

  await f.operator.stop();
  await personsApply();
  const relabeled = await env.client.get(t.configMap, ns, 'ip-c');
  console.log(
    'ip-c re-applied by the person:',
    JSON.stringify(relabeled.metadata.ownerReferences),
    JSON.stringify(relabeled.metadata.labels),
  );
  await orphanDeletionFinishedWhileDown(f, 'ip', b.metadata.uid ?? '');
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'ip-c');
  console.log('ip-c after the orphan deletion:', JSON.stringify(orphaned.metadata.ownerReferences ?? []));
  expectKept(orphaned, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 300_000);
