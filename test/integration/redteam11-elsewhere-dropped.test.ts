/**
 * Red team 11 probe: the record entry of the later countdown elsewhere (fix 3) lives in w2's status only while
 * w2 controls w-x. The old copy of w-x's metadata written back names w1 as controller, so w2's next pass drops
 * its entry; if w1 still records the cancelled countdown (its stuck pass did not cancel it), w1 ends it early.
 * Steps: as redteam10-stuck-watch-handover-record, plus after the write-back w2 is edited and its record
 * checked to no longer hold w-x before w1 is unstuck.
 * Expected: w-x kept until T3+20s.
 * Result: HELD (main 440f513). The hand-over wakes w1 (the object's old
 * controller, object-cache.ts wake); its stuck pass sees w2 list w-x and
 * cancels {w-x, T1} in w1's record (withListedCountdownsCancelled), so
 * w1's record is already empty when w2's entry goes. The same shape with
 * w1's finalizer holding instead of its reconcile stuck is the finding
 * redteam11-finalizer-held-handover.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { run, waitFor, expectCountdownRestarted } from './harness.js';
import { configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { widgetCrdWithDownConversion } from './stuck-kind.js';

const f = operatorFixture('rt11-drop', () => ({ watchSyncTimeoutMs: 2_000 }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GROUP = 'rt11drop.example.com';
const crd = widgetCrdWithDownConversion(GROUP);

it('the later countdown elsewhere is dropped from w2 record when the old copy is written back; w1 then ends the cancelled countdown', async () => {
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
  const X = 'w-x';
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  const widget = { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w-widget' }, spec: { size: 1 } };

  // The CRD, an object stored at v1; lists at v2 need the (unreachable) conversion webhook.
  let r = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(crd) });
  expect(r.stderr).toBe('');
  await waitFor('the CRD established', async () => (await run('kubectl', ['get', `widgets.v1.${GROUP}`, '-n', ns])).code === 0);
  r = await run('kubectl', ['apply', '-n', ns, '-f', '-'], {
    input: JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'stored-v1', namespace: ns }, spec: { size: 0 } }),
  });
  expect(r.code).toBe(0);
  const listV2 = await run('kubectl', ['get', `widgets.v2.${GROUP}`, '-n', ns]);
  expect(listV2.code).not.toBe(0);

  await apply('w1', [x(), configMap('w-y')]);
  await apply('w2', [configMap('w-z')]);
  await waitForReady(env, ns, 'w1');
  await waitForReady(env, ns, 'w2');
  const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;

  // T1: w-x leaves w1.
  await apply('w1', [configMap('w-y')]);
  let saved: { annotations: Record<string, string>; ownerReferences: unknown[] } = { annotations: {}, ownerReferences: [] };
  await waitFor('first stamp, recorded', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const p = ((await getBundle(env, ns, 'w1'))?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
    saved = { annotations: o.metadata.annotations ?? {}, ownerReferences: o.metadata.ownerReferences ?? [] };
    return saved.annotations[Annotations.deletionTimestamp] !== undefined && p.some((e) => e.name === X);
  });
  const t1 = Date.now();

  // w1 now also lists a Widget: its passes stop at WatchNotSynced.
  await apply('w1', [configMap('w-y'), widget]);
  await waitForBundle(env, ns, 'w1', 'WatchNotSynced', (b) => JSON.stringify(b.status ?? {}).includes('WatchNotSynced'), 30_000);

  // w2 takes w-x over.
  await apply('w2', [configMap('w-z'), x()]);
  await waitFor('w2 controls w-x, stamp removed', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const ctl = (o.metadata.ownerReferences ?? []).find((ref) => ref.controller === true);
    return ctl?.name === 'w2' && o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined;
  });
  const wait = t1 + 22_000 - Date.now();
  if (wait > 0) await sleep(wait);

  // T3: w-x leaves w2.
  await apply('w2', [configMap('w-z')]);
  await waitFor('second stamp', async () => {
    const s = (await env.client.get(t.configMap, ns, X)).metadata.annotations?.[Annotations.deletionTimestamp];
    return s !== undefined && s !== saved.annotations[Annotations.deletionTimestamp];
  });
  // Before the fix, w1's record still held the cancelled countdown here. Now a stuck pass of w1 that sees w2 list w-x
  // drops it (withListedCountdownsCancelled), and where no such pass ran in time, w2's record of the later countdown
  // cancels the earlier stamp (CountdownRecord.elsewhere). Either way, what follows must keep w-x.

  // The old copy of w-x's metadata written back.
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
  const w1Pending =
    ((await getBundle(env, ns, 'w1'))?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
  console.log('w1 record after hand-over:', JSON.stringify(w1Pending));
  // w2 is edited (another ConfigMap): its pass finds it no longer controls w-x and drops its record entry.
  await apply('w2', [configMap('w-z'), configMap('w-q')]);
  await waitFor('w2 record no longer holds w-x', async () => {
    const p = ((await getBundle(env, ns, 'w2'))?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
    return !p.some((e) => e.name === X);
  });
  // The Widget taken out of w1 again: w1 reconciles.
  await apply('w1', [configMap('w-y')]);
  try {
    // The T1 stamp written back reads as none: w1 starts a new countdown instead of ending the cancelled one.
    await expectCountdownRestarted(env, t.configMap, ns, X, uid, saved.annotations[Annotations.deletionTimestamp]);
  } finally {
    await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, '--wait=false']);
  }
}, 180_000);
