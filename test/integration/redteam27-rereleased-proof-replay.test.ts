/**
 * Red team 27: a release proof carries no freshness. The same object
 * released twice by a Bundle of the same name (re-created: it took hold of
 * the object again, and was deleted again) carries the second release's
 * stamp and proof, and the FIRST release's stamp and proof, written back by
 * someone who may only patch the object, still check: it is deleted on the
 * first countdown, long before the one it runs now. No CRD upgrade needed
 * (compare redteam27-resigned-release-replay, where the sweep's own re-signing
 * gives the older pair within one release).
 *
 * Steps (the patch-only user may get/patch ConfigMaps, never delete them):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 30s) and is deleted:
 *     released with stamp S1 and proof P1 (read off the object).
 *  2. Bundle `app` is applied again listing cm: it takes hold (the countdown
 *     is cancelled). ~22 s after S1 it is deleted again: released with stamp
 *     S2 and proof P2; due at S2 + 30s.
 *  3. Right after S1 + 30s the patch-only user writes S1 and P1 back.
 *
 * Expected: docs/operations.md "Released objects are deleted only on proof"
 * and its threat row "get an object deleted it may only patch": a stamp or
 * proof written by someone who may only patch is kept and reported; the
 * soft-delete rows of docs/safety.md: an edit of the live object can put
 * its deletion off, never bring it forward. cm is kept until S2 + 30s.
 *
 * What happens: provenance.ts binds the proof to uid, namespace, former
 * Bundle, stamp, delay and policy only; (uid, `app`, S1, 30s, '') is the
 * same fact set in both releases, so P1 checks against S1
 * (checkReleaseProof), decideReleasedSweep reads S1 + 30s as past, the fresh
 * read agrees, and released-sweeper.ts deletes cm ~20 s early.
 *
 * Fixed by the release records (5f230e0, controllers/softdelete/release-records.ts):
 * every signing is recorded before it is sent, a listing records the
 * countdown cancelled, and the sweep counts a stamp only when it is the
 * recorded one ("What happens" above is the code before that).
 */
import { Annotations } from '../../src/api/names.js';
import { KubeClient } from '../../src/kube/client.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { annotationPointer, patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, sleep } from './release-writeback.js';

const f = operatorFixture('rt27rerel');

const DELAY_MS = 30_000;
const pointer = annotationPointer;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('the first release stamp and proof written back after a second release by the same Bundle name: deleted before its countdown ends', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` });

  patcher = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });

  // 1. First release: S1, P1.
  await applyBundle(env, ns, 'app', [{ name: 'c', object: manifest }]);
  await waitForReady(env, ns, 'app');
  await deleteBundle(f.env, f.ns, 'app');
  const first = await env.client.get(t.configMap, ns, 'cm');
  const uid = first.metadata.uid ?? '';
  const s1 = first.metadata.annotations?.[Annotations.deletionTimestamp];
  const p1 = first.metadata.annotations?.[Annotations.releaseProof];
  expect(s1).toBeDefined();
  expect(p1).toBeDefined();
  const s1Ms = Date.parse(s1 ?? '');

  // 2. Taken hold of again by a re-created `app`, then released again ~22 s after S1.
  await applyBundle(env, ns, 'app', [{ name: 'c', object: manifest }]);
  await waitFor('cm taken hold of again', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    return o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined && (o.metadata.ownerReferences ?? []).length > 0;
  });
  await sleep(Math.max(0, s1Ms + 22_000 - Date.now()));
  await deleteBundle(f.env, f.ns, 'app');
  const second = await env.client.get(t.configMap, ns, 'cm');
  expect(second.metadata.uid).toBe(uid);
  const s2 = second.metadata.annotations?.[Annotations.deletionTimestamp];
  expect(s2).toBeDefined();
  const s2Ms = Date.parse(s2 ?? '');
  expect(s2Ms).toBeGreaterThanOrEqual(s1Ms + 15_000);
  expect(second.metadata.annotations?.[Annotations.releaseProof]).not.toBe(p1);

  // 3. Past the first countdown's end: the patch-only user writes S1 and P1 back.
  await sleep(Math.max(0, s1Ms + DELAY_MS + 1_500 - Date.now()));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
  await patcher.patch(
    t.configMap,
    ns,
    'cm',
    [
      { op: 'replace', path: pointer(Annotations.deletionTimestamp), value: s1 },
      { op: 'replace', path: pointer(Annotations.releaseProof), value: p1 },
    ],
    'json',
  );
  await sleep(Math.max(5_000, Math.min(8_000, s2Ms + DELAY_MS - 5_000 - Date.now())));
  expect(Date.now()).toBeLessThan(s2Ms + DELAY_MS - 2_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
}, 180_000);
