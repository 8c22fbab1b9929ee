/**
 * Red team 13: the chart's deletion guard counts an approval the operator
 * does not, so kube-controller-manager deletes an Approve object in a
 * foreground cascade that the operator would keep.
 *
 * What a user does: a Bundle lists ConfigMaps rt13fa-future and
 * rt13fa-control (both `deletionPolicy: Approve`, `deletionDelay: 1h`) and
 * rt13fa-plain. The two Approve objects leave the spec: each is stamped and
 * waits for its delay and an approval. Someone writes an approval on
 * rt13fa-future dated far ahead of the server's clock (a typo in the year, a
 * script with a broken clock, a "pre-approval" for later: here
 * 2099-01-01T00:00:00Z). The Bundle is deleted with `--cascade=foreground`;
 * kube-controller-manager runs, the chart's deletion guard is installed for
 * it; the operator restarts meanwhile (stopped for the deletion, so the
 * order is the guard's, not a race's; with the operator running throughout,
 * its finalizer released both first in the one run tried, RT13_STOP=0).
 *
 * Why it should be kept: docs/safety.md, "An approval dated more than a
 * minute ahead of the server's clock does not count", and "an Approve
 * object is never deleted without its approval for the current countdown".
 * By the operator's reading rt13fa-future is unapproved (core/softdelete/
 * decide.ts APPROVAL_AHEAD_MS), exactly like rt13fa-control: the finalizer
 * releases both from the foreground cascade (finalize.ts keptFromCascade)
 * and the guard is there to hold the collector back until it has.
 *
 * What happens: the guard (charts/bundlesmith/templates/deletionguard.yaml,
 * variables.approvedAfterStamp) only compares deletionApproved with the
 * live deletionTimestamp, with no bound on how far ahead it is, so its
 * Approve validation lets kube-controller-manager's delete through:
 * rt13fa-future is deleted; rt13fa-control is kept. (Not the known limit
 * of an earlier copy written back: nothing is written back, the approval is
 * on the live object before the deletion, and the operator's own reading
 * of it never changes.) A CEL policy has no clock, so a fix probably has to
 * refuse the collectors' deletes of any Approve object a Bundle holds (the
 * finalizer releases them in foreground anyway) rather than judge the
 * approval.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { installDeletionGuard } from './deletion-propagation.js';

const f = referenceFixture('rt13fa');

it('foreground, deletion guard installed: an approval dated far ahead does not let the collector delete an Approve object', async () => {
  const { env, ns, t } = f;
  const gated = { [Annotations.deletionPolicy]: 'Approve', [Annotations.deletionDelay]: '1h' };
  const future = configMap('rt13fa-future', { k: 'v' }, gated);
  const control = configMap('rt13fa-control', { k: 'v' }, gated);
  const plain = configMap('rt13fa-plain');
  await applyBundle(env, ns, 'fa', [
    { name: 'future', object: future },
    { name: 'control', object: control },
    { name: 'plain', object: plain },
  ]);
  await waitForReady(env, ns, 'fa');
  const uid = async (n: string) => (await env.client.get(t.configMap, ns, n)).metadata.uid;
  const futureUid = await uid('rt13fa-future');
  const controlUid = await uid('rt13fa-control');

  await applyBundle(env, ns, 'fa', [{ name: 'plain', object: plain }]);
  for (const n of ['rt13fa-future', 'rt13fa-control']) {
    await waitFor(
      `${n} stamped`,
      async () => (await env.client.get(t.configMap, ns, n)).metadata.annotations?.[Annotations.deletionTimestamp] !== undefined,
    );
  }
  await env.client.patch(
    t.configMap,
    ns,
    'rt13fa-future',
    { metadata: { annotations: { [Annotations.deletionApproved]: '2099-01-01T00:00:00Z' } } },
    'merge',
    { fieldManager: 'approver' },
  );

  const removeGuard = await installDeletionGuard(f, t.configMap, { name: 'rt13fa-control', uid: controlUid });
  try {
    console.log('before the deletion', JSON.stringify((await env.client.get(t.configMap, ns, 'rt13fa-future')).metadata.annotations));
    if (process.env.RT13_STOP !== '0') await f.operator.stop();
    const bundle = await getBundle(env, ns, 'fa');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'fa', { uid: bundle?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    await waitFor(
      'the collector to take the plain object',
      async () => (await env.client.tryGet(t.configMap, ns, 'rt13fa-plain')) === undefined,
      { timeoutMs: 60_000 },
    );
    if (process.env.RT13_STOP !== '0') await f.startOperator();
    await waitFor('fa to be gone', async () => (await getBundle(env, ns, 'fa')) === undefined, { timeoutMs: 90_000 });
    for (const n of ['rt13fa-future', 'rt13fa-control']) {
      const o = await env.client.tryGet(t.configMap, ns, n);
      console.log(n, o === undefined ? 'GONE' : `kept, refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`);
    }
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt13fa-control'), controlUid);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt13fa-future'), futureUid);
  } finally {
    await removeGuard();
  }
}, 300_000);
