/**
 * Red team 10 probe (single operator, no sharding): a Bundle stuck on a
 * watch that cannot list (WatchNotSynced: here a CRD whose conversion
 * webhook is down, as when cert-manager's or the owner's webhook is
 * unavailable) keeps its whole status, so its record
 * (status.pendingDeletions) outlives a countdown another Bundle cancelled by
 * taking the object over.
 *
 * Steps: Bundle w1 lists ConfigMaps w-x (deletionDelay 20s) and w-y; Bundle
 * w2 lists w-z. w-x leaves w1: stamped at T1, recorded {w-x, T1} in w1; a
 * copy of w-x's metadata is kept. w1 is edited to also list a Widget (a CRD
 * at v2 whose conversion webhook is down and which has an object stored at
 * v1, so the Widget watch cannot list): w1's passes stop at WatchNotSynced.
 * w2 lists w-x: the operator takes it over for w2 (controller w2, the T1
 * stamp removed). w-x leaves w2: stamped at T3 (a new 20s countdown,
 * recorded in w2). The old copy of w-x's metadata is written back
 * (ownerReferences naming w1 as controller, the T1 stamp and its proof).
 * The Widget is taken out of w1 again (or the webhook comes back).
 *
 * Expected: w-x not deleted before T3+20s (its last countdown; the T1
 * countdown was cancelled by the hand-over).
 * Actual: deleted within 8s of w1's first full pass (about 10s after T3);
 * the assertion before the write-back confirms w1's status still records
 * {w-x, T1} after the hand-over.
 *
 * Cause: controller.ts reconcile, on WatchNotSynced from gatherBundle,
 * writes errorStatus(statusSubject(cached)) (core/bundle/exit-status.ts),
 * which keeps the previous status whole: w1's pendingDeletions entry for
 * w-x is never dropped although w1 no longer controls w-x (carriedRecord
 * would drop it, but no plan runs). When w-x names w1 as controller again,
 * countdown.ts stampTheRecordHolds accepts the T1 stamp (live >= kept: the
 * same time), recordedFloor allows T1+20s, and the plan deletes it. The
 * record entry is keyed by group/kind/ns/name, not bound to the object's
 * UID or the countdown's incarnation, and the stamp proof binds UID + stamp
 * only, so a cancelled countdown's entry vouches for its stamp written back.
 * The same as redteam10-shard-handover-record (there: a down shard); also
 * any path that keeps the previous status (errorStatus on a thrown pass via
 * reportFailure, a spec the schema rejects).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { run, waitFor, expectCountdownRestarted } from './harness.js';
import { configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { widgetCrdWithDownConversion } from './stuck-kind.js';

const f = operatorFixture('rt10-stuck', () => ({ watchSyncTimeoutMs: 2_000 }));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const GROUP = 'rt10stuck.example.com';
const crd = widgetCrdWithDownConversion(GROUP);

it('a Bundle stuck on a watch keeps a record entry of a countdown another Bundle cancelled; the old stamp written back ends it early', async () => {
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
  // The Widget taken out of w1 again: w1 reconciles.
  await apply('w1', [configMap('w-y')]);
  try {
    // The T1 stamp written back reads as none: w1 starts a new countdown instead of ending the cancelled one.
    await expectCountdownRestarted(env, t.configMap, ns, X, uid, saved.annotations[Annotations.deletionTimestamp]);
  } finally {
    await run('kubectl', ['delete', 'crd', `widgets.${GROUP}`, '--wait=false']);
  }
}, 180_000);
