/**
 * Red team 29: the restart the release record gives a written-back release
 * is signed over the facts written back, a policy taken off included (the
 * Approve twin of redteam29-rereleased-shorter-delay-restamped). Released
 * once without a policy (deletionDelay 20s: stamp S1, proof P1) and again,
 * by the same Bundle name re-created with `deletionPolicy: Approve` (stamp
 * S2, proof P2 over Approve, recorded S2), the object has S1, P1 written
 * back and its deletionPolicy taken off by someone who may only patch it.
 * P1 checks; S1 reads as none against the record, the sweep starts a new
 * countdown and re-signs the release over no policy: the object is deleted
 * ~20 s later, never approved.
 *
 * Steps (the patch-only user may get/patch ConfigMaps of the namespace,
 * nothing in the operator's namespace; no approval is ever written):
 *  1. Bundle `app` lists ConfigMap cm (deletionDelay 20s) and is deleted:
 *     released with S1 and P1. The user reads S1 and P1.
 *  2. Bundle `app` is applied again listing cm with deletionDelay 20s and
 *     deletionPolicy Approve: it takes hold (the listing cancel recorded).
 *     It is deleted again: released with S2 and P2 over Approve, recorded
 *     S2; it waits for an approval.
 *  3. The user writes S1 and P1 back and takes the deletionPolicy off.
 *
 * Expected: cm is kept until approved. docs/safety.md: "an `Approve` object
 * waits for an approval later than its stamp" (Released-object sweeper
 * row); "Edits by hand can put a deletion off, never bring it forward ... a
 * `deletionPolicy: Delete` written by hand ... is read as what the Bundle
 * said"; "A released object carries the strictest reading, written onto it
 * and signed"; the proof binds the policy "so that taking an Approve policy
 * off a released object does not make it deletable without an approval"
 * (core/softdelete/provenance.ts). Not a known limit.
 *
 * What happens: readWithRecord (core/softdelete/release-record.ts) reads S1
 * against the record S2 as no stamp; decideReleasedSweep says 'mark';
 * released-sweeper.ts deleteIfStillDue -> act -> RelistedReleases
 * .startCountdown -> restampReleasePatch (core/bundle/release.ts
 * resignedReleaseProof over releaseFactsOf the object as written back:
 * policy '') re-signs, recorded S3; at S3 + 20s the sweep deletes cm. The
 * record holds the stamp alone, not the policy of the latest signing.
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

const f = operatorFixture('rt29rad');

const DELAY_MS = 20_000;

let patcher: KubeClient | undefined;
afterAll(() => patcher?.close());

it('the first release written back, the Approve policy taken off, after a second release over Approve: restamped and deleted unapproved', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` });

  patcher = await patchOnlyUser(env, ns, { apiGroups: [''], resources: ['configmaps'] });

  // 1. Released by `app`: S1, P1 (recorded S1).
  const { uid, stamp: s1, proof: p1 } = await releasedBy(env, ns, 'app', [{ name: 'c', object: manifest }], t.configMap, 'cm');

  // 2. `app` again, now Approve: takes hold, then released again (S2, P2 over Approve).
  const longer = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: '20s', [Annotations.deletionPolicy]: 'Approve' });
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
  expect(s2).not.toBe(s1);
  expect(second.metadata.annotations?.[Annotations.deletionPolicy]).toBe('Approve');
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), 'default', `bundlesmith-release-key-${uid}`);
  console.log(
    `release record after the second release: ${JSON.stringify((record as { data?: unknown } | undefined)?.data)} (S1 ${s1}, S2 ${s2})`,
  );

  // 3. The user writes the first release back and takes the policy off.
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm'), uid);
  await patcher.patch(
    t.configMap,
    ns,
    'cm',
    {
      metadata: {
        annotations: { [Annotations.deletionTimestamp]: s1, [Annotations.releaseProof]: p1, [Annotations.deletionPolicy]: null },
      },
    },
    'merge',
  );
  // Kept until approved: watched for two delays (a new 20s countdown ends one delay after it is stamped).
  await expectKeptFor(env, t.configMap, ns, 'cm', uid, 2 * DELAY_MS + 5_000);
}, 240_000);
