/**
 * Red team 29: a release record cannot say that the release has ENDED. Its
 * "cancelled" value ('') reads as "still released, no countdown", so the
 * sweep starts a new countdown on any object showing a release whose proof
 * checks. An object a Bundle took hold of (the listing cancel recorded, as
 * designed) and that was then kept for good (its Bundle deleted with
 * `--cascade=orphan`) has its first release written back by someone who
 * may only patch it: the sweep reads the old stamp as none, restamps and
 * re-signs it (over the facts as written back), and deletes it when that
 * new countdown ends. Compare redteam29-orphaned-release-writeback (the
 * record kept the old stamp: deleted at once); here the record is right
 * ('') and the object is deleted all the same, one delay later.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with stamp S1 and proof P1, recorded S1. The user reads the
 *     label, the former-bundle annotation, S1 and P1.
 *  2. Bundle `app` is applied again listing cm: its pass records the
 *     listing cancel (record '') and takes hold.
 *  3. `kubectl delete bundle app --cascade=orphan`: cm is orphaned, kept.
 *  4. The user writes the label, the annotation, S1 and P1 back.
 *
 * Expected: cm is kept for good. An orphan deletion keeps every object
 * (docs/safety.md, Bundle finalizer row); "Edits by hand can put a deletion
 * off, never bring it forward": cm had no deletion ahead of it at all; the
 * Released-object sweeper row sweeps "released objects" only, and cm was
 * released by nothing since `app` took hold of it. Not a known limit: the
 * operator ran throughout, the release was signed and recorded by this
 * version (the known limits name releases without a record, or one deleted
 * by a person with rights in the operator's namespace).
 *
 * What happens: provenance.ts checks P1 (uid, namespace, `app`, S1, 20s,
 * ''), nothing binds it to the release being current; readWithRecord
 * (core/softdelete/release-record.ts) reads S1 against the record '' as no
 * stamp, so decideReleasedSweep on the fresh reads says 'mark';
 * released-sweeper.ts deleteIfStillDue -> act -> RelistedReleases
 * .startCountdown re-signs the written-back release over a new stamp S2
 * (recorded S2), and after S2 + 20s the sweep deletes cm.
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
import { patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, expectKeptFor, releasedBy } from './release-writeback.js';

const f = operatorFixture('rt29ocr', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'bundles', clock, namespaces: [f.ns], workers: 2 }),
}));

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a released object a Bundle took hold of, orphaned since: its first release written back is counted down again and deleted', async () => {
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

  // 2. `app` again: takes hold of cm.
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

  // 3. Orphan deletion of `app`: cm is kept for good.
  await deleteBundle(f.env, f.ns, 'app', 'orphan');
  await waitFor('cm orphaned', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    return (o.metadata.ownerReferences ?? []).length === 0;
  });
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);

  // 4. The user writes the first release back.
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
  // Kept for good: watched for two delays (the new countdown ends one delay after it is stamped).
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, 2 * DELAY_MS + 5_000);
}, 240_000);
