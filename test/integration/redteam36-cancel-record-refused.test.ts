/**
 * Red team 36: a listing's cancel that cannot be recorded (a
 * ValidatingAdmissionPolicy refuses UPDATE and DELETE of the object's release
 * record ConfigMap in the operator's namespace: another team's policy engine,
 * or the operator's RBAC on configmaps narrowed) lets the cancelled stamp S1
 * count after the listing Bundle is dropped again.
 *
 * Steps (operator runs throughout; nothing written back):
 *  1. Bundle `first` lists cm-frozen (deletionDelay 20s) and is deleted:
 *     released, stamp S1, v3 proof, record `signed`.
 *  2. Updates/deletes of the record default/bundlesmith-release-key-<uid>
 *     are refused.
 *  3. Bundle `third` (serviceAccountName `nobody`: never takes hold) lists
 *     cm-frozen for 8 s; the record stays `signed` (the cancel write is
 *     refused), S1 and its proof stay on the object.
 *  4. `third` is deleted.
 *
 * Expected: kept for at least the 20 s delay after the drop (docs/safety.md:
 * "a countdown a Bundle's listing cancelled is recorded as cancelled ... so
 * the stamp a refused cancel leaves does not count"). Control
 * (RT36_CONTROL=1, no refusal): record `cancelled` within 8 s; after the drop
 * a new stamp S2 is written and the object is deleted ~29 s after the drop,
 * as designed.
 *
 * Before the fix: deleted ~9 s after the drop on S1 (the cancelled stamp):
 * the cancel that could not be recorded was forgotten, and the sweep counted
 * S1 as if no Bundle had listed the object. Now the cancel counts in the
 * process that decided it (ReleaseRecords' unwritten cancels): the sweep
 * reads S1 as cancelled and starts a new countdown, whose signing cannot be
 * recorded either, so the object is kept. Once the refusal is lifted, the
 * cancel is written at the sweep's next read and a new countdown S2 starts.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, eventsFor, getBundle } from './bundles.js';
import { operatorFixture } from './operator.js';
import { RELEASE_RECORDS_NAMESPACE, releasedBy, releaseRecordName, releaseRecordOf, sleep } from './release-writeback.js';
import { refuseConfigMapOperation } from './refuse-operation.js';

const f = operatorFixture('rt36crr');

it('a listing cancel whose record write is refused does not leave the cancelled stamp counting', async () => {
  const { env, ns, t } = f;
  const cm = (name: string): Record<string, unknown> => configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: '20s' });

  const { uid, stamp } = await releasedBy(env, ns, 'first', [{ name: 'f', object: cm('cm-frozen') }], t.configMap, 'cm-frozen');
  const s1 = stamp ?? '';
  await waitFor('record written', async () => (await releaseRecordOf(env, uid)) !== undefined);
  console.log('record before', JSON.stringify(await releaseRecordOf(env, uid)));

  // RT36_CONTROL=1: the same steps without the refusal (the control run).
  const control = process.env.RT36_CONTROL === '1';
  const noop = async (): Promise<void> => {};
  const unrefuse = control
    ? noop
    : await refuseConfigMapOperation(env, RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid), 'UPDATE', 'records frozen');
  const unrefuseDel = control
    ? noop
    : await refuseConfigMapOperation(env, RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid), 'DELETE', 'records frozen');
  await sleep(3_000);
  try {
    const third = bundleManifest(ns, 'third', [{ name: 'f', object: cm('cm-frozen') }]) as { spec: Record<string, unknown> };
    await env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      { ...third, spec: { ...third.spec, serviceAccountName: 'nobody' } },
      { fieldManager: 'test-user', force: true },
    );
    await sleep(8_000);
    console.log('record after listing', JSON.stringify(await releaseRecordOf(env, uid)));
    const now = await env.client.get(t.configMap, ns, 'cm-frozen');
    console.log('annotations after listing', JSON.stringify(now.metadata.annotations));
    expectKept(now, uid);
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'third', { uid: (await getBundle(env, ns, 'third'))?.metadata.uid ?? '' });
    const droppedAt = Date.now();
    let lastStamp: string | undefined;
    // Kept for 15 s after the drop: less than the 20 s delay a countdown started at the drop needs (the control run, RT36_CONTROL=1, is
    // deleted on a new stamp S2 ~29 s after the drop, as designed).
    while (Date.now() - droppedAt < 15_000) {
      const o = await env.client.tryGet(t.configMap, ns, 'cm-frozen');
      if (o === undefined || o.metadata.deletionTimestamp !== undefined)
        throw new Error(`cm-frozen deleted ${Date.now() - droppedAt} ms after the drop on stamp ${lastStamp ?? '?'} (cancelled S1 ${s1})`);
      lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
      await sleep(500);
    }
    console.log('final stamp', lastStamp, 'record', JSON.stringify(await releaseRecordOf(env, uid)));
    expectKept(await env.client.tryGet(t.configMap, ns, 'cm-frozen'), uid);
    if (control) return;
    // Said on the object: kept while its record may not be written.
    const refused = await waitFor('a ReleaseRecordRefused event', async () =>
      (await eventsFor(env, ns, 'cm-frozen')).find((e) => e.reason === 'ReleaseRecordRefused' && e.type === 'Warning'),
    );
    expect(refused.note).toContain(releaseRecordName(uid));
    // The refusal lifted: the cancel is written, and a new countdown starts over a new stamp (recorded first).
    await unrefuse();
    await unrefuseDel();
    const restamped = await waitFor(
      'a new countdown over a new stamp',
      async () => {
        const o = await env.client.tryGet(t.configMap, ns, 'cm-frozen');
        const stamp = o?.metadata.annotations?.[Annotations.deletionTimestamp];
        return stamp !== undefined && stamp !== s1 ? o : undefined;
      },
      { timeoutMs: 90_000 },
    );
    expectKept(restamped, uid);
    const record = await releaseRecordOf(env, uid);
    expect(record?.state).toBe('signed');
    expect(record?.proof).toBe(restamped.metadata.annotations?.[Annotations.releaseProof]);
  } finally {
    await unrefuse();
    await unrefuseDel();
  }
}, 240_000);
