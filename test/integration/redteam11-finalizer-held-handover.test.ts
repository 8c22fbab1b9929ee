/**
 * Red team 11 probe: a Bundle being deleted whose finalizer holds
 * (KindNotListable: a kind it controls cannot be listed, here a CRD whose
 * conversion webhook went down) keeps its status whole, so its record
 * (status.pendingDeletions) outlives a countdown another Bundle cancelled by
 * taking the object over. The stuck-pass cancellation (red team 10, fix 1:
 * withListedCountdownsCancelled) runs only in reconcile's stops, not in the
 * finalizer's hold; the later countdown recorded elsewhere (fix 3) lives in
 * the other Bundle's record only while that Bundle controls the object.
 *
 * Steps: CRD Widget (v1 storage, v2 served, conversion None). Bundle w1 lists
 * ConfigMaps f-x (deletionDelay 20s), f-y and a Widget at v2; Bundle w2 lists
 * f-z. f-x leaves w1: stamped T1, recorded {f-x, T1}; a copy of f-x's
 * metadata is kept. The Widget CRD's conversion is switched to a webhook
 * that is down (Widgets at v2 cannot be listed). w1 is deleted (background):
 * its finalizer holds on KindNotListable. w2 lists f-x and takes it over
 * (T1 stamp removed). More than 20s after T1, f-x leaves w2: stamped T3,
 * recorded in w2. The old copy of f-x's metadata is written back
 * (ownerReferences naming w1 as controller, the T1 stamp and its proof).
 * w2 is edited (another ConfigMap): its pass finds it no longer controls
 * f-x and drops its entry. The webhook comes back (conversion None).
 *
 * Expected: f-x not deleted before T3+20s (the T1 countdown was cancelled by
 * the hand-over to w2).
 * Actual (main 440f513): f-x gone (NotFound) 6.5s after T3. The log line
 * before the write-back shows w1's status still recording {f-x, T1} after
 * the hand-over, while its finalizer held.
 *
 * Cause: src/controllers/bundle/finalize.ts finalizeBundle, on KindNotListable
 * (and on "waiting for the API server's time"), returns
 * errorStatus(statusSubject(input.live)) (core/bundle/exit-status.ts), which
 * keeps status.pendingDeletions whole: red team 10's fix
 * (withListedCountdownsCancelled, controller.ts listedNow) is applied only
 * on reconcile's stops (WatchNotSynced, server time, reportFailure of a
 * parsed Bundle), never on the finalizer's hold, so w1's entry for the
 * countdown w2's takeover cancelled survives. The later countdown recorded
 * elsewhere (core/bundle/countdown.ts latestStampsElsewhere /
 * notBeforeElsewhere) lasts only while w2 controls f-x: the write-back names
 * w1 as controller, which wakes w2 (its old controller, object-cache.ts
 * wake) and w2's pass drops its entry (carriedRecord keeps only objects it
 * still controls); the test edits w2 only to make that certain. When the
 * kind lists again, planFinalize (core/bundle/finalize.ts) reads the T1
 * stamp as proven and held by w1's record (countdown.ts
 * stampTheRecordHolds: live >= kept), nothing later elsewhere, T1+20s long
 * past: f-x goes at once. The record entry is keyed by group/kind/ns/name
 * and is not bound to the countdown's incarnation, so any path that keeps an
 * old status whole vouches for a cancelled stamp written back (another such
 * path: controller.ts reconcile's "invalid Bundle" parse failure, and
 * reportFailure when the cached Bundle does not parse).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { run, waitFor, expectCountdownRestarted } from './harness.js';
import { configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt11-fin', () => ({ watchSyncTimeoutMs: 2_000 }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GROUP = 'rt11fin.example.com';
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
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
    conversion: { strategy: 'None' },
  },
};
const webhookDown = {
  spec: {
    conversion: {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://127.0.0.1:9/convert' } },
    },
  },
};
const webhookBack = { spec: { conversion: { strategy: 'None', webhook: null } } };

type Pending = { pendingDeletions?: { name: string; deletionTimestamp: string }[] } | undefined;

it('a Bundle whose finalizer holds on KindNotListable keeps a cancelled countdown; the old stamp written back is released and swept early', async () => {
  const { env, ns, t } = f;
  const apply = (name: string, objects: Record<string, unknown>[]) =>
    env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name, namespace: ns },
        spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
      },
      { fieldManager: 'test-user', force: true },
    );
  const X = 'f-x';
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  const widget = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'f-widget' }, spec: { size: 1 } };

  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd) });
  expect(r.stderr).toBe('');
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns])).code === 0);

  await apply('w1', [x(), configMap('f-y'), widget]);
  await apply('w2', [configMap('f-z')]);
  await waitForReady(env, ns, 'w1');
  await waitForReady(env, ns, 'w2');
  const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;

  // T1: f-x leaves w1.
  await apply('w1', [configMap('f-y'), widget]);
  let saved: { annotations: Record<string, string>; ownerReferences: unknown[] } = { annotations: {}, ownerReferences: [] };
  await waitFor('first stamp, recorded', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const p = ((await getBundle(env, ns, 'w1'))?.status as Pending)?.pendingDeletions ?? [];
    saved = { annotations: o.metadata.annotations ?? {}, ownerReferences: o.metadata.ownerReferences ?? [] };
    return saved.annotations[Annotations.deletionTimestamp] !== undefined && p.some((e) => e.name === X);
  });
  const t1 = Date.now();

  // The conversion webhook goes down: Widgets cannot be listed at v2.
  r = await run('kubectl', ['patch', 'crd', `widgets.${GROUP}`, '--type=merge', '-p', JSON.stringify(webhookDown)]);
  expect(r.code).toBe(0);
  await waitFor('v2 list fails', async () => (await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns])).code !== 0);

  // w1 deleted (background): the finalizer holds.
  r = await run('kubectl', ['delete', 'bundle', 'w1', '-n', ns, '--wait=false']);
  expect(r.code).toBe(0);
  await waitForBundle(env, ns, 'w1', 'KindNotListable', (b) => JSON.stringify(b.status ?? {}).includes('KindNotListable'), 60_000);

  try {
    // w2 takes f-x over.
    await apply('w2', [configMap('f-z'), x()]);
    await waitFor('w2 controls f-x, stamp removed', async () => {
      const o = await env.client.get(t.configMap, ns, X);
      const ctl = (o.metadata.ownerReferences ?? []).find((ref) => ref.controller === true);
      return ctl?.name === 'w2' && o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined;
    });
    const wait = t1 + 22_000 - Date.now();
    if (wait > 0) await sleep(wait);

    // T3: f-x leaves w2.
    await apply('w2', [configMap('f-z')]);
    await waitFor('second stamp', async () => {
      const s = (await env.client.get(t.configMap, ns, X)).metadata.annotations?.[Annotations.deletionTimestamp];
      return s !== undefined && s !== saved.annotations[Annotations.deletionTimestamp];
    });
    const w1Pending = ((await getBundle(env, ns, 'w1'))?.status as Pending)?.pendingDeletions ?? [];
    console.log('w1 record (finalizer holding) after the hand-over:', JSON.stringify(w1Pending));

    // The old copy of f-x's metadata written back.
    r = await run('kubectl', [
      'patch',
      'configmap',
      X,
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({
        metadata: {
          ownerReferences: saved.ownerReferences,
          annotations: {
            [Annotations.deletionTimestamp]: saved.annotations[Annotations.deletionTimestamp],
            [Annotations.stampProof]: saved.annotations[Annotations.stampProof],
          },
        },
      }),
    ]);
    expect(r.stderr).toBe('');
    // w2 edited: its pass drops its entry for f-x (no longer its object).
    await apply('w2', [configMap('f-z'), configMap('f-q')]);
    await waitFor(
      'w2 record no longer holds f-x',
      async () => !(((await getBundle(env, ns, 'w2'))?.status as Pending)?.pendingDeletions ?? []).some((e) => e.name === X),
    );

    // The webhook comes back: the finalizer decides.
    r = await run('kubectl', ['patch', 'crd', `widgets.${GROUP}`, '--type=merge', '-p', JSON.stringify(webhookBack)]);
    expect(r.code).toBe(0);
    await waitFor('w1 gone', async () => (await getBundle(env, ns, 'w1')) === undefined, { timeoutMs: 60_000 }).catch(() => undefined);
    // The T1 stamp written back reads as none: the finalizer's release starts a new countdown.
    await expectCountdownRestarted(env, t.configMap, ns, X, uid, saved.annotations[Annotations.deletionTimestamp]);
  } finally {
    await run('kubectl', ['patch', 'crd', `widgets.${GROUP}`, '--type=merge', '-p', JSON.stringify(webhookBack)]);
    await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, '--wait=false']);
  }
}, 240_000);
