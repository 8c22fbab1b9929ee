/**
 * Red team 6: an object a Bundle holds only by its claim (a non-controller
 * reference to the Bundle, written when it lost a Conflict) is deleted by
 * kube-controller-manager in a foreground deletion of that Bundle, its
 * deletionPolicy Orphan notwithstanding: the chart's deletion guard protects
 * only objects a Bundle *controls*, while the finalizer treats claim-only
 * objects as held (finalize.ts isHeldBy) and would release them.
 *
 * Steps: Bundle rt6c-one lists ConfigMap rt6c-x (deletionPolicy Orphan) and
 * controls it. Bundle rt6c-two lists the same rt6c-x behind a dependency
 * that is not Ready yet (a Deployment: a routine rollout), plus rt6c-keep
 * (Orphan, the control); it loses the Conflict and records its claim on
 * rt6c-x (src/core/bundle/claims.ts 'reference'). rt6c-one
 * is deleted with `--cascade=orphan` while the operator restarts:
 * kube-controller-manager takes rt6c-one's reference out and rt6c-two's
 * claim stays; rt6c-two adopts it only "by the apply, after the dependency
 * gate" (claims.ts claimFor 'adopt'), so it stays uncontrolled, held by the
 * claim alone (checked: for 3 s with the operator running). The chart's
 * deletion guard is installed for kube-controller-manager. The operator goes
 * down (a restart) and rt6c-two is deleted with `--cascade=foreground`; the
 * operator comes back.
 *
 * Expected: kept (deletionPolicy Orphan; docs/safety.md, Bundle finalizer:
 * foreground "releases Orphan and Approve objects as soon as it sees the
 * deletion (the chart's deletion guard refuses the collectors' deletes of
 * those until they are released)"; finalize.ts isHeldBy makes such an
 * object the Bundle's, keptFromCascade releases it). rt6c-keep is kept.
 * rt6c-x is deleted by kube-controller-manager: its only owner is waiting
 * for its dependents (foregroundDeletion), so the collector deletes it.
 *
 * Cause: charts/bundlesmith/templates/deletionguard.yaml:38-41 (variable
 * controlledByBundle) requires `controller: true` on the Bundle reference;
 * a claim reference (controller false, src/core/bundle/claims.ts) is not
 * seen, so every validation passes. kube-controller-manager treats any
 * ownerReference as an owner, controller or not.
 *
 * Suggested fix: in the guard, treat any ownerReference to a Bundle
 * (apiVersion in the smith.atlassian.com group, kind Bundle), controller or
 * not, as "held by a Bundle" for the Orphan / Approve / unreadable-rules
 * checks, matching finalize.ts isHeldBy (and the group test of
 * ownership.ts isBundleReference rather than the literal
 * 'smith.atlassian.com/v1').
 *
 * Since stop 35 (red team 22), rt6c-one's orphan finalizer counts rt6c-x (its
 * applied-hash, at its coordinates) as a candidate and lets it go to
 * rt6c-two, which may take hold of it at once: the end checked is the same
 * (kept), whether rt6c-two holds it by its claim or as its controller.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { conditionOf, expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { installDeletionGuard } from './deletion-propagation.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const f = referenceFixture('rt6cl');

const deployment = (name: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/none:1' }] } },
  },
});

it("foreground, deletion guard installed: an Orphan object held by a Bundle's claim alone is not deleted by the collector", async () => {
  const { env, ns, t } = f;
  const orphan = { [Annotations.deletionPolicy]: 'Orphan' };
  await applyBundle(env, ns, 'rt6c-one', [
    { name: 'x', object: configMap('rt6c-x', { k: 'v' }, orphan) },
    { name: 'other', object: configMap('rt6c-other') },
  ]);
  const one = await waitForReady(env, ns, 'rt6c-one');
  await applyBundle(env, ns, 'rt6c-two', [
    { name: 'gate', object: deployment('rt6c-gate') },
    { name: 'x', references: [{ resource: 'gate' }], object: configMap('rt6c-x', { k: 'v' }, orphan) },
    { name: 'keep', object: configMap('rt6c-keep', { k: 'v' }, orphan) },
  ]);
  const two = await waitForBundle(env, ns, 'rt6c-two', 'not Ready', (b) => conditionOf(b, 'Ready')?.status === 'False');
  await waitFor('rt6c-two to record its claim on rt6c-x', async () => {
    const o = await env.client.get(t.configMap, ns, 'rt6c-x');
    return (o.metadata.ownerReferences ?? []).some((r) => r.uid === two.metadata.uid && r.controller !== true) ? o : undefined;
  });
  // rt6c-one is deleted with --cascade=orphan while the operator restarts: the collector takes its reference
  // out, rt6c-two's claim stays; rt6c-two adopts it only by the apply, after its gate opens.
  await f.operator.stop();
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt6c-one', { uid: one.metadata.uid, propagationPolicy: 'Orphan' });
  const x = await waitFor(
    "rt6c-x to be held by rt6c-two's claim alone",
    async () => {
      const o = await env.client.get(t.configMap, ns, 'rt6c-x');
      const refs = o.metadata.ownerReferences ?? [];
      return refs.length === 1 && refs[0]?.uid === two.metadata.uid && refs[0]?.controller !== true ? o : undefined;
    },
    { timeoutMs: 90_000 },
  );
  await f.startOperator();
  await waitFor('rt6c-one to be gone', async () => (await getBundle(env, ns, 'rt6c-one')) === undefined, { timeoutMs: 60_000 });
  await sleep(3_000);
  // rt6c-one's finalizer sees rt6c-x uncontrolled at its coordinates (its applied-hash: an orphan candidate) and lets it
  // go to rt6c-two, which lists it; rt6c-two may then take hold of it at once (the let-go mark). Either way rt6c-two
  // alone holds it: by its claim, or as its controller.
  const held = (await env.client.get(t.configMap, ns, 'rt6c-x')).metadata.ownerReferences ?? [];
  expect(held.map((r) => r.uid)).toEqual([two.metadata.uid]);
  const keep = await env.client.get(t.configMap, ns, 'rt6c-keep');

  const removeGuard = await installDeletionGuard(f, t.configMap, keep.metadata);
  try {
    await f.operator.stop();
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt6c-two', { uid: two.metadata.uid, propagationPolicy: 'Foreground' });
    await waitFor('the collector to take the gate', async () => (await env.client.tryGet(t.deployment, ns, 'rt6c-gate')) === undefined, {
      timeoutMs: 90_000,
    });
    await sleep(5_000);
    await f.startOperator();
    await waitFor('rt6c-two to be gone', async () => (await getBundle(env, ns, 'rt6c-two')) === undefined, { timeoutMs: 90_000 });
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt6c-keep'), keep.metadata.uid);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt6c-x'), x.metadata.uid);
  } finally {
    await removeGuard();
  }
}, 300_000);

it('the operator down through both deletions: the deletion guard alone keeps an Orphan object held by a claim', async () => {
  // The first case's object may become rt6c-two's controlled object before its deletion (its first owner's finalizer
  // lets it go): then the guard's branch for controlled objects keeps it. Here the operator stays down from the
  // first deletion until the collector has acted on the second, so when kube-controller-manager deletes the
  // dependents of the foreground deletion, the object is held by the claim alone: only the guard's claim branch
  // stands between it and the collector.
  const { env, ns, t } = f;
  const orphan = { [Annotations.deletionPolicy]: 'Orphan' };
  await applyBundle(env, ns, 'rt6d-one', [{ name: 'x', object: configMap('rt6d-x', { k: 'v' }, orphan) }]);
  const one = await waitForReady(env, ns, 'rt6d-one');
  await applyBundle(env, ns, 'rt6d-two', [
    { name: 'gate', object: deployment('rt6d-gate') },
    { name: 'x', references: [{ resource: 'gate' }], object: configMap('rt6d-x', { k: 'v' }, orphan) },
  ]);
  const two = await waitForBundle(env, ns, 'rt6d-two', 'not Ready', (b) => conditionOf(b, 'Ready')?.status === 'False');
  await waitFor('rt6d-two to record its claim on rt6d-x', async () => {
    const o = await env.client.get(t.configMap, ns, 'rt6d-x');
    return (o.metadata.ownerReferences ?? []).some((r) => r.uid === two.metadata.uid && r.controller !== true) ? o : undefined;
  });
  const removeGuard = await installDeletionGuard(f, t.configMap, (await env.client.get(t.configMap, ns, 'rt6d-x')).metadata);
  try {
    await f.operator.stop();
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt6d-one', { uid: one.metadata.uid, propagationPolicy: 'Orphan' });
    const x = await waitFor(
      "rt6d-x to be held by rt6d-two's claim alone",
      async () => {
        const o = await env.client.get(t.configMap, ns, 'rt6d-x');
        const refs = o.metadata.ownerReferences ?? [];
        return refs.length === 1 && refs[0]?.uid === two.metadata.uid && refs[0]?.controller !== true ? o : undefined;
      },
      { timeoutMs: 90_000 },
    );
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rt6d-two', { uid: two.metadata.uid, propagationPolicy: 'Foreground' });
    await waitFor('the collector to take the gate', async () => (await env.client.tryGet(t.deployment, ns, 'rt6d-gate')) === undefined, {
      timeoutMs: 90_000,
    });
    await sleep(5_000);
    // Still down: what kept it is the guard.
    const beforeStart = await env.client.tryGet(t.configMap, ns, 'rt6d-x');
    expectKept(beforeStart, x.metadata.uid);
    expect((beforeStart?.metadata.ownerReferences ?? []).map((r) => r.uid)).toEqual([two.metadata.uid]);
    await f.startOperator();
    await waitFor('rt6d-two to be gone', async () => (await getBundle(env, ns, 'rt6d-two')) === undefined, { timeoutMs: 90_000 });
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt6d-x'), x.metadata.uid);
  } finally {
    await removeGuard();
  }
}, 300_000);
