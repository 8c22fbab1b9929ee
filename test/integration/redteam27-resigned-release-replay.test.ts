/**
 * Red team 27: the sweep signs a released object's proof again (its
 * countdown cancelled, then started anew), and the FIRST release's stamp and
 * proof, written back by someone who may only patch the object, still check:
 * the object is deleted on the first countdown, before the one it runs now.
 *
 * Steps (a routine CRD upgrade; the "attacker" may get/patch Gadgets, never
 * delete them):
 *  1. Bundle `first` lists Gadget g-dropped (deletionDelay 30s) at v1alpha1;
 *     it is deleted: the finalizer releases g-dropped with stamp S1 and
 *     release proof P1 (HMAC over uid, namespace, `first`, S1, delay, policy).
 *  2. The CRD moves to v1 and stops serving v1alpha1; Bundle `second` lists
 *     g-dropped at v1alpha1: the released-object sweeper cancels the
 *     countdown and signs the release again over no stamp
 *     (relisted-release.ts cancelRelistedCountdown).
 *  3. ~22 s after S1, `second` drops it: the sweeper starts a new countdown
 *     S2 and signs P2 over S2 (released-sweeper.ts 'mark',
 *     release.ts restampReleasePatch). g-dropped is due at S2 + 30s.
 *  4. Right after S1 + 30s, the patch-only user writes S1 and P1 (read off
 *     the object in step 1) back onto g-dropped.
 *
 * Expected: docs/safety.md (Released-object sweeper): when the object is
 * dropped the sweep starts a new countdown and signs over it; a re-listed
 * object's old countdown must not run out on it (fuzz softdelete 20284,
 * inventory 1d: "a new countdown, from the drop, not the first one").
 * docs/operations.md "Released objects are deleted only on proof" / the
 * threat row "get an object deleted it may only patch": a stamp or proof
 * written by someone who may only patch is kept and reported. So g-dropped
 * is kept until S2 + 30s.
 *
 * What happens: the proof binds uid, namespace, former Bundle, stamp, delay
 * and policy (core/softdelete/provenance.ts mac) and nothing that tells one
 * signing of the same release from another. Before this session the sweep
 * never signed, so one release carried one proof; now the sweep signs the
 * same release again over other stamps (release.ts resignedReleaseProof),
 * and every earlier (stamp, proof) pair of it stays valid. P1 over S1 checks
 * (provenance.ts checkReleaseProof), decideReleasedSweep reads S1 + 30s as
 * past (sweep.ts -> decide.ts 'expired'), the fresh read shows the same, and
 * released-sweeper.ts deletes g-dropped ~20 s before its countdown ends.
 *
 * Fixed by the release records (5f230e0, controllers/softdelete/release-records.ts):
 * every signing is recorded before it is sent, a listing records the
 * countdown cancelled, and the sweep counts a stamp only when it is the
 * recorded one ("What happens" above is the code before that).
 */
import { Annotations } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { KubeClient } from '../../src/kube/client.js';
import type { ResourceType } from '../../src/kube/types.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { expectKept, run, uniqueName, waitFor } from './harness.js';
import { applyBundle, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { annotationPointer, patchOnlyUser } from './patch-only-user.js';
import { sleep } from './release-writeback.js';

const f = operatorFixture('rt27replay', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
}));

const DELAY_MS = 30_000;
const pointer = annotationPointer;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('a patch-only user writes back the first release stamp and proof after the sweep re-signed the release: deleted before its new countdown ends', async () => {
  const { env, ns } = f;
  const group = `${uniqueName('rp')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = (name: string): Record<string, unknown> => ({
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name, annotations: { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` } },
    spec: { size: 1 },
  });

  // A user who may get and patch Gadgets in the namespace, not delete them.
  patcher = await patchOnlyUser(env, ns, { apiGroups: [group], resources: ['gadgets'] });

  // 1. Released by `first`: stamp S1, proof P1.
  await applyBundle(env, ns, 'first', [{ name: 'd', object: gadget('g-dropped') }]);
  await waitForReady(env, ns, 'first');
  const r = await run('kubectl', ['delete', 'bundle', 'first', '-n', ns, '--wait=false']);
  if (r.code !== 0) throw new Error(r.stderr);
  await waitFor('Bundle first to be gone', async () => (await getBundle(env, ns, 'first')) === undefined, { timeoutMs: 60_000 });
  const alphaGone = setGadgetVersions(env, group, [
    { name: 'v1alpha1', served: false, storage: false },
    { name: 'v1', served: true, storage: true },
  ]);
  await alphaGone;
  const v1 = (await gadgetsServed(env, group, 'v1', true)) as ResourceType;
  await gadgetsServed(env, group, 'v1alpha1', false);
  const released = await env.client.get(v1, ns, 'g-dropped');
  const uid = released.metadata.uid ?? '';
  const s1 = released.metadata.annotations?.[Annotations.deletionTimestamp];
  const p1 = released.metadata.annotations?.[Annotations.releaseProof];
  expect(s1).toBeDefined();
  expect(p1).toBeDefined();

  // 2. Listed again at v1alpha1 (no longer served): the sweep cancels the countdown and signs over no stamp.
  await applyBundle(env, ns, 'second', [
    { name: 'd', object: gadget('g-dropped') },
    { name: 'k', object: gadget('g-kept') },
  ]);
  await waitFor('the countdown of g-dropped to be cancelled', async () => {
    const o = await env.client.get(v1, ns, 'g-dropped');
    return o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined;
  });

  // 3. Dropped ~22 s after S1: a new countdown S2, signed over S2.
  const s1Ms = Date.parse(s1 ?? '');
  await sleep(Math.max(0, s1Ms + 22_000 - Date.now()));
  await applyBundle(env, ns, 'second', [{ name: 'k', object: gadget('g-kept') }]);
  const s2 = await waitFor('a new countdown on g-dropped', async () => {
    const o = await env.client.tryGet(v1, ns, 'g-dropped');
    const stamp = o?.metadata.annotations?.[Annotations.deletionTimestamp];
    return stamp !== undefined && stamp !== s1 ? stamp : undefined;
  });
  const s2Ms = Date.parse(s2);
  expect(s2Ms).toBeGreaterThanOrEqual(s1Ms + 15_000);
  const restamped = await env.client.get(v1, ns, 'g-dropped');
  expect(restamped.metadata.annotations?.[Annotations.releaseProof]).not.toBe(p1);

  // 4. Past the first countdown's end: the patch-only user writes S1 and P1 back.
  await sleep(Math.max(0, s1Ms + DELAY_MS + 1_500 - Date.now()));
  expectKept(await env.client.tryGet(v1, ns, 'g-dropped'), uid);
  await patcher.patch(
    v1,
    ns,
    'g-dropped',
    [
      { op: 'replace', path: pointer(Annotations.deletionTimestamp), value: s1 },
      { op: 'replace', path: pointer(Annotations.releaseProof), value: p1 },
    ],
    'json',
  );
  // Its countdown runs to S2 + 30s: it must still be there well before that.
  await sleep(Math.max(5_000, Math.min(8_000, s2Ms + DELAY_MS - 5_000 - Date.now())));
  expect(Date.now()).toBeLessThan(s2Ms + DELAY_MS - 2_000);
  expectKept(await env.client.tryGet(v1, ns, 'g-dropped'), uid);
}, 180_000);
