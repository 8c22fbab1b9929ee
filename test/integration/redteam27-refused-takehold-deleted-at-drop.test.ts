/**
 * Red team 27: as redteam27-refused-cancel-deleted-at-drop, with no CRD
 * upgrade: the re-listing Bundle lists the released ConfigMap at the version
 * the server serves, and its own take-hold (which cancels the countdown) is
 * refused by an admission policy refusing updates of the object. The first
 * release's countdown runs out while it is listed; dropped, it is deleted on
 * that countdown.
 *
 * Steps: Bundle `first` lists ConfigMap cm-frozen (deletionDelay 8s) and is
 * deleted (released, stamp S1). A ValidatingAdmissionPolicy refuses UPDATEs
 * of cm-frozen. Bundle `second` lists it (and cm-other): its apply and
 * cancel are refused. Past S1 + 8s it is kept (listed). `second` drops it.
 *
 * Expected: docs/safety.md soft-delete expiry: "listing it again cancels the
 * countdown at once, even behind ... a failed apply, and a pass stopped
 * before deciding ... cancels it in the Bundle's record, so the stamp it
 * could not remove reads as none"; Released-object sweeper: a countdown
 * left on while listed must not run out on it (fuzz softdelete 20284).
 * cm-frozen must not be deleted on S1 after the drop (no new stamp can even
 * be written).
 *
 * What happens: the second Bundle never controlled cm-frozen, so nothing of
 * its record covers it; the sweep (released-sweeper.ts) reads the proven S1
 * as expired once no Bundle lists it (decideListedRelease only cancels for
 * an unserved version, and only by a write) and deletes it.
 *
 * Fixed, while the sweeper runs (relisted-release.ts readAs): a countdown the
 * sweep saw on an object while a live Bundle listed it reads as none, so the
 * drop starts a new countdown (here refused too: the object is kept). Held
 * in memory: a restart between the listing and the drop, or a watch that
 * starts after the drop, still ends the first countdown (the variant at an
 * unserved version, redteam27-refused-cancel-deleted-at-drop, on branch
 * redteam27, fails so: the sweep's watch of the new CRD started late).
 */
import { Annotations } from '../../src/api/names.js';
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { expectKept, run, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { refuseConfigMapOperation, waitUntilUpdatesRefused } from './refuse-operation.js';
import { sleep } from './release-writeback.js';

const f = operatorFixture('rt27frozencm', () => ({
  garbageCollector: (client, clock) => new GarbageCollector(client, { mode: 'cluster', clock, namespaces: [f.ns], workers: 2 }),
}));

let removePolicy: (() => Promise<void>) | undefined;
afterAll(async () => {
  await removePolicy?.();
});

const freeze = (name: string): Promise<() => Promise<void>> => refuseConfigMapOperation(f.env, f.ns, name, 'UPDATE', 'frozen by the test');

it('a released ConfigMap whose re-listing Bundle cannot take hold (updates refused) is not deleted on its first countdown when dropped', async () => {
  const { env, ns, t } = f;
  const cm = (name: string): Record<string, unknown> => configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: '8s' });

  await applyBundle(env, ns, 'first', [{ name: 'f', object: cm('cm-frozen') }]);
  await waitForReady(env, ns, 'first');
  const r = await run('kubectl', ['delete', 'bundle', 'first', '-n', ns, '--wait=false']);
  if (r.code !== 0) throw new Error(r.stderr);
  await waitFor('Bundle first to be gone', async () => (await getBundle(env, ns, 'first')) === undefined, { timeoutMs: 60_000 });
  const released = await env.client.get(t.configMap, ns, 'cm-frozen');
  const uid = released.metadata.uid ?? '';
  const s1 = released.metadata.annotations?.[Annotations.deletionTimestamp];
  expect(s1).toBeDefined();

  removePolicy = await freeze('cm-frozen');
  await waitUntilUpdatesRefused(env, t.configMap, ns, 'cm-frozen');

  await applyBundle(env, ns, 'second', [
    { name: 'f', object: cm('cm-frozen') },
    { name: 'o', object: cm('cm-other') },
  ]);
  await sleep(Math.max(3_000, Date.parse(s1 ?? '') + 10_000 - Date.now()));
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-frozen'), uid);

  await applyBundle(env, ns, 'second', [{ name: 'o', object: cm('cm-other') }]);
  const droppedAt = Date.now();
  let lastStamp: string | undefined;
  while (Date.now() - droppedAt < 60_000) {
    const o = await env.client.tryGet(t.configMap, ns, 'cm-frozen');
    if (o === undefined || o.metadata.deletionTimestamp !== undefined)
      throw new Error(
        `cm-frozen deleted ${Date.now() - droppedAt} ms after the drop on the stamp ${lastStamp ?? '?'} (the first release's: ${s1})`,
      );
    lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(500);
  }
  expectKept(await env.client.tryGet(t.configMap, ns, 'cm-frozen'), uid);
}, 240_000);
