/**
 * Red team 10 probe: "listing it again cancels the countdown at once, even
 * behind a dependency that is not Ready, an invalid spec or a failed apply"
 * (docs/safety.md) - but not behind a watch that cannot list. No proof is
 * written back here: only Bundle edits and an outage of a CRD's conversion
 * webhook.
 *
 * Steps: Bundle sr lists ConfigMaps sr-x (deletionDelay 20s) and sr-y. sr-x
 * leaves the spec: stamped at T1, recorded. The Bundle is edited to list
 * sr-x again (keep it after all) and, in the same edit, a Widget (a CRD whose
 * conversion webhook is down: its watch cannot list, so every pass stops at
 * WatchNotSynced). More than 20s later, sr-x leaves the spec again (a new
 * removal, still behind the outage). The webhook comes back (the CRD's
 * conversion set to None): the watch lists and the Bundle reconciles.
 *
 * Expected: the re-listing cancelled the T1 countdown; sr-x's removal
 * counts down 20s from when it is acted on (the webhook's return), so it is
 * kept for ~20s after the Bundle reconciles again.
 * Actual: sr-x deleted by the first pass after the webhook's return (within
 * ~3s), though it was listed again for 22s in between. The control (the
 * same edits and waits without the Widget) keeps it.
 *
 * Cause: controller.ts reconcile stops at gatherBundle's WatchNotSynced
 * before planning, so no pass of the re-listing spec reaches the claims and
 * applies that take the stamp off (the cancellation needs a plan: plan.ts
 * planClaims / the apply), and the status it writes
 * (errorStatus(statusSubject(cached)), core/bundle/exit-status.ts) keeps
 * status.pendingDeletions {sr-x, T1} whole. When the watch lists, the first
 * full pass sees sr-x unlisted again with its proven T1 stamp, which the
 * record holds (countdown.ts stampTheRecordHolds: live >= kept), and
 * T1+20s is long past: deleted at once. A listing that lasted the whole
 * outage left no trace.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, run, waitFor, expectCountdownRestarted } from './harness.js';
import { configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt10-relist', () => ({ watchSyncTimeoutMs: 2_000 }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GROUP = 'rt10relist.example.com';
const crd = (conversion: Record<string, unknown>, group: string = GROUP) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${group}` },
  spec: {
    group,
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
      {
        name: 'v2',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
    conversion,
  },
});
const GROUP_A = 'rt10relista.example.com';
afterAll(async () => {
  await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, `widgets.${GROUP_A}`, '--wait=false']);
});
const broken = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } } };

it('control: the same edits without the Widget (not stuck): the re-listing cancels, the new removal counts down 20s', async () => {
  const { env, ns, t } = f;
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: 'sc', namespace: ns },
        spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
      },
      { fieldManager: 'test-user', force: true },
    );
  const x = () => configMap('sc-x', { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  await apply([x(), configMap('sc-y')]);
  await waitForReady(env, ns, 'sc');
  const uid = (await env.client.get(t.configMap, ns, 'sc-x')).metadata.uid;
  await apply([configMap('sc-y')]);
  const first = await waitFor(
    'first stamp',
    async () => (await env.client.get(t.configMap, ns, 'sc-x')).metadata.annotations?.[Annotations.deletionTimestamp],
  );
  await apply([x(), configMap('sc-y')]);
  await sleep(22_000);
  await apply([configMap('sc-y')]);
  // The re-listing cancelled the first countdown: the removal starts a new one.
  await expectCountdownRestarted(env, t.configMap, ns, 'sc-x', uid, first);
}, 120_000);

it('a countdown the spec listed again while the Bundle was stuck on a watch is not resumed when the object leaves again', async () => {
  const { env, ns, t } = f;
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: 'sr', namespace: ns },
        spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
      },
      { fieldManager: 'test-user', force: true },
    );
  const X = 'sr-x';
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  const widget = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'sr-widget' }, spec: { size: 1 } };

  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd(broken)) });
  expect(r.stderr).toBe('');
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v1.${GROUP}`, '-n', ns])).code === 0);
  r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'stored-v1', namespace: ns }, spec: { size: 0 } }),
  });
  expect(r.code).toBe(0);
  expect((await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns])).code).not.toBe(0);

  try {
    await apply([x(), configMap('sr-y')]);
    await waitForReady(env, ns, 'sr');
    const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;

    // T1: sr-x leaves.
    await apply([configMap('sr-y')]);
    const first = await waitFor('first stamp, recorded', async () => {
      const o = await env.client.get(t.configMap, ns, X);
      const p = ((await getBundle(env, ns, 'sr'))?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
      const stamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
      return stamp !== undefined && p.some((e) => e.name === X) ? stamp : undefined;
    });
    // Listed again (keep it), with a Widget: stuck on the watch.
    await apply([x(), configMap('sr-y'), widget]);
    await waitForBundle(env, ns, 'sr', 'WatchNotSynced', (b) => JSON.stringify(b.status ?? {}).includes('WatchNotSynced'), 30_000);
    await sleep(22_000);
    expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
    // Leaves again, still stuck.
    await apply([configMap('sr-y'), widget]);
    await sleep(3_000);
    // The webhook comes back.
    r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd({ strategy: 'None' })) });
    expect(r.code).toBe(0);
    // The re-listing while stuck cancelled the first countdown in the record: the first pass past the watch starts a new one.
    await expectCountdownRestarted(env, t.configMap, ns, X, uid, first);
  } finally {
    // The CRD is deleted after the file (afterAll).
  }
}, 180_000);

/**
 * The same gate with deletionPolicy Approve. sa-x (Approve) leaves the spec:
 * stamped, waiting for an approval. The Bundle gets stuck on the Widget's
 * watch (an edit adding it). sa-x is approved (`deletionApproved`, later
 * than the stamp); the stuck Bundle does not act on it. Its owner changes
 * their mind and lists sa-x again (re-listing removes the approval with the
 * stamp: docs/safety.md), then, in a later edit, takes it out again: a new
 * removal, which needs a new approval. The webhook comes back.
 * Expected: sa-x kept (no approval later than its new countdown).
 * Actual (same cause as above): deleted by the first pass after the
 * webhook's return, on the approval of the countdown the re-listing
 * cancelled.
 */
it('an approval of a countdown cancelled by listing the object again (while stuck) does not delete it when it leaves again', async () => {
  const { env, ns, t } = f;
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: 'sa', namespace: ns },
        spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
      },
      { fieldManager: 'test-user', force: true },
    );
  const X = 'sa-x';
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionPolicy]: 'Approve' });
  const widget = { apiVersion: `${GROUP_A}/v2`, kind: 'Widget', metadata: { name: 'sa-widget' }, spec: { size: 1 } };
  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd(broken, GROUP_A)) });
  expect(r.stderr).toBe('');
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v1.${GROUP_A}`, '-n', ns])).code === 0);
  r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: `${GROUP_A}/v1`,
      kind: 'Widget',
      metadata: { name: 'stored-v1a', namespace: ns },
      spec: { size: 0 },
    }),
  });
  expect(r.code).toBe(0);
  await waitFor('v2 lists fail', async () => (await run('kubectl', ['get', `widgets.v2.${GROUP_A}`, '-n', ns])).code !== 0);
  try {
    await apply([x(), configMap('sa-y')]);
    await waitForReady(env, ns, 'sa');
    const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;
    await apply([configMap('sa-y')]);
    await waitForBundle(env, ns, 'sa', 'waiting for approval', (b) =>
      ((b.status as { pendingDeletions?: { name: string; waitingFor?: string }[] } | undefined)?.pendingDeletions ?? []).some(
        (p) => p.name === X && p.waitingFor === 'Approval',
      ),
    );
    // Stuck on the Widget's watch.
    await apply([configMap('sa-y'), widget]);
    await waitForBundle(env, ns, 'sa', 'WatchNotSynced', (b) => JSON.stringify(b.status ?? {}).includes('WatchNotSynced'), 30_000);
    await sleep(1_500);
    // Approved; the stuck Bundle does not act on it.
    await run('kubectl', [
      'annotate',
      '--overwrite',
      'configmap',
      X,
      '-n',
      ns,
      `${Annotations.deletionApproved}=${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    ]);
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
    // Listed again (keep it after all), then, later, taken out again: a new removal.
    await apply([x(), configMap('sa-y'), widget]);
    await sleep(5_000);
    await apply([configMap('sa-y'), widget]);
    await sleep(3_000);
    r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd({ strategy: 'None' }, GROUP_A)) });
    expect(r.code).toBe(0);
    await waitForBundle(
      env,
      ns,
      'sa',
      'reconciled past the watch',
      (b) => !JSON.stringify(b.status ?? {}).includes('WatchNotSynced'),
      60_000,
    );
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
  } finally {
    // The CRD is deleted after the file (afterAll).
  }
}, 180_000);
