/**
 * Red team 34: an approval given for a countdown a listing cancelled is
 * carried onto the new countdown the sweep starts, and the Approve object is
 * deleted on it.
 *
 * Steps (the operator runs throughout; nothing is written back; nobody
 * touches the operator's namespace):
 *  1. Bundle `first` lists ConfigMap cm-frozen (deletionPolicy Approve,
 *     deletionDelay 20s) and is deleted: released, stamp S1, v3 proof,
 *     recorded signed.
 *  2. A person approves S1's countdown before it is due
 *     (deletionApproved), their clock a little ahead: dated 50 s ahead of
 *     the server (within the minute the operator accepts, APPROVAL_AHEAD_MS).
 *  3. Bundle `third` lists cm-frozen (acting as a ServiceAccount without
 *     rights, so its pass waits for a watch and never takes hold; any
 *     Bundle whose pass is held back does the same). The sweep sees the
 *     listing: the record says `cancelled` (recordListingCancel), S1 and the
 *     approval stay on the object (the sweep's own cancel waits 30 s for a
 *     take-hold).
 *  4. `third` is deleted (it never held cm-frozen) within those 30 s.
 *
 * Expected: kept until approved again. docs/safety.md: a countdown a
 * Bundle's listing cancelled is recorded as cancelled and its stamp "does not
 * count"; release-record.ts readWithRecord: "A cancelled release reads
 * without its stamp and any approval given for it"; sweep.ts: "A stale
 * approval goes with the stamp: it must never count for a later countdown";
 * an Approve object is never deleted without an approval for its current
 * countdown. Not a documented limit: nothing is written back, the operator
 * runs throughout, nobody touches the operator's namespace.
 *
 * What happens (failed 3 of 3 runs: 2 in this form, 1 with the approval written after the listing): once S1 is due the sweep reads it
 * against the cancelled record as none and starts a new countdown S2 (RelistedReleases.startCountdown ->
 * restampReleasePatch -> markPatch), which rewrites the stamp but leaves the
 * approval written for S1 on the object; the record now says signed over S2,
 * the approval (dated after S2) counts, and cm-frozen is deleted at S2 + 20 s
 * without any approval given for S2.
 *
 * Fixed: every new stamp (markPatch: the prune's, the release's, the sweep's
 * new countdown) takes an approval on the object off; an approval counts
 * only for the countdown it was given for.
 */
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor } from './harness.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, getBundle } from './bundles.js';
import { operatorFixture } from './operator.js';
import { releasedBy, releaseRecordOf, sleep } from './release-writeback.js';

const f = operatorFixture('rt34caa');

it('an approval written for a countdown a listing cancelled does not count for the countdown the drop starts', async () => {
  const { env, ns, t } = f;
  const cm = (name: string): Record<string, unknown> =>
    configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: '20s', [Annotations.deletionPolicy]: 'Approve' });

  const { uid, stamp } = await releasedBy(env, ns, 'first', [{ name: 'f', object: cm('cm-frozen') }], t.configMap, 'cm-frozen');
  const s1 = stamp ?? '';

  // The person approves the countdown S1 (before it is due), their clock 50 s ahead of the server's.
  const approval = new Date(Date.now() + 50_000).toISOString().replace(/\.\d+Z$/, 'Z');
  await env.client.patch(
    t.configMap,
    ns,
    'cm-frozen',
    { metadata: { annotations: { [Annotations.deletionApproved]: approval } } },
    'merge',
  );
  // Bundle `third` lists cm-frozen and acts as a ServiceAccount with no rights (spec.serviceAccountName): its pass
  // waits for a watch and never takes hold; the sweep sees the listing and records its cancel.
  await env.client.apply(
    BUNDLE_RESOURCE_TYPE,
    {
      ...bundleManifest(ns, 'third', [{ name: 'f', object: cm('cm-frozen') }]),
      spec: {
        ...(bundleManifest(ns, 'third', [{ name: 'f', object: cm('cm-frozen') }]) as { spec: Record<string, unknown> }).spec,
        serviceAccountName: 'nobody',
      },
    },
    { fieldManager: 'test-user', force: true },
  );
  const listedAt = Date.now();
  let state: string | undefined;
  await waitFor(
    'the listing cancel recorded',
    async () => {
      state = (await releaseRecordOf(env, uid))?.state;
      return state === 'cancelled';
    },
    { timeoutMs: 20_000 },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; record state ${state ?? 'none'}`);
  });
  console.log(`listing cancel recorded ${Date.now() - listedAt} ms after the listing`);
  const now = await env.client.get(t.configMap, ns, 'cm-frozen');
  expectKept(now, uid);
  expect(now.metadata.annotations?.[Annotations.deletionTimestamp]).toBe(s1);

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'third', { uid: (await getBundle(env, ns, 'third'))?.metadata.uid ?? '' });
  const droppedAt = Date.now();
  const diag = async (when: string): Promise<void> => {
    const o = await env.client.tryGet(t.configMap, ns, 'cm-frozen');
    console.log(
      when,
      JSON.stringify(await releaseRecordOf(env, uid)),
      JSON.stringify(o?.metadata.annotations),
      JSON.stringify(o?.metadata.ownerReferences),
    );
  };
  await diag('at the drop');
  setTimeout(() => void diag('5 s after the drop'), 5_000);
  setTimeout(() => void diag('30 s after the drop'), 30_000);
  let lastStamp: string | undefined;
  while (Date.now() - droppedAt < 75_000) {
    const o = await env.client.tryGet(t.configMap, ns, 'cm-frozen');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined)
      throw new Error(
        `cm-frozen deleted ${Date.now() - droppedAt} ms after the drop on stamp ${lastStamp ?? '?'} (cancelled S1 ${s1}, approval ${approval} written for S1)`,
      );
    lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(500);
  }
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-frozen'), uid);
}, 300_000);
