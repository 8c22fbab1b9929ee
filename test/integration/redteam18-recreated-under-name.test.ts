/**
 * Red team 18 (an attack that held: this test passes). The claimed object is
 * deleted and re-created under the same name while the operator is down,
 * the new incarnation carrying a person's reference to the claiming Bundle;
 * the claiming Bundle's status.claims still names the old incarnation.
 *
 * Steps (reference cluster: real kube-controller-manager + our operator):
 *  1. Bundle rt18r-a lists ConfigMap rt18r-x (controls it). Bundle rt18r-u
 *     lists rt18r-x and rt18r-y: it loses the Conflict over x and claims it
 *     (reference, annotation, status.claims naming x's uid).
 *  2. The operator is stopped. rt18r-x is deleted and re-created under the
 *     same name from a copy (`kubectl get -o yaml`, the claimReferences
 *     annotation and the uid left out): controlled by rt18r-a, and made an
 *     owner by rt18r-u by the person (a non-controller reference: the
 *     user's umbrella). The operator is started again.
 *  3. rt18r-u stops listing rt18r-x.
 *  4. rt18r-a is deleted (background).
 *
 * Expected (docs/safety.md): an entry names "this object only, never one
 * re-created under its name"; the person's reference is the user's, kept,
 * never withdrawn, a live owner the finalizer defers to as
 * kube-controller-manager would. Held: the entry is keyed by uid
 * (claim-record.ts claimRecordsOf), the fresh read (claim-reads.ts) finds
 * another uid under the name and drops it, so the new incarnation's
 * reference reads as the user's.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { deleteBundleAndWait, waitForRecordedClaim } from './claims.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt18r');

it('an object re-created under the claimed name with a user reference to the claiming Bundle keeps that reference: the object is kept', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'rt18r-a', [{ name: 'x', object: configMap('rt18r-x') }]);
  const a = await waitForReady(env, ns, 'rt18r-a');
  await applyBundle(env, ns, 'rt18r-u', [
    { name: 'x', object: configMap('rt18r-x') },
    { name: 'y', object: configMap('rt18r-y') },
  ]);
  const claimed = await waitForRecordedClaim(env, ns, t.configMap, 'rt18r-u', 'rt18r-x', { annotated: false });
  const u = claimed.bundle;
  const old = claimed.object;

  await f.operator.stop();
  await env.client.delete(t.configMap, ns, 'rt18r-x', { uid: old.metadata.uid });
  await waitFor('the old rt18r-x gone', async () => (await env.client.tryGet(t.configMap, ns, 'rt18r-x')) === undefined);
  const annotations = { ...(old.metadata.annotations ?? {}) };
  delete annotations[Annotations.claimReferences];
  const created = await env.client.create(t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'rt18r-x',
      namespace: ns,
      labels: old.metadata.labels ?? {},
      annotations,
      ownerReferences: [
        ...(old.metadata.ownerReferences ?? []).filter((r) => r.controller === true),
        { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'rt18r-u', uid: u.metadata.uid, blockOwnerDeletion: false },
      ],
    },
    data: (old as unknown as { data?: Record<string, string> }).data ?? {},
  });
  const uid = created.metadata.uid;
  await f.startOperator();
  await new Promise((r) => setTimeout(r, 4000));
  const midU = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'rt18r-u');
  console.log('u status.claims after the restart', JSON.stringify(statusClaimsOf(midU.status)), 'old uid', old.metadata.uid, 'new', uid);

  await applyBundle(env, ns, 'rt18r-u', [{ name: 'y', object: configMap('rt18r-y') }]);
  await waitForReady(env, ns, 'rt18r-u');
  await new Promise((r) => setTimeout(r, 3000));
  const dropped = await env.client.get(t.configMap, ns, 'rt18r-x');
  console.log('rt18r-x refs after rt18r-u dropped it', JSON.stringify(dropped.metadata.ownerReferences ?? []));

  await deleteBundleAndWait(env, ns, 'rt18r-a', a.metadata.uid);
  await new Promise((r) => setTimeout(r, 8000));
  const o = await env.client.tryGet(t.configMap, ns, 'rt18r-x');
  console.log('rt18r-x', o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
  expectKept(o, uid);
}, 300_000);
