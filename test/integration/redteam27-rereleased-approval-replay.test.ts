/**
 * Red team 27: an Approve object released by a Bundle is deleted without an
 * approval for its current countdown, when an earlier copy of its
 * annotations (a `kubectl get -o yaml` saved during its first release and
 * re-applied, or a patch-only user) is written back: the first release's
 * stamp, proof and approval still check. The released-object analogue of
 * red team 7, which the Bundle's record closes for in-Bundle countdowns; the
 * sweep has no record.
 *
 * Steps (the patch-only user may get/patch ConfigMaps, never delete them):
 *  1. Bundle `app` lists ConfigMap cm (deletionPolicy Approve, deletionDelay
 *     20s) and is deleted: released with stamp S1 and proof P1. It is
 *     approved (deletionApproved A1 > S1) while its delay still runs; its
 *     annotations are saved.
 *  2. Bundle `app` is applied again listing cm: it takes hold (stamp and
 *     approval removed), and is deleted again: released with stamp S2 and
 *     proof P2, waiting for its delay and for an approval later than S2.
 *  3. Past S1 + 20s, the saved S1, P1 and A1 are written back.
 *
 * Expected: docs/safety.md Released-object sweeper: "an `Approve` object
 * waits for an approval later than its stamp"; the soft-delete row: the
 * approval goes with the stamp when it is listed again (a stale approval
 * never counts for a later countdown, core/softdelete/sweep.ts); docs/
 * operations.md: a stamp or proof written by someone who may only patch is
 * kept. cm was never approved for its current countdown: kept.
 *
 * What happens: provenance.ts binds the proof to uid, namespace, former
 * Bundle, stamp, delay and policy, and nothing ties it to the release it was
 * made for; (uid, `app`, S1, 20s, Approve) is a fact set of both releases,
 * so P1 checks, A1 > S1 opens the Approval gate (decide.ts), and
 * released-sweeper.ts deletes cm on the first countdown's approval.
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

const f = operatorFixture('rt27appr');

const DELAY_MS = 20_000;
const pointer = annotationPointer;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('an Approve object released twice: the first release stamp, proof and approval written back delete it without an approval of its countdown', async () => {
  const { env, ns, t } = f;
  const manifest = configMap(
    'cm',
    { key: 'v' },
    { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s`, [Annotations.deletionPolicy]: 'Approve' },
  );

  patcher = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });

  // 1. First release (S1, P1), approved while its delay runs; the annotations saved.
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
  await sleep(Math.max(0, s1Ms + 1_500 - Date.now()));
  const a1 = new Date().toISOString();
  await env.client.patch(t.configMap, ns, 'cm', { metadata: { annotations: { [Annotations.deletionApproved]: a1 } } }, 'merge');
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);

  // 2. Taken hold of again by a re-created `app` (stamp and approval go), then released again: S2, not approved.
  await applyBundle(env, ns, 'app', [{ name: 'c', object: manifest }]);
  await waitFor('cm taken hold of again', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    const a = o.metadata.annotations ?? {};
    return (
      a[Annotations.deletionTimestamp] === undefined &&
      a[Annotations.deletionApproved] === undefined &&
      (o.metadata.ownerReferences ?? []).length > 0
    );
  });
  await deleteBundle(f.env, f.ns, 'app');
  const second = await env.client.get(t.configMap, ns, 'cm');
  expect(second.metadata.uid).toBe(uid);
  expect(second.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
  expect(second.metadata.annotations?.[Annotations.deletionTimestamp]).not.toBe(s1);
  expect(second.metadata.annotations?.[Annotations.deletionApproved]).toBeUndefined();

  // 3. Past S1 + delay: the saved S1, P1 and A1 written back.
  await sleep(Math.max(0, s1Ms + DELAY_MS + 1_500 - Date.now()));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
  await patcher.patch(
    t.configMap,
    ns,
    'cm',
    [
      { op: 'replace', path: pointer(Annotations.deletionTimestamp), value: s1 },
      { op: 'replace', path: pointer(Annotations.releaseProof), value: p1 },
      { op: 'add', path: pointer(Annotations.deletionApproved), value: a1 },
    ],
    'json',
  );
  // Never approved for its current countdown: kept, however long.
  await sleep(8_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
}, 180_000);
