/**
 * Red team 29: the restart the release record gives a written-back release
 * is signed over the facts written back, a shorter delay included. Released
 * once with deletionDelay 20s (stamp S1, proof P1) and again, by the same
 * Bundle name re-created with the delay lengthened to 10m (stamp S2, proof
 * P2, recorded S2), the object has S1, P1 and `deletionDelay: 20s` written
 * back by someone who may only patch it. P1 checks; S1 is not the recorded
 * stamp, so it reads as none and the sweep starts a new countdown, re-signing
 * the release over the 20s on the object: the object is deleted ~20 s later,
 * some nine minutes before the countdown it runs now (S2 + 10m) ends.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with S1 and P1. The user reads S1 and P1.
 *  2. Bundle `app` is applied again listing cm with deletionDelay 10m: it
 *     takes hold (the listing cancel is recorded). It is deleted again:
 *     released with S2 and P2 over 10m, recorded S2; due at S2 + 10m.
 *  3. The user writes S1, P1 and `deletionDelay: 20s` back.
 *
 * Expected: cm is kept until S2 + 10m (the test watches for ~45 s).
 * docs/safety.md: "Edits by hand can put a deletion off, never bring it
 * forward"; "a deletionDelay shortened ... by hand ... is read as what the
 * Bundle said"; "A released object carries the strictest reading, written
 * onto it and signed"; the Released-object sweeper row: "an earlier stamp
 * and proof written back ... reads as none and the sweep starts a new
 * countdown" (red team 27: the replay must not end the current countdown
 * early). Not a known limit: the release was signed and recorded by this
 * version, the operator ran throughout.
 *
 * What happens: readWithRecord (core/softdelete/release-record.ts) reads S1
 * against the record S2 as no stamp; decideReleasedSweep says 'mark';
 * released-sweeper.ts deleteIfStillDue -> act -> RelistedReleases
 * .startCountdown -> restampReleasePatch (core/bundle/release.ts
 * resignedReleaseProof: releaseFactsOf the object as written back, delay
 * 20s) re-signs, recorded S3; at S3 + 20s the sweep deletes cm. The record
 * holds the stamp alone, not the facts (delay, policy) of the latest
 * signing, so nothing tells the 20s from the 10m the release was signed
 * over last.
 *
 * Fixed in 873ab6e: release records hold the proof and a state (signed,
 * cancelled, ended); the sweep counts and signs again only the recorded
 * release, and a take-hold or `bundlesmith cancel` ends it ("What happens"
 * above is the code before that).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { KubeClient } from '../../src/kube/client.js';
import { expectKept, resourceType, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { patchOnlyUser } from './patch-only-user.js';
import { deleteBundle, expectKeptFor, releasedBy } from './release-writeback.js';

const f = operatorFixture('rt29rsd');

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('the first release (20s) written back after a second release over 10m: restamped over 20s and deleted minutes early', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` });

  patcher = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });

  // 1. Released by `app`: S1, P1 (recorded S1).
  const { uid, stamp: s1, proof: p1 } = await releasedBy(env, ns, 'app', [{ name: 'c', object: manifest }], t.configMap, 'cm');

  // 2. `app` again, the delay lengthened to 10m: takes hold, then released again (S2, P2 over 10m).
  const longer = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: '10m' });
  await applyBundle(env, ns, 'app', [{ name: 'c', object: longer }]);
  await waitFor('cm taken hold of again', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm');
    return (
      o.metadata.labels?.[Labels.formerBundle] === undefined &&
      o.metadata.annotations?.[Annotations.releaseProof] === undefined &&
      (o.metadata.ownerReferences ?? []).some((r) => r.controller === true)
    );
  });
  await waitForReady(env, ns, 'app');
  await deleteBundle(f.env, f.ns, 'app');
  const second = await env.client.get(t.configMap, ns, 'cm');
  expect(second.metadata.uid).toBe(uid);
  const s2 = second.metadata.annotations?.[Annotations.deletionTimestamp];
  expect(s2).toBeDefined();
  // A new signing. Not a new stamp, necessarily: stamps are upper bounds of the server's clock (whole-second Date
  // headers), so two releases within one server second may carry the same one (CI of 045913a).
  expect(second.metadata.annotations?.[Annotations.releaseProof]).not.toBe(p1);
  expect(second.metadata.annotations?.[Annotations.deletionDelay]).toBe('10m');
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), 'default', `bundlesmith-release-key-${uid}`);
  console.log(
    `release record after the second release: ${JSON.stringify((record as { data?: unknown } | undefined)?.data)} (S1 ${s1}, S2 ${s2})`,
  );

  // 3. The user writes the first release back, its 20s delay with it.
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
  await patcher.patch(
    t.configMap,
    ns,
    'cm',
    {
      metadata: {
        annotations: { [Annotations.deletionTimestamp]: s1, [Annotations.releaseProof]: p1, [Annotations.deletionDelay]: '20s' },
      },
    },
    'merge',
  );
  // Kept until S2 + 10m: watched for two of the short delays (a new 20s countdown ends one delay after it is stamped).
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, 2 * DELAY_MS + 5_000);
}, 240_000);
