/**
 * A release's end that the record refuses (an admission policy on the
 * operator's namespace) holds back every write decided on it: the sweep
 * remembers the end (its watch saw the label go), and a Bundle's take-hold
 * of the object, which ends a recorded release before it is sent, must not
 * be sent on that memory alone while the record on the server still says
 * signed (review of stop 40: after a restart, an earlier release written
 * back would count again). Once the refusal lifts, the end is written and
 * the take-hold lands.
 *
 * Steps: Bundle `first` releases cm (record signed P); record UPDATEs are
 * refused; a user takes the label, the former-bundle annotation and the
 * proof off (the stamp stays: the take-hold ends only a recorded release);
 * Bundle `app` lists cm.
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';
import { RELEASE_RECORDS_NAMESPACE, releasedBy, releaseRecordName, releaseRecordOf, sleep } from './release-writeback.js';
import { refuseConfigMapOperation } from './refuse-operation.js';

const f = operatorFixture('rv40end');

it('a take-hold is not sent while the end of the release it ends is known only in memory', async () => {
  const { env, ns, t } = f;
  const cm = configMap('cm', { key: 'v' }, { [Annotations.deletionDelay]: '10m' });
  const { uid, proof } = await releasedBy(env, ns, 'first', [{ name: 'c', object: cm }], t.configMap, 'cm');
  await waitFor('record signed', async () => (await releaseRecordOf(env, uid))?.proof === proof);
  const unrefuse = await refuseConfigMapOperation(env, RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid), 'UPDATE', 'records frozen');
  try {
    await sleep(2_000);
    await env.client.patch(
      t.configMap,
      ns,
      'cm',
      {
        metadata: {
          labels: { [Labels.formerBundle]: null },
          annotations: { [Annotations.formerBundle]: null, [Annotations.releaseProof]: null },
        },
      },
      'merge',
    );
    await sleep(3_000);
    await applyBundle(env, ns, 'app', [{ name: 'c', object: cm }]);
    await sleep(10_000);
    expect((await releaseRecordOf(env, uid))?.state).toBe('signed');
    const held = await env.client.get(t.configMap, ns, 'cm');
    expect((held.metadata.ownerReferences ?? []).filter((r) => r.controller === true)).toEqual([]);
  } finally {
    await unrefuse();
  }
  await waitFor('the end written', async () => (await releaseRecordOf(env, uid))?.state === 'ended', { timeoutMs: 90_000 });
  await waitForReady(env, ns, 'app');
}, 240_000);
