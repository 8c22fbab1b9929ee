/**
 * Red team 30: `bundlesmith cancel` on a released object whose former-bundle
 * label someone took off first. The sweep records a release `ended` only
 * when the object leaves its label-selected watch with no release mark left
 * (endIfLeftUnreleased) and on its look every ten minutes (pruneGone). Take
 * the label off alone and the object leaves the watch still carrying the
 * proof (no end is recorded, rightly); the later `bundlesmith cancel` then
 * takes the rest of the marks off an object the sweep no longer watches, so
 * no event ever tells it, and the record keeps `signed P1` until the next
 * ten-minute look. Written back meanwhile (label, former-bundle annotation,
 * S1, P1), the release is the recorded one and the object is deleted at once.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace `default`):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with stamp S1 and proof P1, recorded `signed P1`. The user
 *     reads the label, the former-bundle annotation, S1 and P1.
 *  2. The patch-only user takes the former-bundle label off cm (a label
 *     edit, nothing else).
 *  3. A person runs `bundlesmith cancel ConfigMap/cm` (the documented way to
 *     keep a pending object: docs/deletion.md, docs/cli.md): "will not be
 *     deleted".
 *  4. After S1 + 20s (well inside the ten minutes of the record look) the
 *     patch-only user writes the label, the annotation, S1 and P1 back.
 *
 * Expected: cm is kept: docs/safety.md "Edits by hand can put a deletion
 * off, never bring it forward"; the Released-object sweeper row: "a
 * take-hold records the release ended before it is sent, as does the sweep
 * when the object leaves its watch without a release's marks (`bundlesmith
 * cancel`) ... an object whose release is not the recorded one (an earlier
 * release written back ... or one that ended) is kept and reported
 * (`UnprovenRelease`), never restamped (red teams 27 and 29)". This is red
 * team 29's `redteam29-cli-cancel-release-writeback` with one label edit
 * first; no known limit after the table covers it.
 *
 * What happens: step 2 fires the informer's onDelete (released-sweeper.ts,
 * `left`), and ReleaseRecords.endIfLeftUnreleased
 * (controllers/softdelete/release-records.ts) reads cm fresh: it still
 * carries the release proof and the former-bundle annotation
 * (carriesReleaseMarks), so nothing is recorded. Step 3 (cancelPending,
 * src/cli/pending-target.ts) patches only the object; cm is outside the
 * watch, so no handler runs, and pruneGone ran at start and waits ten
 * minutes (PRUNE_EVERY_MS). Written back in step 4, cm re-enters the watch,
 * the record still says `signed P1`, readWithRecord keeps S1, P1 checks,
 * and deleteIfStillDue deletes cm at once.
 *
 * Fixed in 2a86bcd: a listing cancels the recorded signing whatever the
 * object shows; every take-hold but a claim reference ends a recorded
 * release; a release ends when the object is there without the
 * former-bundle label ("What happens" above is the code before that).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { bundlesmith, expectKept, kubeconfigPath, resourceType, uniqueName } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { deleteBundle, sleep } from './release-writeback.js';

const f = operatorFixture('rt30lcc');

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a released object whose label was taken off before `bundlesmith cancel`: its release written back is deleted at once', async () => {
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
  await applyBundle(env, ns, 'app', [{ name: 'c', object: manifest }]);
  await waitForReady(env, ns, 'app');
  await deleteBundle(f.env, f.ns, 'app');
  const released = await env.client.get(t.configMap, ns, 'cm');
  const uid = released.metadata.uid ?? '';
  const s1 = released.metadata.annotations?.[Annotations.deletionTimestamp];
  const p1 = released.metadata.annotations?.[Annotations.releaseProof];
  const label = released.metadata.labels?.[Labels.formerBundle];
  const former = released.metadata.annotations?.[Annotations.formerBundle];
  expect(s1).toBeDefined();
  expect(p1).toBeDefined();
  expect(label).toBeDefined();
  const s1Ms = Date.parse(s1 ?? '');

  // 2. The patch-only user takes the former-bundle label off (nothing else).
  await patcher.patch(t.configMap, ns, 'cm', { metadata: { labels: { [Labels.formerBundle]: null } } }, 'merge');
  await sleep(2_000);
  const unlabelled = await env.client.get(t.configMap, ns, 'cm');
  expect(unlabelled.metadata.labels?.[Labels.formerBundle]).toBeUndefined();
  expect(unlabelled.metadata.annotations?.[Annotations.releaseProof]).toBe(p1);

  // 3. A person cancels the deletion.
  const cancelled = await bundlesmith(['cancel', 'ConfigMap/cm', '-n', ns]);
  expect(cancelled.stderr).toBe('');
  expect(cancelled.code).toBe(0);
  expect(cancelled.stdout).toContain('will not be deleted');
  const after = await env.client.get(t.configMap, ns, 'cm');
  expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
  expect(after.metadata.labels?.[Labels.formerBundle]).toBeUndefined();
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), 'default', `bundlesmith-release-key-${uid}`);
  console.log(`release record after the cancel: ${JSON.stringify((record as { data?: unknown } | undefined)?.data)} (S1 ${s1})`);

  // 4. Past S1 + delay: the patch-only user writes the release back.
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
