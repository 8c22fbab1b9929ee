/**
 * Red team round three (redteam3): "mark it Orphan, then delete the Bundle
 * with --cascade=foreground".
 *
 * What a user does: to delete a Bundle but keep one of its objects (a PVC,
 * say), they add `smith.atlassian.com/deletionPolicy: Orphan` to that
 * resource in the Bundle (kubectl apply), then delete the Bundle with
 * `--cascade=foreground` (or its parent cascades in foreground). The chart's
 * deletion guard is installed, kube-controller-manager is the collector.
 * Between the two commands the operator has not applied the new annotation
 * to the live object: it was restarting (an upgrade, a node drain), or the
 * resource is Blocked behind a dependency that is not Ready (a resource
 * whose dependency is not Ready is not applied), or simply the two commands
 * ran faster than a pass.
 *
 * What happens: kube-controller-manager deletes the object the manifest
 * says to keep. The guard reads only the live object's annotation
 * (charts/bundlesmith/templates/deletionguard.yaml, `variables.policy` from
 * oldObject.metadata.annotations), and the live object does not carry it
 * yet; the finalizer would have released it (core/bundle/finalize.ts
 * keptFromCascade reads the stricter of the live rules and the manifest's,
 * declaredFloor), but the guard is what orders the collector behind the
 * finalizer, and it lets the collector's delete through. A background
 * deletion of the same Bundle keeps the object (the finalizer reads the
 * manifest there too), so only foreground loses it. The README's "the
 * guard reads only the object, so an Orphan or Approve policy ... is
 * written onto it ... when it is applied" assumes the manifest was applied.
 *
 * Who decides: kube-controller-manager's garbage collector, let through by
 * the deletion guard; the operator's side is src/core/bundle/finalize.ts
 * keptFromCascade, which sees the manifest's Orphan only when it runs before
 * the collector.
 *
 * Fixed for the Blocked resource: every pass writes the manifest's sealed
 * rules (declared-rules) onto an object it controls before anything else
 * (core/bundle/claims.ts, the declare claim), whatever the wait for references
 * says, and the guard reads the policy in that proof. An operator that is
 * down when both commands run can write nothing: that stays a known limit
 * (docs/safety.md), so this file keeps the Blocked case and its control.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { installDeletionGuard } from './deletion-propagation.js';
import { referenceFixture } from './reference-cluster.js';
import { BUNDLE_RESOURCE_TYPE, applyBundle, configMap, getBundle, waitForReady } from './bundles.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const f = referenceFixture('rt3-guard');

beforeAll(async () => {
  const { env, ns, t } = f;
  // The chart's deletion guard, rendered by helm for this namespace and kube-controller-manager's user; in force once the
  // collector's dry-run delete of an Orphan object a Bundle controls is refused.
  await applyBundle(env, ns, 'probe', [
    { name: 'p', object: configMap('guard-probe', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
  ]);
  await waitForReady(env, ns, 'probe');
  const probe = await env.client.get(t.configMap, ns, 'guard-probe');
  await installDeletionGuard(f, t.configMap, probe.metadata);
}, 60_000);

async function deleteForeground(name: string): Promise<void> {
  const { env, ns } = f;
  const b = await getBundle(env, ns, name);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, name, { uid: b?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
}

it('a resource Blocked behind a dependency that is not Ready, marked Orphan, then a foreground delete: the object is kept', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'gb', [{ name: 'keep', object: configMap('gb-keep') }]);
  await waitForReady(env, ns, 'gb');
  const keep = await env.client.get(t.configMap, ns, 'gb-keep');
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'gb-web' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'gb' } },
      template: { metadata: { labels: { app: 'gb' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } },
    },
  };
  // The new revision: gb-keep now depends on a Deployment that never becomes Available, and is marked Orphan.
  await applyBundle(env, ns, 'gb', [
    { name: 'web', object: deployment },
    {
      name: 'keep',
      references: [{ resource: 'web' }],
      object: configMap('gb-keep', { key: 'value' }, { [Annotations.deletionPolicy]: 'Orphan' }),
    },
  ]);
  await sleep(3_000);
  expect((await env.client.get(t.configMap, ns, 'gb-keep')).metadata.annotations?.[Annotations.deletionPolicy]).toBeUndefined();
  await deleteForeground('gb');
  await waitFor('gb to be gone', async () => (await getBundle(env, ns, 'gb')) === undefined, { timeoutMs: 90_000 });
  await sleep(2_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'gb-keep'), keep.metadata.uid);
}, 240_000);

it('control (passes): the same Blocked resource marked Orphan, then a background delete: the finalizer keeps it', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'gc', [{ name: 'keep', object: configMap('gc-keep') }]);
  await waitForReady(env, ns, 'gc');
  const keep = await env.client.get(t.configMap, ns, 'gc-keep');
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'gc-web' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'gc' } },
      template: { metadata: { labels: { app: 'gc' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } },
    },
  };
  await applyBundle(env, ns, 'gc', [
    { name: 'web', object: deployment },
    {
      name: 'keep',
      references: [{ resource: 'web' }],
      object: configMap('gc-keep', { key: 'value' }, { [Annotations.deletionPolicy]: 'Orphan' }),
    },
  ]);
  await sleep(3_000);
  const b = await getBundle(env, ns, 'gc');
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'gc', { uid: b?.metadata.uid ?? '', propagationPolicy: 'Background' });
  await waitFor('gc to be gone', async () => (await getBundle(env, ns, 'gc')) === undefined, { timeoutMs: 90_000 });
  await sleep(2_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'gc-keep'), keep.metadata.uid);
}, 240_000);
