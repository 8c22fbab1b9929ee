/**
 * Red team 29: the release record keeps the stamp of a release that has
 * ended. A Bundle that takes hold of a released object ends its release
 * (the take-hold removes the stamp, label and proof), but the record
 * (`default/bundlesmith-release-key-<uid>`) is only set to "cancelled" when
 * the object shows a stamp as the listing is seen: with the stamp taken off
 * first by someone who may only patch the object, the record keeps the old
 * stamp S1 for good. Once the object is kept for good (its new Bundle
 * deleted with `--cascade=orphan`), the first release written back (label,
 * former-bundle annotation, S1, P1) is the recorded one, and the object is
 * deleted at once.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     cm is released with stamp S1 and proof P1, recorded as S1. The user
 *     reads the label, the former-bundle annotation, S1 and P1.
 *  2. The user removes the stamp from cm (a removal can only put a deletion
 *     off: the proof no longer checks, the sweep keeps cm, unproven).
 *  3. Bundle `app` is applied again listing cm: it takes hold (label, proof
 *     and former-bundle annotation removed, controller reference written).
 *     No stamp was on cm, so no listing cancel is recorded: the record
 *     still says S1.
 *  4. `kubectl delete bundle app --cascade=orphan`: cm is orphaned, kept.
 *  5. After S1 + 20s the user writes the label, the annotation, S1 and P1
 *     back.
 *
 * Expected: cm is kept. An orphan deletion keeps every object (docs/safety.md,
 * Bundle finalizer row: "orphan strips what the operator wrote so a later
 * sibling deletion cannot cascade"); "Edits by hand can put a deletion off,
 * never bring it forward"; the Released-object sweeper row: "counts a
 * countdown only when the object's stamp is the recorded one ... a live
 * Bundle's listing of a released object records its countdown cancelled ...
 * an earlier stamp and proof written back ... reads as none and the sweep
 * starts a new countdown". Not a known limit: the operator ran throughout,
 * and the record was written by this version.
 *
 * What happens: ReleaseRecords.recordListingCancel
 * (controllers/softdelete/release-records.ts) returns without recording when
 * the object carries no deletionTimestamp (and the take-hold patch,
 * core/bundle/take-holds.ts takeHoldPatch, ends the release without touching
 * the record; neither does the orphan pass). The record keeps S1; P1 checks
 * (provenance.ts binds uid, namespace, `app`, S1, 20s, ''), readWithRecord
 * leaves S1 as it equals the record, decideReleasedSweep reads S1 + 20s as
 * past on the cached and on the fresh reads, and released-sweeper.ts
 * deleteIfStillDue deletes cm, which no Bundle released any more.
 *
 * Fixed in 873ab6e: release records hold the proof and a state (signed,
 * cancelled, ended); the sweep counts and signs again only the recorded
 * release, and a take-hold or `bundlesmith cancel` ends it ("What happens"
 * above is the code before that).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { KubeClient } from '../../src/kube/client.js';
import { expectKept, resourceType, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { annotationPointer, patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, releasedBy, sleep } from './release-writeback.js';

const f = operatorFixture('rt29orw', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'bundles', clock, namespaces: [f.ns], workers: 2 }),
}));

const DELAY_MS = 20_000;
const pointer = annotationPointer;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a released object whose stamp was taken off before a Bundle took hold of it, orphaned since: the old release written back is deleted at once', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` });

  patcher = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });

  // 1. Released by `app`: S1, P1 (recorded S1).
  const {
    uid,
    stamp: s1,
    proof: p1,
    label,
    former,
  } = await releasedBy(env, ns, 'app', [{ name: 'c', object: manifest }], t.configMap, 'cm');
  const s1Ms = Date.parse(s1 ?? '');

  // 2. The patch-only user takes the stamp off (the release no longer checks: kept, unproven).
  await patcher.patch(t.configMap, ns, 'cm', [{ op: 'remove', path: pointer(Annotations.deletionTimestamp) }], 'json');

  // 3. `app` again: takes hold of cm.
  await applyBundle(env, ns, 'app', [{ name: 'c', object: manifest }]);
  await waitFor('cm taken hold of again', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    return (
      o.metadata.labels?.[Labels.formerBundle] === undefined &&
      o.metadata.annotations?.[Annotations.releaseProof] === undefined &&
      (o.metadata.ownerReferences ?? []).some((r) => r.controller === true)
    );
  });
  await waitForReady(env, ns, 'app');
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), 'default', `bundlesmith-release-key-${uid}`);
  console.log(`release record after the take-hold: ${JSON.stringify((record as { data?: unknown } | undefined)?.data)} (S1 ${s1})`);

  // 4. Orphan deletion of `app`: cm is kept for good.
  await deleteBundle(f.env, f.ns, 'app', 'orphan');
  await waitFor('cm orphaned', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    return (o.metadata.ownerReferences ?? []).length === 0;
  });
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);

  // 5. Past S1 + delay: the user writes the first release back.
  await sleep(Math.max(0, s1Ms + DELAY_MS + 1_500 - Date.now()));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
  await patcher.patch(
    t.configMap,
    ns,
    'cm',
    {
      metadata: {
        labels: { [Labels.formerBundle]: label },
        annotations: { [Annotations.formerBundle]: former, [Annotations.deletionTimestamp]: s1, [Annotations.releaseProof]: p1 },
      },
    },
    'merge',
  );
  await sleep(8_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
}, 180_000);
