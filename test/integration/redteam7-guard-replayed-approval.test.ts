/**
 * Red team 7: the Bundle's status record (status.pendingDeletions) makes the
 * operator read an earlier countdown's stamp, written back, as the recorded
 * one, so an approval from that earlier countdown no longer counts (it is
 * not later than the recorded stamp). The chart's deletion guard cannot
 * read the record: it compares the approval with the stamp on the object,
 * finds the old approval later than the old stamp, and lets
 * kube-controller-manager delete the object in a foreground cascade, an
 * Approve object that was never approved for its current countdown.
 *
 * Steps: kube-controller-manager runs; the chart's deletion guard is
 * installed for it. A Bundle lists ConfigMaps rt7a-x (deletionPolicy
 * Approve, deletionDelay 1h), rt7a-control (the same) and rt7a-plain.
 * rt7a-x leaves the spec (stamp T1), is approved (deletionApproved A1 > T1;
 * its 1h delay still runs) and its annotations are saved; it is listed again
 * (the operator takes stamp and approval off) and leaves again: stamp T2 >
 * A1, recorded in status.pendingDeletions, waiting for the delay and a new
 * approval. rt7a-control leaves too (not approved). The saved annotations of
 * the first countdown (T1, its stamp-proof, A1) are written back on rt7a-x
 * (a restore, an old copy re-applied). The operator is down (a restart).
 * `kubectl delete bundle --cascade=foreground`. The collector takes
 * rt7a-plain. The operator comes back.
 *
 * Expected (docs/safety.md: "a proven stamp earlier than the recorded one
 * reads as the recorded one"; "`deletionPolicy: Approve` also needs a
 * `deletionApproved` time later than the stamp"; foreground releases
 * Approve objects and the guard refuses the collectors' deletes "until
 * they are released"): rt7a-x is not approved for its countdown (A1 < T2)
 * and is kept, like rt7a-control. Actual: kube-controller-manager deletes
 * rt7a-x.
 *
 * Cause: charts/bundlesmith/templates/deletionguard.yaml:75-79
 * (approvedAfterStamp) compares deletionApproved with the live
 * deletionTimestamp, while the operator reads the stamp through the record
 * (src/core/bundle/countdown.ts:117-125 notEarlierThanRecorded) and the
 * stamp proof; the guard's Approve validation (:85) then lets the delete
 * through.
 *
 * Suggested fix: the guard cannot read the Bundle's status, so do not let
 * an approval on the object open it: refuse every collector delete of a
 * Bundle-held object whose policies say Approve (the finalizer releases
 * Approve objects in foreground anyway, approved or not, and the sweeper
 * then judges the approval with the release proof); or have the finalizer
 * mark what it leaves to the collector and let the guard pass only marked
 * objects.
 *
 * Fixed: a proven stamp earlier than the Bundle's record reads as none
 * (countdown.ts notEarlierThanRecorded): the operator starts the countdown
 * again and writes the new stamp over the old one, so the guard sees the
 * old approval older than the stamp. The operator down when the copy is
 * written back stays a limit (docs/safety.md).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { installDeletionGuard } from './deletion-propagation.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const f = referenceFixture('rt7ap');

it('foreground, deletion guard installed: an approval from an earlier countdown, written back with its stamp, does not let the collector delete an Approve object', async () => {
  const { env, ns, t } = f;
  const gated = { [Annotations.deletionPolicy]: 'Approve', [Annotations.deletionDelay]: '1h' };
  const x = configMap('rt7a-x', { k: 'v' }, gated);
  const control = configMap('rt7a-control', { k: 'v' }, gated);
  const plain = configMap('rt7a-plain');
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: 'ap', namespace: ns },
        spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
      },
      { fieldManager: 'test-user', force: true },
    );
  const annotationsOf = async (name: string) => (await env.client.get(t.configMap, ns, name)).metadata.annotations ?? {};
  const annotate = (values: Record<string, string>) =>
    env.client.patch(t.configMap, ns, 'rt7a-x', { metadata: { annotations: values } }, 'merge', { fieldManager: 'restore-tool' });
  const pending = async () =>
    ((await getBundle(env, ns, 'ap'))?.status as { pendingDeletions?: { name: string; deletionTimestamp: string }[] } | undefined)
      ?.pendingDeletions ?? [];

  await apply([x, control, plain]);
  await waitForReady(env, ns, 'ap');
  const xUid = (await env.client.get(t.configMap, ns, 'rt7a-x')).metadata.uid;
  const controlUid = (await env.client.get(t.configMap, ns, 'rt7a-control')).metadata.uid;

  // An earlier countdown of rt7a-x, approved (its 1h delay still running), then cancelled by listing it again.
  await apply([control, plain]);
  await waitFor('the first stamp', async () => (await annotationsOf('rt7a-x'))[Annotations.deletionTimestamp] !== undefined);
  await sleep(2_000);
  await annotate({ [Annotations.deletionApproved]: new Date().toISOString() });
  await sleep(1_000);
  const old = await annotationsOf('rt7a-x');
  expect(old[Annotations.deletionApproved]).toBeDefined();
  await apply([x, control, plain]);
  await waitFor(
    'the first countdown cancelled',
    async () =>
      (await annotationsOf('rt7a-x'))[Annotations.deletionTimestamp] === undefined &&
      (await annotationsOf('rt7a-x'))[Annotations.deletionApproved] === undefined,
  );
  await sleep(2_000);

  // It leaves again (and rt7a-control with it): a new countdown, recorded, not approved.
  await apply([plain]);
  await waitFor('the second countdown recorded', async () => {
    const p = await pending();
    return (
      p.some((e) => e.name === 'rt7a-x' && Date.parse(e.deletionTimestamp) > Date.parse(old[Annotations.deletionApproved] ?? '')) &&
      p.some((e) => e.name === 'rt7a-control')
    );
  });

  const removeGuard = await installDeletionGuard(f, t.configMap, { name: 'rt7a-control', uid: controlUid });
  try {
    // The first countdown's annotations are written back (a restore, an old copy re-applied).
    const keys = [Annotations.deletionTimestamp, Annotations.stampProof, Annotations.deletionApproved];
    await annotate(Object.fromEntries(keys.map((k) => [k, old[k] ?? ''])));
    // The operator reads a stamp earlier than its record as none and starts the countdown again: the new stamp, written
    // over the old one, is later than the old approval, which the guard then does not count either.
    await waitFor(
      'the countdown started again over the written-back stamp',
      async () =>
        Date.parse((await annotationsOf('rt7a-x'))[Annotations.deletionTimestamp] ?? '') >
        Date.parse(old[Annotations.deletionApproved] ?? ''),
    );
    // The operator still keeps it (the record decides): nothing deleted yet.
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt7a-x'), xUid);

    // The operator is down (a restart); the Bundle is deleted in the foreground.
    await f.operator.stop();
    const bundle = await getBundle(env, ns, 'ap');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'ap', { uid: bundle?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    await waitFor(
      'the collector to take the plain object',
      async () => (await env.client.tryGet(t.configMap, ns, 'rt7a-plain')) === undefined,
      { timeoutMs: 90_000 },
    );
    await sleep(5_000);
    await f.startOperator();
    await waitFor('ap to be gone', async () => (await getBundle(env, ns, 'ap')) === undefined, { timeoutMs: 90_000 });
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt7a-control'), controlUid);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt7a-x'), xUid);
  } finally {
    await removeGuard();
  }
}, 300_000);
