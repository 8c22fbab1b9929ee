/**
 * Red team 10 probe: a Bundle's record (status.pendingDeletions) outlives a
 * countdown that another shard cancelled while this Bundle's shard was down.
 *
 * Two shards (--bundle-selector shard=one / shard=two), each its own
 * operator. Bundle s1 (shard one) lists s-x (deletionDelay 20s) and s-y;
 * Bundle s2 (shard two) lists s-z.
 *
 * Steps: s-x leaves s1: shard one stamps it at T1 and records
 * {s-x, T1, T1+20s} in s1's status.pendingDeletions; a copy of s-x's metadata
 * is kept (ownerReferences and annotations: `kubectl get -o yaml`). Shard
 * one's operator goes down (rollout, crash). s-x is added to s2: shard two
 * takes it over (its controller is now s2, the T1 stamp removed: the
 * countdown is cancelled). s-x leaves s2: shard two stamps it at T3 and
 * records its own countdown in s2. The old copy of s-x's metadata is written
 * back (ownerReferences naming s1 as controller, the T1 stamp and its
 * stamp-proof: a restore / an old export re-applied). Shard one comes back.
 *
 * Expected (docs/safety.md: "an earlier copy of its own annotations written
 * back ... still checks; the record decides over them"; "a proven stamp the
 * record does not hold, or one earlier than the recorded one, reads as none:
 * the countdown starts again from now"): s-x is not deleted before T3+20s
 * (its last countdown), let alone a few seconds after T3.
 *
 * Actual: s-x deleted within 8s of shard one's return (about 10s after
 * T3; T1+20s had passed). The control (the same steps with shard one
 * running throughout) holds: s1's pass on the hand-over drops s-x's entry,
 * so the T1 stamp then reads as none and the countdown restarts.
 *
 * Cause: the record entry is dropped only by a pass of the Bundle that holds
 * it. controller.ts reconcile returns 'forget' for a Bundle of another shard
 * (bundleSelector), so s1's status keeps {s-x, T1} while shard two cancels
 * that countdown (hand-over) and starts another one in s2. When s-x names s1
 * as its controller again, countdown.ts countdownOf / stampTheRecordHolds
 * finds the T1 stamp "held" by the record (live >= kept: the same time) and
 * recordedFloor allows T1+20s, so the plan's expiry deletes it. Nothing ties
 * the record entry or the stamp proof to one countdown (the proof is an HMAC
 * over the object's UID and the stamp, not the Bundle's UID nor an
 * incarnation of the countdown; the entry is keyed by group/kind/ns/name),
 * so a cancelled countdown's entry, kept by a Bundle that did not see the
 * cancel, vouches for that countdown's stamp written back. The same holds
 * for any way s1 is not reconciled while another Bundle takes the object
 * (a WatchNotSynced s1, whose status path keeps the previous record too).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { silentLogger, createLogger } from '../../src/observability/logger.js';
import { OperatorMetrics } from '../../src/observability/metrics.js';
import { systemClock } from '../../src/kube/clock.js';
import { Operator } from '../../src/operator.js';
import { parseLabelSelector } from '../../src/core/selector.js';
import { expectKept, kubeconfigPath, run, waitFor, connect, createNamespace, type TestEnv } from './harness.js';
import { configMap, getBundle, types, waitForReady, type KnownTypes } from './bundles.js';
import { testReleaseKey } from './operator.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Shard {
  stop(): Promise<void>;
}

async function startShard(namespace: string, selector: string): Promise<Shard> {
  const releaseKey = await testReleaseKey();
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()));
  const parsed = parseLabelSelector(selector);
  if (!parsed.ok) throw new Error(parsed.error);
  const logger = process.env.BUNDLESMITH_TEST_LOGS === '1' ? createLogger('debug') : silentLogger();
  const operator = new Operator({ client, clock: systemClock, logger, metrics: new OperatorMetrics(), releaseKey, namespace, workers: 2, bundleSelector: parsed.selector });
  await operator.start();
  await waitFor('the shard to be ready', () => operator.ready());
  return {
    stop: async () => {
      await operator.stop();
      client.close();
    },
  };
}

let env: TestEnv;
let ns: string;
let t: KnownTypes;
const running: Shard[] = [];

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'rt10-shard');
  t = await types(env);
});
afterAll(async () => {
  for (const s of running) await s.stop().catch(() => undefined);
  env.close();
});

function bundle(name: string, shard: string, objects: Record<string, unknown>[]): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace: ns, labels: { shard } },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  };
}

async function scenario(prefix: string, shardOneDown: boolean): Promise<void> {
  const apply = (name: string, shard: string, objects: Record<string, unknown>[]) => env.client.apply(BUNDLE_RESOURCE_TYPE, bundle(name, shard, objects), { fieldManager: 'test-user', force: true });
  const X = `${prefix}-x`;
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  const b1 = `${prefix}-s1`;
  const b2 = `${prefix}-s2`;

  let one = await startShard(ns, 'shard=one');
  running.push(one);
  const two = await startShard(ns, 'shard=two');
  running.push(two);

  await apply(b1, 'one', [x(), configMap(`${prefix}-y`)]);
  await apply(b2, 'two', [configMap(`${prefix}-z`)]);
  await waitForReady(env, ns, b1);
  await waitForReady(env, ns, b2);
  const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;

  // T1: s-x leaves s1; shard one stamps and records it. A copy of its metadata is kept.
  await apply(b1, 'one', [configMap(`${prefix}-y`)]);
  let saved: { annotations: Record<string, string>; ownerReferences: unknown[] } = { annotations: {}, ownerReferences: [] };
  await waitFor('first stamp, recorded', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const b = await getBundle(env, ns, b1);
    const p = (b?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
    saved = { annotations: o.metadata.annotations ?? {}, ownerReferences: (o.metadata.ownerReferences ?? []) };
    return saved.annotations[Annotations.deletionTimestamp] !== undefined && saved.annotations[Annotations.stampProof] !== undefined && p.some((e) => e.name === X);
  });
  const t1 = Date.now();

  if (shardOneDown) {
    await one.stop();
    running.splice(running.indexOf(one), 1);
  }

  // s2 lists s-x: shard two takes it over (the countdown is cancelled on the object).
  await apply(b2, 'two', [configMap(`${prefix}-z`), x()]);
  await waitFor('s2 controls s-x, stamp removed', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const ctl = (o.metadata.ownerReferences ?? []).find((r) => r.controller === true);
    return ctl?.name === b2 && o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined;
  });
  // Let the first countdown's deadline pass (T1+20s).
  const wait = t1 + 22_000 - Date.now();
  if (wait > 0) await sleep(wait);

  // T3: s-x leaves s2: shard two stamps it (a new 20s countdown).
  await apply(b2, 'two', [configMap(`${prefix}-z`)]);
  await waitFor('second stamp', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const s = o.metadata.annotations?.[Annotations.deletionTimestamp];
    return s !== undefined && s !== saved.annotations[Annotations.deletionTimestamp];
  });
  const t3 = Date.now();

  // The old copy of s-x's metadata written back (a restore; an old export re-applied).
  const patch = {
    metadata: {
      ownerReferences: saved.ownerReferences,
      annotations: {
        [Annotations.deletionTimestamp]: saved.annotations[Annotations.deletionTimestamp],
        [Annotations.stampProof]: saved.annotations[Annotations.stampProof],
      },
    },
  };
  const r = await run('kubectl', ['patch', 'configmap', X, '-n', ns, '--type=merge', '-p', JSON.stringify(patch)]);
  expect(r.stderr).toBe('');

  if (shardOneDown) {
    // s1's record still holds the cancelled countdown (shard one never saw the hand-over).
    const p = ((await getBundle(env, ns, b1))?.status as { pendingDeletions?: { name: string; deletionTimestamp: string }[] } | undefined)?.pendingDeletions ?? [];
    expect(p.find((e) => e.name === X)?.deletionTimestamp).toBe(saved.annotations[Annotations.deletionTimestamp]);
    one = await startShard(ns, 'shard=one');
    running.push(one);
  }
  await sleep(8_000);
  expect(Date.now() - t3).toBeLessThan(19_000);
  expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
  for (const s of running.splice(0)) await s.stop();
}

it('control: shard one running throughout, the hand-over drops the entry and the old stamp written back restarts the countdown', async () => {
  await scenario('ctl', false);
}, 180_000);

it('shard one down while shard two takes the object over and stamps it: s1 record keeps the cancelled T1 countdown, the old copy written back ends it early', async () => {
  await scenario('dn', true);
}, 180_000);
