/**
 * Red team 29: `bundlesmith cancel` on a released object ("cancelled: ...
 * will not be deleted") takes the stamp, the label and the release proof off
 * the object, but not the release record
 * (`default/bundlesmith-release-key-<uid>`), which keeps the cancelled
 * stamp S1 as the release's latest signing. Whoever may patch the object
 * (a restore of an old copy, a GitOps tool replaying what it saw, a user
 * with get/patch only) writes the release back (label, former-bundle
 * annotation, S1, P1): the stamp is the recorded one, the proof checks, and
 * the object is deleted at once, a cancelled countdown ended after all.
 * (The Bundle-level twin of this, the record in status.pendingDeletions,
 * was red team 11: redteam11-cancel-while-stuck.)
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with stamp S1 and proof P1, recorded S1. The user reads the
 *     label, the former-bundle annotation, S1 and P1.
 *  2. A person runs `bundlesmith cancel ConfigMap/cm` (the documented way to
 *     keep a pending object: docs/deletion.md, docs/cli.md).
 *  3. After S1 + 20s the patch-only user writes the label, the annotation,
 *     S1 and P1 back.
 *
 * Expected: cm is kept: the countdown was cancelled ("will not be deleted");
 * docs/safety.md "Edits by hand can put a deletion off, never bring it
 * forward"; the Released-object sweeper row: "counts a countdown only when
 * the object's stamp is the recorded one ... an earlier stamp and proof ...
 * written back ... reads as none" (at worst a new countdown, never the old
 * one ending at once). Not a known limit: the operator ran throughout, and
 * the record was written by this version and deleted by no one.
 *
 * What happens: cancelPending (src/cli/pending-target.ts) patches only the
 * object; the record keeps S1 (nothing but the sweep's delete, the prune of
 * records of gone objects, and a listing's cancel ever changes it, and cm
 * carries no label the sweep's watch selects after the cancel). Written back,
 * P1 checks (provenance.ts: uid, namespace, `app`, S1, 20s, ''),
 * readWithRecord (core/softdelete/release-record.ts) leaves S1 as it is the
 * recorded stamp, decideReleasedSweep reads S1 + 20s as past, and
 * released-sweeper.ts deleteIfStillDue deletes cm at once.
 *
 * Fixed in 873ab6e: release records hold the proof and a state (signed,
 * cancelled, ended); the sweep counts and signs again only the recorded
 * release, and a take-hold or `bundlesmith cancel` ends it ("What happens"
 * above is the code before that).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { KubeClient } from '../../src/kube/client.js';
import { bundlesmith, expectKept, resourceType } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, sleep } from './release-writeback.js';

const f = operatorFixture('rt29ccl');

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a released object cancelled with `bundlesmith cancel`: its release written back is deleted at once', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` });

  patcher = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });

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

  // 2. A person cancels the deletion.
  const cancelled = await bundlesmith(['cancel', 'ConfigMap/cm', '-n', ns]);
  expect(cancelled.stderr).toBe('');
  expect(cancelled.code).toBe(0);
  expect(cancelled.stdout).toContain('will not be deleted');
  const after = await env.client.get(t.configMap, ns, 'cm');
  expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
  expect(after.metadata.labels?.[Labels.formerBundle]).toBeUndefined();
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), 'default', `bundlesmith-release-key-${uid}`);
  console.log(`release record after the cancel: ${JSON.stringify((record as { data?: unknown } | undefined)?.data)} (S1 ${s1})`);

  // 3. Past S1 + delay: the patch-only user writes the release back.
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
