/**
 * Red team 23: the orphan trace counts the Bundle's ApplySet member
 * "wherever it is" (a13496d), and the member is told by the Bundle's name
 * and namespace only (applySetId). An orphan deletion leaves the part-of
 * label on what it keeps when kube-controller-manager orphaned first
 * (orphanPatch -> partOfRemoval removes it only with the Bundle's reference). So when a Bundle is re-created under the same name, the kept
 * objects of its predecessor read as traces of an orphan deletion of the new
 * one: a plain (background) `kubectl delete bundle` of the new Bundle is
 * taken for `--cascade=orphan`, and nothing of it is deleted.
 *
 * Steps:
 *  1. Bundle app lists ConfigMap app-old; Ready.
 *  2. The operator restarts (an upgrade); meanwhile `kubectl delete bundle
 *     app --cascade=orphan` and kube-controller-manager orphans first (as
 *     docs/deletion.md allows). The operator's finalizer reads it as an
 *     orphan deletion and goes; app-old kept (as asked), uncontrolled, and
 *     still labelled part-of = applySetId('app', ns): partOfRemoval
 *     (applyset.ts) drops the label only in a patch that takes out the
 *     Bundle's reference, which the collector already took.
 *  3. Bundle app is created again (new UID), listing only app-new; Ready.
 *  4. `kubectl delete bundle app` (background, the default).
 *
 * Expected (docs/deletion.md, the deletion table: background deletes "every
 * object" without a delay/policy; docs/safety.md, finalizer row:
 * "background: the Bundle's objects without a delay and without another
 * owner" are deleted): app-new deleted.
 *
 * What happens: effectivePropagation (src/core/bundle/finalize.ts:89,
 * `if (isMemberOf(o, input.bundle.name, input.bundle.namespace)) return
 * true;`) finds app-old: uncontrolled, no former-bundle label, part-of
 * label naming 'app' in ns -> 'Orphan'. stepsFor then orphans
 * (finalize-keep.ts orphanCandidacy: isMemberOf -> candidate; app-new
 * controlled -> candidate; orphanStep strips the Bundle's controller
 * reference), the finalizer goes and app-new survives with no owner: a
 * wrong keep of everything the user asked to delete.
 *
 * Fixed: orphaning takes the Bundle's part-of label off (finalize-keep.ts
 * orphanStep), and membership off the coordinates is no orphan trace.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { ApplySetLabels } from '../../src/api/names.js';
import { applySetId } from '../../src/core/bundle/applyset.js';
import { expectKept, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown } from './orphan-traces.js';

const f = referenceFixture('rt23-rc');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('a background deletion of a Bundle re-created under the same name deletes its objects', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'app', [{ name: 'old', object: configMap('app-old') }]);
  const first = await waitForReady(env, ns, 'app');
  // The operator restarts (an upgrade) while the orphan deletion lands: kube-controller-manager orphans first.
  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'app', first.metadata.uid);
  const old = await env.client.get(t.configMap, ns, 'app-old');
  console.log(
    'app-old kept by the orphan deletion:',
    JSON.stringify(old.metadata.labels),
    JSON.stringify(old.metadata.ownerReferences ?? []),
  );
  // Orphaning now takes the part-of label off; an object an earlier version orphaned still carries it: put it back.
  expect(old.metadata.labels?.[ApplySetLabels.partOf]).toBeUndefined();
  await env.client.patch(
    t.configMap,
    ns,
    'app-old',
    { metadata: { labels: { [ApplySetLabels.partOf]: applySetId('app', ns) } } },
    'merge',
    {
      fieldManager: 'older-bundlesmith',
    },
  );

  await applyBundle(env, ns, 'app', [{ name: 'new', object: configMap('app-new') }]);
  const second = await waitForReady(env, ns, 'app');
  expect(second.metadata.uid).not.toBe(first.metadata.uid);
  await waitFor('app-new controlled by the new app', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'app-new');
    return (o?.metadata.ownerReferences ?? []).some((r) => r.uid === second.metadata.uid && r.controller === true);
  });
  const created = await env.client.get(t.configMap, ns, 'app-new');

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'app', { uid: second.metadata.uid ?? '', propagationPolicy: 'Background' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, 'app', { timeoutMs: 60_000 });
  await sleep(5_000);
  const after = await env.client.tryGet(t.configMap, ns, 'app-new');
  console.log('app-new after the background deletion:', after === undefined ? 'gone' : JSON.stringify(after.metadata));
  console.log('app events:', JSON.stringify(await eventsFor(env, ns, 'app')));
  // The old object is kept, as its orphan deletion asked.
  expectKept(await env.client.tryGet(t.configMap, ns, 'app-old'), old.metadata.uid ?? '');
  expect(created.metadata.uid).toBeDefined();
  expect(after === undefined || after.metadata.deletionTimestamp !== undefined).toBe(true);
}, 300_000);
