/**
 * Red team 27: the released-object sweep's cancel of a re-listed countdown is
 * refused (an admission policy refusing updates of the object), the first
 * release's countdown runs out while a Bundle lists the object, and the
 * sweeper deletes it on that first countdown once the Bundle drops it (~19 s
 * after the drop here: the next retry of the refused cancel's work item):
 * fuzz softdelete 20284's wrongful delete, back wherever the cancel cannot
 * be written.
 *
 * Steps:
 *  1. Bundle `first` lists Gadget g-frozen (deletionDelay 8s) at v1alpha1 and
 *     is deleted: the finalizer releases g-frozen with stamp S1 (and a proof).
 *  2. The CRD moves to v1 and stops serving v1alpha1 (the usual upgrade).
 *  3. A ValidatingAdmissionPolicy refuses UPDATEs of g-frozen (a freeze
 *     another team's policy engine may put on an object; deletes allowed).
 *  4. Bundle `second` lists g-frozen at v1alpha1 (and g-other): the sweep
 *     decides to cancel the countdown; its patch is refused (403).
 *  5. Past S1 + 8s, while listed: g-frozen is kept (listed).
 *  6. `second` drops g-frozen.
 *
 * Expected: docs/safety.md, Released-object sweeper: a released object a
 * live Bundle lists at a version the server no longer serves has its
 * countdown cancelled ("left on, the countdown ran out while it was listed
 * and the object was deleted at once when dropped: fuzz softdelete 20284,
 * inventory 1d"); the countdown after a drop is a new one, from the drop.
 * The soft-delete expiry row says the same for a cancel the Bundle could not
 * write: "the stamp it could not remove reads as none" (redteam10-stuck-relist).
 * So g-frozen must not be deleted at the drop (at the earliest 8s after it,
 * and never while no new stamp could be written).
 *
 * What happens: relisted-release.ts cancelRelistedCountdown sends the cancel
 * through guardedPatch; a refused one is thrown (`throw cancelled.error`) and
 * retried, and nothing else remembers that the object was listed while its
 * countdown ran: the sweep has no record of its own (the Bundle controller
 * keeps one in status.pendingDeletions). When `second` drops it,
 * released-sweeper.ts finds no listing, decideReleasedSweep reads S1 + 8s as
 * past ('expired': a proven stamp, the proof of the first release), the
 * fresh read says the same, and guardedDelete deletes g-frozen (the policy
 * refuses updates only) on the countdown of the first release, as soon as
 * the work item's retry comes round. No new countdown could even be written.
 *
 * Fixed by the release records (5f230e0, controllers/softdelete/release-records.ts):
 * every signing is recorded before it is sent, a listing records the
 * countdown cancelled, and the sweep counts a stamp only when it is the
 * recorded one ("What happens" above is the code before that).
 */
import { Annotations } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import type { ResourceType } from '../../src/kube/types.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { expectKept, run, uniqueName, waitFor } from './harness.js';
import { applyBundle, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { refuseOperation, waitUntilUpdatesRefused } from './refuse-operation.js';
import { sleep } from './release-writeback.js';

const f = operatorFixture('rt27frozen', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
}));

let removePolicy: (() => Promise<void>) | undefined;
afterAll(async () => {
  await removePolicy?.();
});

it('a released object whose re-listed countdown the sweep cannot cancel (updates refused) is deleted on its first countdown when dropped', async () => {
  const { env, ns } = f;
  const group = `${uniqueName('fz')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = (name: string): Record<string, unknown> => ({
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name, annotations: { [Annotations.deletionDelay]: '8s' } },
    spec: { size: 1 },
  });

  // 1-2. Released by `first` (stamp S1), then the upgrade.
  await applyBundle(env, ns, 'first', [{ name: 'f', object: gadget('g-frozen') }]);
  await waitForReady(env, ns, 'first');
  const r = await run('kubectl', ['delete', 'bundle', 'first', '-n', ns, '--wait=false']);
  if (r.code !== 0) throw new Error(r.stderr);
  await waitFor('Bundle first to be gone', async () => (await getBundle(env, ns, 'first')) === undefined, { timeoutMs: 60_000 });
  await setGadgetVersions(env, group, [
    { name: 'v1alpha1', served: false, storage: false },
    { name: 'v1', served: true, storage: true },
  ]);
  const v1 = (await gadgetsServed(env, group, 'v1', true)) as ResourceType;
  await gadgetsServed(env, group, 'v1alpha1', false);
  const released = await env.client.get(v1, ns, 'g-frozen');
  const uid = released.metadata.uid ?? '';
  const s1 = released.metadata.annotations?.[Annotations.deletionTimestamp];
  expect(s1).toBeDefined();

  // 3. Updates of g-frozen refused from now on (a dry-run patch tells when the policy is in force).
  removePolicy = await refuseOperation(env, { group, plural: 'gadgets' }, ns, 'g-frozen', 'UPDATE', 'frozen by the test');
  await waitUntilUpdatesRefused(env, v1, ns, 'g-frozen');

  // 4-5. Listed again at v1alpha1; past the first countdown's end, while listed: kept.
  await applyBundle(env, ns, 'second', [
    { name: 'f', object: gadget('g-frozen') },
    { name: 'o', object: gadget('g-other') },
  ]);
  await sleep(Math.max(3_000, Date.parse(s1 ?? '') + 10_000 - Date.now()));
  expectKept(await env.client.tryGet(v1, ns, 'g-frozen'), uid);

  // 6. Dropped: a countdown from the drop at the earliest (8 s), never the first one's end.
  await applyBundle(env, ns, 'second', [{ name: 'o', object: gadget('g-other') }]);
  const droppedAt = Date.now();
  // No new stamp can be written (updates are refused): nothing may start a countdown, so it stays. Watched for 60 s
  // (the sweep's retries of the refused cancel back off).
  let lastStamp: string | undefined;
  while (Date.now() - droppedAt < 60_000) {
    const o = await env.client.tryGet(v1, ns, 'g-frozen');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined)
      throw new Error(
        `g-frozen deleted ${Date.now() - droppedAt} ms after the drop on the stamp ${lastStamp ?? '?'} (the first release's: ${s1})`,
      );
    lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(500);
  }
  expectKept(await env.client.tryGet(v1, ns, 'g-frozen'), uid);
}, 240_000);
