/**
 * A take-hold that cannot end the release it carries: the record of the
 * release may not be written (a policy, or RBAC in the operator's namespace
 * taken away). The take-hold is not sent (an unrecorded end would let the
 * release written back count again), the resource reports a Forbidden error
 * that names the release record, not the user's object, and the take-hold
 * goes through once the record may be written again.
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { resourceType } from './harness.js';
import { applyBundle, configMap, resourceCondition, waitForBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { refuseConfigMapOperation, waitUntilUpdatesRefused } from './refuse-operation.js';
import { RELEASE_RECORDS_NAMESPACE, releaseRecordName, releaseRecordOf, releasedBy } from './release-writeback.js';

const f = operatorFixture('recref');

it('a take-hold whose release record may not be written waits, says why, and goes through once it may', async () => {
  const { env, ns, t } = f;
  const manifest = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: '10m' });
  const released = await releasedBy(env, ns, 'app', [{ name: 'c', object: manifest }], t.configMap, 'cm');
  expect(await releaseRecordOf(env, released.uid)).toMatchObject({ state: 'signed', proof: released.proof });

  const configMaps = await resourceType(env, 'v1', 'ConfigMap');
  const allow = await refuseConfigMapOperation(
    env,
    RELEASE_RECORDS_NAMESPACE,
    releaseRecordName(released.uid),
    'UPDATE',
    'release records are frozen by a test policy',
  );
  try {
    await waitUntilUpdatesRefused(env, configMaps, RELEASE_RECORDS_NAMESPACE, releaseRecordName(released.uid));
    await applyBundle(env, ns, 'app', [{ name: 'c', object: manifest }]);
    const waiting = await waitForBundle(env, ns, 'app', 'the take-hold to fail on the release record', (b) =>
      (resourceCondition(b, 'c', 'Error')?.message ?? '').includes('release record'),
    );
    expect(resourceCondition(waiting, 'c', 'Error')).toMatchObject({ status: 'True', reason: 'Forbidden' });
    // Not taken hold of: still released, its record as it was.
    const still = await env.client.get(t.configMap, ns, 'cm');
    expect(still.metadata.uid).toBe(released.uid);
    expect(still.metadata.labels?.[Labels.formerBundle]).toBeDefined();
    expect(await releaseRecordOf(env, released.uid)).toMatchObject({ state: 'signed', proof: released.proof });
  } finally {
    await allow();
  }
  await waitForReady(env, ns, 'app');
  const held = await env.client.get(t.configMap, ns, 'cm');
  expect(held.metadata.uid).toBe(released.uid);
  expect(held.metadata.labels?.[Labels.formerBundle]).toBeUndefined();
  expect(await releaseRecordOf(env, released.uid)).toMatchObject({ state: 'ended' });
}, 180_000);
