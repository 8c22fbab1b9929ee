/**
 * Red team 10 attempt that HELD (kept for the suite); the failing tests of the
 * same gate are redteam10-stuck-relist.test.ts, whose header follows.
 *
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
import { expectKept, run, waitFor } from './harness.js';
import { configMap, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt10-relistfin', () => ({ watchSyncTimeoutMs: 2_000 }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GROUP = 'rt10relistfin.example.com';
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
const GROUP_B = 'rt10relistfinb.example.com';
afterAll(async () => {
  await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, `widgets.${GROUP_B}`, '--wait=false']);
});
const broken = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } } };

/**
 * The same gate, then the Bundle deleted (background propagation: delayed
 * objects are released with a signed countdown, the sweeper deletes them
 * when it ends). sf-x (deletionDelay 20s) leaves the spec (stamped T1), is
 * listed again together with the Widget (stuck), and more than 20s later the
 * Bundle is deleted (its owner gives up on the stuck Bundle). The finalizer
 * runs (it comes before the watch that is stuck).
 * Expected: sf-x was listed when the Bundle was deleted; its release counts
 * down 20s from the deletion. HELD: kept (the finalizer, which runs before
 * the stuck watch, does not release it on the cancelled T1 countdown).
 */
it('a Bundle deleted while stuck does not release an object it lists again on the countdown the re-listing cancelled', async () => {
  const { env, ns, t } = f;
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: 'sf', namespace: ns },
        spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
      },
      { fieldManager: 'test-user', force: true },
    );
  const X = 'sf-x';
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  const widget = { apiVersion: `${GROUP_B}/v2`, kind: 'Widget', metadata: { name: 'sf-widget' }, spec: { size: 1 } };
  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd(broken, GROUP_B)) });
  expect(r.stderr).toBe('');
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v1.${GROUP_B}`, '-n', ns])).code === 0);
  r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: `${GROUP_B}/v1`,
      kind: 'Widget',
      metadata: { name: 'stored-v1b', namespace: ns },
      spec: { size: 0 },
    }),
  });
  expect(r.code).toBe(0);
  await waitFor('v2 lists fail', async () => (await run('kubectl', ['get', `widgets.v2.${GROUP_B}`, '-n', ns])).code !== 0);

  await apply([x(), configMap('sf-y')]);
  await waitForReady(env, ns, 'sf');
  const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;
  await apply([configMap('sf-y')]);
  await waitFor(
    'first stamp',
    async () => (await env.client.get(t.configMap, ns, X)).metadata.annotations?.[Annotations.deletionTimestamp] !== undefined,
  );
  await apply([x(), configMap('sf-y'), widget]);
  await waitForBundle(env, ns, 'sf', 'WatchNotSynced', (b) => JSON.stringify(b.status ?? {}).includes('WatchNotSynced'), 30_000);
  await sleep(22_000);
  expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
  r = await run('kubectl', ['delete', 'bundle.smith.atlassian.com', 'sf', '-n', ns, '--wait=false']);
  expect(r.code).toBe(0);
  const deleted = Date.now();
  await sleep(8_000);
  expect(Date.now() - deleted).toBeLessThan(19_000);
  expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
}, 180_000);
