/**
 * Red team 11 probe: `bundlesmith cancel` ("will not be deleted") on an
 * object counting down while its Bundle's passes are stuck on a watch that
 * cannot list (WatchNotSynced: a CRD whose conversion webhook is down). The
 * red team 10 fix cancels a stuck Bundle's record entry only for objects a
 * live Bundle lists (withListedCountdownsCancelled over listedNow); a
 * cancel takes the object out of the operator's hands without listing it,
 * so the cancelled countdown stays in the record and vouches for its stamp
 * written back.
 *
 * Steps: CRD Widget (v1 storage, v2 served, conversion webhook down, an
 * object stored at v1). Bundle c1 lists ConfigMaps c-x (deletionDelay 20s)
 * and c-y. c-x leaves c1: stamped T1, recorded {c-x, T1}; a copy of c-x's
 * metadata is kept (an old `kubectl get -o yaml`, a backup). c1 is edited to
 * also list a Widget at v2: its passes stop at WatchNotSynced. A person runs
 * `bundlesmith cancel ConfigMap/c-x` (stamp, proof and the Bundle's
 * ownerReference removed: "will not be deleted"). More than 20s after T1,
 * the old copy of c-x's metadata is written back (ownerReferences naming c1
 * as controller, the T1 stamp and its proof: a restore). The Widget is taken
 * out of c1 again (or the webhook returns): c1 reconciles.
 *
 * Expected: the cancelled countdown does not come back: the stamp written
 * back reads as none (as it does when c1 is not stuck at the cancel: its
 * pass then finds c-x no longer its own and drops the entry), so c-x, out of
 * c1's spec again, counts down 20s from c1's first full pass; kept 8s after.
 * Actual (main 440f513): c-x gone (NotFound) within 8s of c1's first full
 * pass; the log shows c1's status still recording {c-x, T1} 3s after the
 * cancel. The control (same steps, c1 not stuck) passes: its record is []
 * after the cancel and c-x is kept.
 *
 * Cause: src/controllers/bundle/controller.ts reconcile, on WatchNotSynced,
 * writes withListedCountdownsCancelled(errorStatus(statusSubject(cached)),
 * this.listedNow(bundle)) (core/bundle/countdown.ts): it cancels only the
 * entries of objects some live Bundle lists. cancelPending
 * (src/cli/pending-target.ts) takes the object out of the operator's hands without
 * listing it anywhere (its Bundle reference removed), so c1's stuck pass,
 * woken by that change, keeps {c-x, T1}. The write-back names c1 as
 * controller again; c1's first full pass reads the proven T1 stamp as held
 * by the record (countdown.ts stampTheRecordHolds: live >= kept), nothing
 * later elsewhere, T1+20s past: deleted at once. Unstuck, c1's pass drops
 * the entry of an object it no longer controls (buildBundleStatus /
 * carriedRecord) and the same write-back restarts the countdown. The same
 * gap as redteam11-finalizer-held-handover: a pass that does not decide
 * keeps entries of objects the Bundle no longer controls; red team 10's fix
 * covers only objects that are listed again. Any other way an object leaves
 * a stuck Bundle's control without being listed (another tool removing the
 * ownerReference, a release by hand) does the same.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { bundlesmith, expectKept, run, waitFor } from './harness.js';
import { configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { widgetCrdWithDownConversion } from './stuck-kind.js';

const f = operatorFixture('rt11-cancel', () => ({ watchSyncTimeoutMs: 2_000 }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GROUP = 'rt11cancel.example.com';
const crd = widgetCrdWithDownConversion(GROUP);

type Pending = { pendingDeletions?: { name: string }[] } | undefined;

async function scenario(prefix: string, stuck: boolean): Promise<void> {
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
  const X = `${prefix}-x`;
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  const widget = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: `${prefix}-widget` }, spec: { size: 1 } };

  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd) });
  expect(r.stderr).toBe('');
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v1.${GROUP}`, '-n', ns])).code === 0);
  r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'stored-v1', namespace: ns }, spec: { size: 0 } }),
  });
  expect(r.code).toBe(0);
  expect((await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns])).code).not.toBe(0);

  await apply(`${prefix}1`, [x(), configMap(`${prefix}-y`)]);
  await waitForReady(env, ns, `${prefix}1`);
  const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;

  // T1: c-x leaves c1.
  await apply(`${prefix}1`, [configMap(`${prefix}-y`)]);
  let saved: { annotations: Record<string, string>; ownerReferences: unknown[] } = { annotations: {}, ownerReferences: [] };
  await waitFor('first stamp, recorded', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const p = ((await getBundle(env, ns, `${prefix}1`))?.status as Pending)?.pendingDeletions ?? [];
    saved = { annotations: o.metadata.annotations ?? {}, ownerReferences: o.metadata.ownerReferences ?? [] };
    return saved.annotations[Annotations.deletionTimestamp] !== undefined && p.some((e) => e.name === X);
  });
  const t1 = Date.now();

  try {
    // c1 stuck (the control: not stuck).
    if (stuck) await apply(`${prefix}1`, [configMap(`${prefix}-y`), widget]);
    if (stuck)
      await waitForBundle(
        env,
        ns,
        `${prefix}1`,
        'WatchNotSynced',
        (b) => JSON.stringify(b.status ?? {}).includes('WatchNotSynced'),
        30_000,
      );

    // A person cancels the countdown.
    const cancelled = await bundlesmith(['cancel', `ConfigMap/${X}`, '-n', ns]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain('will not be deleted');
    const after = await env.client.get(t.configMap, ns, X);
    expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
    expect(after.metadata.ownerReferences ?? []).toEqual([]);
    await sleep(3_000);
    console.log(
      'c1 record after the cancel:',
      JSON.stringify(((await getBundle(env, ns, `${prefix}1`))?.status as Pending)?.pendingDeletions ?? []),
    );

    const wait = t1 + 22_000 - Date.now();
    if (wait > 0) await sleep(wait);
    // The old copy of c-x's metadata written back (a restore).
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
    await sleep(2_000);
    // c1 reconciles again.
    await apply(`${prefix}1`, [configMap(`${prefix}-y`)]);
    await sleep(8_000);
    expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
  } finally {
    if (!stuck) await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, '--wait=false']);
  }
}

it('a countdown cancelled with `bundlesmith cancel` while its Bundle is stuck stays in the record; the old copy written back is deleted at once', async () => {
  await scenario('c', true);
}, 180_000);

it('control: the same cancel and write-back while the Bundle reconciles start a new countdown (kept)', async () => {
  await scenario('k', false);
}, 180_000);
