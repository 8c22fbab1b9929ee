/**
 * Issue 9, case 3 against the reference collector: on a control plane of
 * this file's own where kube-controller-manager's garbage collector runs
 * (ours does not), an object released by a deleted Bundle survives the
 * deletion of the sibling it referenced until its own expiry.
 */
import { DateTime } from 'luxon';
import { Annotations, Labels } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { createNamespace, localClockAsServerTime, waitFor, type TestEnv } from './harness.js';
import { startReferenceCluster, type ReferenceCluster } from './reference-cluster.js';
import { applyBundle, BUNDLE_RESOURCE_TYPE, configMap, getBundle, types, waitForReady, type KnownTypes } from './bundles.js';
import { JumpingClock } from './clocks.js';

let ref: ReferenceCluster | undefined;
let env: TestEnv;
let t: KnownTypes;
let ns: string;
const clock = new JumpingClock();

beforeAll(async () => {
  ref = await startReferenceCluster({ bundleCrd: true });
  env = ref.env;
  t = await types(env);
  ns = await createNamespace(env, 'sdref');
  await ref.startOperator(ns, { clock, serverTime: localClockAsServerTime(clock) });
}, 180_000);

afterAll(async () => {
  await ref?.stop();
});

const stampOf = (o: KubeObject | undefined): string | undefined => o?.metadata.annotations?.[Annotations.deletionTimestamp];

describe('release with kube-controller-manager as the collector', () => {
  it('a released object survives the deletion of the sibling it referenced until its own expiry', async () => {
    await applyBundle(env, ns, 'rel', [
      { name: 'cfg', object: configMap('rel-cfg') },
      { name: 'web', references: [{ resource: 'cfg' }], object: configMap('rel-web', { v: '1' }, { [Annotations.deletionDelay]: '25s' }) },
    ]);
    const bundle = await waitForReady(env, ns, 'rel');
    const cfg = await env.client.get(t.configMap, ns, 'rel-cfg');
    const web = await env.client.get(t.configMap, ns, 'rel-web');
    expect(web.metadata.ownerReferences?.map((r) => r.uid)).toContain(cfg.metadata.uid);

    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rel', { uid: bundle.metadata.uid ?? '', propagationPolicy: 'Background' });
    await waitFor('the Bundle to be gone', async () => (await getBundle(env, ns, 'rel')) === undefined);
    expect(await env.client.tryGet(t.configMap, ns, 'rel-cfg')).toBeUndefined();
    const released = await env.client.get(t.configMap, ns, 'rel-web');
    expect(released.metadata.uid).toBe(web.metadata.uid);
    expect(released.metadata.ownerReferences ?? []).toEqual([]);
    expect(released.metadata.labels?.[Labels.formerBundle]).toBe('rel');
    const deleteAfter = DateTime.fromISO(stampOf(released) as string).toMillis() + 25_000;

    // kube-controller-manager has seen cfg gone: a canary owned by it is collected...
    await env.client.create(t.configMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'rel-canary',
        namespace: ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'rel-cfg', uid: cfg.metadata.uid }],
      },
    });
    await waitFor(
      'kube-controller-manager to collect the canary owned by the deleted cfg',
      async () => (await env.client.tryGet(t.configMap, ns, 'rel-canary')) === undefined,
      { timeoutMs: 90_000 },
    );
    // ...and keeps the released object, which no longer names cfg.
    const kept = await env.client.get(t.configMap, ns, 'rel-web');
    expect(kept.metadata.uid).toBe(web.metadata.uid);
    expect(kept.metadata.deletionTimestamp).toBeUndefined();

    // At its own expiry our sweeper deletes it.
    clock.advance(Math.max(0, deleteAfter - clock.now()) + 1000);
    await waitFor(
      'the released object to be deleted at its expiry',
      async () => (await env.client.tryGet(t.configMap, ns, 'rel-web')) === undefined,
    );
    expect(clock.now()).toBeGreaterThanOrEqual(deleteAfter);
  }, 180_000);
});
