/**
 * Red team 17 (an attack that held: this test passes). Two Bundles claim the
 * same object, another tool blanks the claimReferences annotation, one
 * claimant drops the object, and every Bundle is then deleted.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator):
 *  1. Bundle rt17t-w lists ConfigMap rt17t-x (deletionPolicy Orphan) and
 *     controls it. Bundles rt17t-l1 and rt17t-l2 list it too: both lose the
 *     Conflict and claim it (annotation "l1,l2" + each one's status.claims).
 *  2. `kubectl annotate --overwrite smith.atlassian.com/claimReferences=`.
 *  3. rt17t-l1 stops listing rt17t-x (its claim must be withdrawn: only its
 *     status records it now).
 *  4. rt17t-w is deleted (x let go to rt17t-l2, which takes it), then
 *     rt17t-l2 (Orphan: released for good), then rt17t-l1.
 *
 * Expected (docs/safety.md): deletionPolicy Orphan objects are never deleted
 * by a Bundle's deletion; a claim is withdrawn when its Bundle stops listing
 * the object, never left as the user's. Held on a96979a: the status record
 * alone was enough to withdraw rt17t-l1's claim (claims.ts planWithdrawals
 * with the Bundle's own status.claims), and the let-go to rt17t-l2 kept only
 * the live claim.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt17t');

it('two claimants, the annotation blanked, one drops the object, all Bundles deleted: the Orphan object is kept', async () => {
  const { env, ns, t } = f;
  const x = () => configMap('rt17t-x', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' });
  await applyBundle(env, ns, 'rt17t-w', [{ name: 'x', object: x() }]);
  const w = await waitForReady(env, ns, 'rt17t-w');
  await applyBundle(env, ns, 'rt17t-l1', [
    { name: 'x', object: x() },
    { name: 'a', object: configMap('rt17t-a') },
  ]);
  await applyBundle(env, ns, 'rt17t-l2', [
    { name: 'x', object: x() },
    { name: 'b', object: configMap('rt17t-b') },
  ]);
  const claimed = await waitFor('both claims recorded', async () => {
    const l1 = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt17t-l1');
    const l2 = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'rt17t-l2');
    const o = await env.client.tryGet(t.configMap, ns, 'rt17t-x');
    if (!l1 || !l2 || !o) return undefined;
    const refs = o.metadata.ownerReferences ?? [];
    const ok = [l1, l2].every(
      (l) =>
        refs.some((r) => r.uid === l.metadata.uid && r.controller !== true) &&
        (statusClaimsOf(l.status) ?? []).some((e) => e.uid === o.metadata.uid),
    );
    return ok ? { l1, l2, o } : undefined;
  });
  const uid = claimed.o.metadata.uid;

  await env.client.patch(t.configMap, ns, 'rt17t-x', { metadata: { annotations: { [Annotations.claimReferences]: '' } } }, 'merge', {
    fieldManager: 'kubectl-annotate',
  });
  await new Promise((r) => setTimeout(r, 3000));

  await applyBundle(env, ns, 'rt17t-l1', [{ name: 'a', object: configMap('rt17t-a') }]);
  await waitForReady(env, ns, 'rt17t-l1');
  await waitFor('the claim of rt17t-l1 withdrawn', async () => {
    const o = await env.client.get(t.configMap, ns, 'rt17t-x');
    return !(o.metadata.ownerReferences ?? []).some((r) => r.uid === claimed.l1.metadata.uid);
  });

  for (const [name, b] of [
    ['rt17t-w', w],
    ['rt17t-l2', claimed.l2],
    ['rt17t-l1', claimed.l1],
  ] as const) {
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, name, { uid: b.metadata.uid });
    await waitFor(`${name} to be gone`, async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, name)) === undefined, {
      timeoutMs: 60_000,
    });
    const cur = await env.client.tryGet(t.configMap, ns, 'rt17t-x');
    console.log(`rt17t-x after ${name} went`, cur === undefined ? 'GONE' : JSON.stringify(cur.metadata.ownerReferences ?? []));
  }
  await new Promise((r) => setTimeout(r, 8000));
  expectKept(await env.client.tryGet(t.configMap, ns, 'rt17t-x'), uid);
}, 300_000);
