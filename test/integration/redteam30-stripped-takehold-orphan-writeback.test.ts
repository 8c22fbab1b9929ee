/**
 * Red team 30: a take-hold ends a release in its record only when the object
 * still carries a release mark (planTakeHolds: `endsRelease` only where
 * carriesReleaseMarks), and the sweep ends it only when the object leaves
 * its label-selected watch with no mark left (endIfLeftUnreleased). Someone
 * who may only patch the object takes the marks off in two steps, the label
 * first (it leaves the watch still carrying the proof: nothing recorded),
 * then the rest (outside the watch: nothing runs). A Bundle then takes hold
 * of it (no mark: no end recorded) and is deleted with --cascade=orphan:
 * the object is kept for good, yet its record still says `signed P1`.
 * Written back (label, former-bundle annotation, S1, P1), the release is
 * the recorded one and the object is deleted at once.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace `default`):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with stamp S1 and proof P1, recorded `signed P1`.
 *  2. The user takes the former-bundle label off cm.
 *  3. The user takes the former-bundle annotation, the stamp and the proof
 *     off cm.
 *  4. Bundle `app` is applied again listing cm: it takes hold of it.
 *  5. `kubectl delete bundle app --cascade=orphan`: cm is orphaned, kept.
 *  6. Past S1 + 20s the user writes the label, the annotation, S1 and P1
 *     back.
 *
 * Expected: cm is kept for good: an orphan deletion keeps every object
 * (docs/safety.md, Bundle finalizer row); "Edits by hand can put a deletion
 * off, never bring it forward"; the Released-object sweeper row: "a
 * take-hold records the release ended before it is sent ... an object whose
 * release is not the recorded one (an earlier release written back ... or
 * one that ended) is kept and reported (`UnprovenRelease`), never
 * restamped (red teams 27 and 29)". redteam29-orphaned-cancelled-release-
 * recounted is this with steps 2 and 3 left out (it passes now). No known
 * limit after the table covers it: the operator ran throughout, the record
 * was written by this version, and no one touched namespace `default`.
 *
 * What happens: step 2 fires the sweep informer's onDelete;
 * ReleaseRecords.endIfLeftUnreleased (controllers/softdelete/
 * release-records.ts) reads cm fresh, sees the proof (carriesReleaseMarks)
 * and records nothing. Step 3: cm is outside the watch, nothing runs.
 * Step 4: planTakeHolds (core/bundle/take-holds.ts) sets `endsRelease` only
 * for an object carrying marks, so carryOutTakeHolds (controllers/bundle/
 * act.ts) never calls ReleaseRecords.end; recordListingCancel needs a
 * stamp. pruneGone ran at start and waits ten minutes. Step 6: cm re-enters
 * the watch, the record says `signed P1`, readWithRecord keeps S1, P1 checks
 * (uid, namespace, `app`, S1, 20s, ''), and deleteIfStillDue deletes cm at
 * once.
 *
 * Fixed in 2a86bcd: a listing cancels the recorded signing whatever the
 * object shows; every take-hold but a claim reference ends a recorded
 * release; a release ends when the object is there without the
 * former-bundle label ("What happens" above is the code before that).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { expectKept, kubeconfigPath, resourceType, uniqueName, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { deleteBundle, expectKeptFor, releasedBy, sleep } from './release-writeback.js';

const f = operatorFixture('rt30tho', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'bundles', clock, namespaces: [f.ns], workers: 2 }),
}));

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a released object stripped of its marks label first, taken hold of and orphaned: its release written back is deleted at once', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` });

  const user = uniqueName('patcher');
  const role = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'Role');
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding');
  await env.client.create(role, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: user, namespace: ns },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] }],
  });
  await env.client.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: user, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  patcher = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()), { impersonateUser: user, impersonateGroups: [] });

  // 1. Released by `app`: S1, P1 (recorded S1).
  const {
    uid,
    stamp: s1,
    proof: p1,
    label,
    former,
  } = await releasedBy(env, ns, 'app', [{ name: 'c', object: manifest }], t.configMap, 'cm');

  // 2. The user takes the label off (cm leaves the sweep's watch still carrying the proof).
  await patcher.patch(t.configMap, ns, 'cm', { metadata: { labels: { [Labels.formerBundle]: null } } }, 'merge');
  await sleep(2_000);
  // 3. Then the rest of the marks.
  await patcher.patch(
    t.configMap,
    ns,
    'cm',
    {
      metadata: {
        annotations: { [Annotations.formerBundle]: null, [Annotations.deletionTimestamp]: null, [Annotations.releaseProof]: null },
      },
    },
    'merge',
  );
  await sleep(2_000);

  // 4. `app` again: takes hold of cm.
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

  // 5. Orphan deletion of `app`: cm is kept for good.
  await deleteBundle(f.env, f.ns, 'app', 'orphan');
  await waitFor('cm orphaned', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    return (o.metadata.ownerReferences ?? []).length === 0;
  });
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);

  // 6. Past S1 + delay, the user writes the first release back.
  await sleep(Math.max(0, Date.parse(s1 ?? '') + DELAY_MS + 1_500 - Date.now()));
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
