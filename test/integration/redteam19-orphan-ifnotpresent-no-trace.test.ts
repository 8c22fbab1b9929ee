/**
 * Red team 19: `--cascade=orphan` of a Bundle whose objects all existed
 * before it and are listed with `smith.atlassian.com/apply: IfNotPresent`:
 * when kube-controller-manager finishes orphaning first, the deletion is
 * read as background, the operator's dependency reference stays, and
 * kube-controller-manager later collects the orphaned dependent when its
 * former sibling is deleted.
 *
 * Steps:
 *  1. A person creates ConfigMaps ip-p and ip-c.
 *  2. Bundle ip lists both with `smith.atlassian.com/apply: IfNotPresent`,
 *     ip-c `references: [{resource: p}]`. The operator adopts them by its
 *     bookkeeping patch (controller and dependency references, its
 *     annotations) and never applies their fields: no applied-hash.
 *  3. The operator restarts while ip is deleted with `--cascade=orphan`;
 *     kube-controller-manager orphans first (docs/deletion.md allows it).
 *  4. A person deletes ip-p (nobody's now).
 *
 * Expected (docs/deletion.md, Orphan: "every object stays ... the finalizer
 * removes ... dependency ownerReferences to sibling objects ... so each
 * object ... is not collected later when a former sibling is deleted. The
 * collector may finish (and remove the `orphan` finalizer) before the
 * operator looks: the operator then recognises the orphaning from the
 * objects"; docs/safety.md, Bundle finalizer row): ip-c kept.
 *
 * What happens (if this fails): effectivePropagation (src/core/bundle/
 * finalize.ts:69-82) takes as an orphan trace only an object carrying the
 * applied-hash annotation; bookkeepingPatch (src/core/bundle/drift.ts:
 * 127-129) writes every smith.atlassian.com annotation but the hash, so an
 * IfNotPresent object adopted from a person never carries one: no trace,
 * read as background, nothing held, the finalizer goes, ip-c keeps the
 * operator's dependency reference to ip-p.
 *
 * Fix direction: count as a trace any uncontrolled object at the Bundle's
 * coordinates carrying the operator's bookkeeping (managed label, ApplySet
 * part-of, declared-rules, dependencyReferences), not only applied-hash; or
 * read the orphaning from the Bundle itself (the collector's Update that
 * removed the `orphan` finalizer is in its managedFields).
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown, siblingDeletedDependentKept } from './orphan-traces.js';

const f = referenceFixture('rt19-ifnp');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('an orphan deletion keeps an IfNotPresent dependent the Bundle adopted', async () => {
  const { env, ns, t } = f;
  for (const n of ['ip-p', 'ip-c']) {
    await env.client.apply(t.configMap, { ...configMap(n), metadata: { name: n, namespace: ns } }, { fieldManager: 'a-person' });
  }
  const ifnp = { [Annotations.apply]: 'IfNotPresent' };
  await applyBundle(env, ns, 'ip', [
    { name: 'p', object: configMap('ip-p', { key: 'value' }, ifnp) },
    { name: 'c', references: [{ resource: 'p' }], object: configMap('ip-c', { key: 'value' }, ifnp) },
  ]);
  const b = await waitForReady(env, ns, 'ip');
  const p = await env.client.get(t.configMap, ns, 'ip-p');
  await waitFor('ip-c to reference ip-p and ip', async () => {
    const c = await env.client.get(t.configMap, ns, 'ip-c');
    const refs = c.metadata.ownerReferences ?? [];
    return refs.some((r) => r.uid === p.metadata.uid) && refs.some((r) => r.uid === b.metadata.uid && r.controller === true);
  });
  await sleep(2_000);
  const c = await env.client.get(t.configMap, ns, 'ip-c');
  console.log('ip-c before:', JSON.stringify(c.metadata.ownerReferences), JSON.stringify(c.metadata.annotations));

  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'ip', b.metadata.uid ?? '');
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'ip-c');
  console.log('ip-c after the orphan deletion:', JSON.stringify(orphaned.metadata.ownerReferences ?? []));
  expectKept(orphaned, c.metadata.uid ?? '');

  await siblingDeletedDependentKept(env, t.configMap, ns, p, c);
}, 240_000);
