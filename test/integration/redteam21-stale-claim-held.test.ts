/**
 * Red team 21: a claim the operator should have withdrawn makes the
 * claiming Bundle's background finalizer delete an object that Bundle no
 * longer lists and never controlled.
 *
 * Steps:
 *  1. Bundle sc-w lists ConfigMap sc-o and controls it. Bundle sc-a lists
 *     sc-o too (it loses the Conflict: the operator writes its claim, a
 *     non-controller reference to sc-a, recorded in sc-a's status.claims and
 *     the object's claimReferences annotation) and sc-a-own.
 *  2. sc-a's spec is edited: sc-o dropped, and (a mistake in the same edit)
 *     a resource whose reference names a missing resource: an invalid spec,
 *     whose pass writes nothing but claims (src/core/bundle/plan.ts:122,
 *     `withdrawals: []`), so sc-a's claim on sc-o stays.
 *  3. sc-w is deleted with `--cascade=orphan` (the person keeps sc-o) while
 *     the operator restarts; kube-controller-manager orphans first
 *     (docs/deletion.md allows it): sc-o is nobody's but for sc-a's claim.
 *     sc-w's finalizer reads the orphan deletion from the traces and
 *     leaves sc-o alone (no reference to sc-w, no record of the operator's).
 *  4. sc-a is deleted (background): the person gives up on that Bundle.
 *
 * Expected: sc-o kept. The person orphaned sc-o's only controller; sc-a does
 * not list it (docs/deletion.md: the claim "is withdrawn when that Bundle
 * stops listing the object and by its own finalizer"; docs/glossary.md:
 * "listing: ... an object a live Bundle lists is never pruned"; the claim
 * exists only "so a cascade spares it").
 *
 * What happens: sc-a's finalizer counts sc-o as held (finalize.ts:238-241
 * isHeldBy: uncontrolled and carrying sc-a's recorded claim), whether sc-a
 * lists it or not, and background deletes it as one of sc-a's own objects
 * ("deleted ConfigMap .../sc-o: its Bundle is being deleted").
 *
 * Fixed: an uncontrolled object carrying the Bundle's claim is held by it
 * only while the Bundle lists it; otherwise the claim is withdrawn
 * (core/bundle/finalize.ts isHeldBy, finalize-keep.ts withdrawSteps).
 */
import { conditionOf, expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, getBundle, waitForReady } from './bundles.js';
import { deleteBundleAndWait, waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';
import { orphanDeletionFinishedWhileDown } from './orphan-traces.js';

const f = referenceFixture('rt21-sc');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('a Bundle that no longer lists an object does not delete it through a claim it could not withdraw', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'sc-w', [{ name: 'o', object: configMap('sc-o') }]);
  const w = await waitForReady(env, ns, 'sc-w');
  await applyBundle(env, ns, 'sc-a', [
    { name: 'o', object: configMap('sc-o') },
    { name: 'own', object: configMap('sc-a-own') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'sc-a', 'sc-o');
  const a = claimed.bundle;
  const o = claimed.object;
  console.log('sc-o claimed:', JSON.stringify(o.metadata.ownerReferences), JSON.stringify(o.metadata.annotations));

  await applyBundle(env, ns, 'sc-a', [
    { name: 'own', object: configMap('sc-a-own') },
    { name: 'g', references: [{ resource: 'ghost' }], object: configMap('sc-a-g') },
  ]);
  await waitFor('sc-a to report its invalid spec', async () => conditionOf(await getBundle(env, ns, 'sc-a'), 'Error')?.status === 'True');
  await sleep(2_000);

  await f.operator.stop();
  await orphanDeletionFinishedWhileDown(f, 'sc-w', w.metadata.uid);
  await sleep(1_000);
  const orphaned = await env.client.get(t.configMap, ns, 'sc-o');
  console.log(
    'sc-o after sc-w orphaned:',
    JSON.stringify(orphaned.metadata.ownerReferences ?? []),
    JSON.stringify(orphaned.metadata.annotations ?? {}),
  );
  expectKept(orphaned, o.metadata.uid);

  await deleteBundleAndWait(env, ns, 'sc-a', a.metadata.uid);
  await sleep(2_000);
  console.log('sc-a events:', JSON.stringify(await eventsFor(env, ns, 'sc-a')));
  expectKept(await env.client.tryGet(t.configMap, ns, 'sc-o'), o.metadata.uid);
}, 240_000);
