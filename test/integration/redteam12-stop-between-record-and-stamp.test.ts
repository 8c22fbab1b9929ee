/**
 * Red team 12 probe: the operator is stopped between the write-ahead of a
 * countdown into status.pendingDeletions (record.ts recordCountdownsFirst)
 * and the stamp on the object (countdown.ts stampTheRecordHolds), then
 * restarted.
 *
 * Steps: rd-x declares deletionDelay 20s; removed from its Bundle; the
 * operator is stopped as soon as the Bundle status shows the rd-x entry
 * (possibly before the stamp lands); restarted.
 * Expected: rd-x kept (same UID, no deletionTimestamp) until at least the
 * recorded deleteAfter, and eventually stamped.
 * Stopping on the first sight of the entry (20 ms polling) still found the
 * stamp already written (the two writes land within one poll), so the window
 * is forced: after the stop the stamp and proof are removed from rd-x (the
 * state of an operator killed after the write-ahead, before the stamp;
 * RT12_UNSTAMP=0 skips this). Result: HELD both ways (kept until the recorded
 * deleteAfter, stamped again after the restart).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { kubectl, waitFor, expectKept } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('rt12-stop');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('an operator stopped between the record write-ahead and the stamp keeps the object until the recorded deadline', async () => {
  const { env, ns, t } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rd', namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  await apply([configMap('rd-x', { a: 'b' }, { [Annotations.deletionDelay]: '20s' }), configMap('rd-y')]);
  await waitForReady(env, ns, 'rd');
  const uid = (await env.client.get(t.configMap, ns, 'rd-x')).metadata.uid;

  await apply([configMap('rd-y')]);
  let entry: { name: string; deleteAfter?: string } | undefined;
  await waitFor(
    'entry recorded',
    async () => {
      const b = await getBundle(env, ns, 'rd');
      const p = (b?.status as { pendingDeletions?: { name: string; deleteAfter?: string }[] } | undefined)?.pendingDeletions ?? [];
      entry = p.find((e) => e.name === 'rd-x');
      return entry !== undefined;
    },
    { intervalMs: 20 },
  );
  await f.op.stop();
  const atStop = await env.client.get(t.configMap, ns, 'rd-x');
  const stampedAtStop = atStop.metadata.annotations?.[Annotations.deletionTimestamp];
  console.log('entry', JSON.stringify(entry), 'stamp at stop', stampedAtStop);
  // Force the window: the state of an operator killed after the write-ahead, before the stamp.
  if (process.env.RT12_UNSTAMP !== '0')
    await kubectl(['annotate', 'configmap', 'rd-x', '-n', ns, `${Annotations.deletionTimestamp}-`, `${Annotations.stampProof}-`]);
  await sleep(3_000);
  f.op = await startOperator({ namespace: ns });
  const deadline = Date.parse(entry!.deleteAfter!);
  let stamped = false;
  while (Date.now() < deadline - 500) {
    const o = await env.client.tryGet(t.configMap, ns, 'rd-x');
    expectKept(o, uid);
    if (o?.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined) stamped = true;
    await sleep(250);
  }
  if (!stamped) {
    await waitFor('stamped', async () => {
      const o = await env.client.tryGet(t.configMap, ns, 'rd-x');
      return o === undefined || o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined;
    });
  }
  expect(true).toBe(true);
}, 120_000);
