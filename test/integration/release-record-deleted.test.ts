/**
 * A release whose record is deleted by hand (red team 31: "no record" was
 * fail-open). The operator signs releases as v3 proofs, recorded before they
 * are sent; a v3 proof without its record is not counted, so an object whose
 * record someone with rights in the operator's namespace deleted is kept
 * past its delay (the same uid, no deletionTimestamp), reported as
 * UnprovenRelease and by `bundlesmith pending`, and deleted by
 * `bundlesmith delete-now`. Without this, an earlier release written back
 * would count again once the record was gone.
 */
import { Annotations, ReleaseRecordLabel } from '../../src/api/names.js';
import { formatRfc3339 } from '../../src/core/rfc3339.js';
import { bundlesmith, expectKept, resourceType, waitFor } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import {
  RELEASE_RECORDS_NAMESPACE,
  deleteBundle,
  expectKeptFor,
  legacyRelease,
  releaseRecordName,
  releaseRecordOf,
  releaseSnapshot,
} from './release-writeback.js';

const f = operatorFixture('recdel');
const DELAY_MS = 15_000;

it('a v3 release whose record is deleted is kept past its delay, reported, and deleted by delete-now', async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'app', [
    { name: 'c', object: configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` }) },
  ]);
  await waitForReady(env, ns, 'app');
  await deleteBundle(env, ns, 'app');
  const released = await releaseSnapshot(env, t.configMap, ns, 'cm');
  expect(released.proof).toMatch(/^v3:/);
  expect(released.stamp).toBeDefined();
  expect(await releaseRecordOf(env, released.uid)).toMatchObject({ state: 'signed', proof: released.proof, uid: released.uid });

  // Someone with rights in the operator's namespace deletes the record.
  const configMaps = await resourceType(env, 'v1', 'ConfigMap');
  const record = await env.client.get(configMaps, RELEASE_RECORDS_NAMESPACE, releaseRecordName(released.uid));
  await env.client.delete(configMaps, RELEASE_RECORDS_NAMESPACE, releaseRecordName(released.uid), { uid: record.metadata.uid });

  // Past its delay, and then some: kept.
  const dueAt = Date.parse(released.stamp ?? '') + DELAY_MS;
  await expectKeptFor(env, t.configMap, ns, 'cm', released.uid, Math.max(0, dueAt - Date.now()) + 15_000);
  await waitFor('an UnprovenRelease event naming the record', async () =>
    (await eventsFor(env, ns, 'cm')).some((e) => e.reason === 'UnprovenRelease' && e.note.includes('release record')),
  );

  const pending = await bundlesmith(['pending', '-n', ns, '-o', 'json']);
  expect(pending.code).toBe(0);
  const items = (JSON.parse(pending.stdout) as { items: { name: string; problem?: string; deleteAfter?: string }[] }).items;
  const entry = items.find((i) => i.name === 'cm');
  expect(entry?.problem).toContain('release record is gone');
  expect(entry?.deleteAfter).toBeUndefined();

  const deleted = await bundlesmith(['delete-now', 'ConfigMap/cm', '-n', ns]);
  expect(deleted.stderr).toBe('');
  expect(deleted.code).toBe(0);
  await waitFor('cm deleted', async () => (await env.client.tryGet(t.configMap, ns, 'cm'))?.metadata.uid !== released.uid);
}, 180_000);

it('a release the first version with records signed (v2, recorded) is signed again as v3 over the same stamp', async () => {
  const { env, ns, t } = f;
  const stamp = formatRfc3339(Date.now() - 60_000);
  // With the record that version wrote before its v2 patch.
  const { uid } = await legacyRelease(env, ns, 'cm-v2', { formerBundle: 'gone', delay: '10m', stamp }, async (uid, proof) => {
    await env.client.create(await resourceType(env, 'v1', 'ConfigMap'), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: releaseRecordName(uid),
        namespace: RELEASE_RECORDS_NAMESPACE,
        labels: { [ReleaseRecordLabel.key]: ReleaseRecordLabel.value },
      },
      data: { state: 'signed', proof, uid, object: `v1 ConfigMap ${ns}/cm-v2` },
    });
  });
  await waitFor('the release signed again as v3, and recorded', async () => {
    const o = await env.client.get(t.configMap, ns, 'cm-v2');
    const proof = o.metadata.annotations?.[Annotations.releaseProof] ?? '';
    return proof.startsWith('v3:') && (await releaseRecordOf(env, uid))?.proof === proof;
  });
  const resigned = await env.client.get(t.configMap, ns, 'cm-v2');
  expect(resigned.metadata.annotations?.[Annotations.deletionTimestamp]).toBe(stamp);
  expectKept(resigned, uid);
}, 120_000);
