/**
 * Red team 13: `kubectl delete bundle --cascade=orphan` while a pass of that
 * Bundle is applying its objects.
 *
 * What a user does: edits a Bundle (here: a new value in each ConfigMap; a
 * script that rolls out a last version and then hands the objects over to
 * another tool) and deletes it with `--cascade=orphan` while the operator's
 * pass for the edit is still applying (a pass under a request budget, a slow
 * API server or admission webhook: the applies of a large Bundle take
 * seconds). Simulated deterministically: the operator's server-side applies
 * of ConfigMaps are held (after the pass's fresh read of the Bundle) until
 * kube-controller-manager has done the orphaning, then let go.
 *
 * Why the objects should be kept: docs/deletion.md, "Orphan
 * (`--cascade=orphan`): every object stays". kube-controller-manager takes
 * the Bundle's reference out of every dependent and removes the `orphan`
 * finalizer; nothing the user did asks for a deletion.
 *
 * What happens: the pass confirmed the Bundle alive on its fresh read
 * (controllers/bundle/act.ts actOnPlan, isLiveIncarnation) before the
 * deletion, and its server-side applies (force, no precondition, no
 * send-time check of the Bundle: act.ts applyResources) land after the
 * collector's orphaning and write the Bundle's controller reference back
 * onto every object. The finalizer's pass then reads the Bundle's finalizers
 * (no `orphan` left: propagationOf) as a background deletion, finds no
 * orphaned object to say otherwise (effectivePropagation: every object is
 * controlled again) and deletes them all (finalize.ts backgroundSteps).
 * kube-controller-manager would delete them too once the Bundle is gone:
 * the controller references were written back by our apply.
 */
import { startReferenceCluster, type ReferenceCluster } from './reference-cluster.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { silentLogger, createLogger } from '../../src/observability/logger.js';
import { Operator } from '../../src/operator.js';
import { systemClock } from '../../src/kube/clock.js';
import { DEFAULT_RELEASE_KEY_SECRET, loadReleaseKey } from '../../src/controllers/softdelete/release-key.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Finalizers } from '../../src/api/names.js';
import { createNamespace, expectKept, resourceType, waitFor } from './harness.js';
import { applyBundle, configMap, waitForReady, types, type KnownTypes } from './bundles.js';
import type { ResourceType } from '../../src/kube/types.js';

let ref: ReferenceCluster;
let client: KubeClient;
let operator: Operator | undefined;
let t: KnownTypes;
let ns: string;

/** The operator's applies of ConfigMaps wait on this while it is set. */
let hold: Promise<void> | undefined;
let held = 0;

beforeAll(async () => {
  ref = await startReferenceCluster({ bundleCrd: true });
  t = await types(ref.env);
  ns = await createNamespace(ref.env, 'rt13oa');
  client = await KubeClient.fromKubeConfig(loadKubeConfig(ref.state.kubeconfig));
  const apply = client.apply.bind(client);
  client.apply = async (rt: ResourceType, manifest: Record<string, unknown>, opts) => {
    if (hold !== undefined && rt.plural === 'configmaps') {
      held++;
      await hold;
    }
    return await apply(rt, manifest, opts);
  };
  operator = new Operator({
    client,
    logger: process.env.BUNDLESMITH_TEST_LOGS === '1' ? createLogger('debug') : silentLogger(),
    namespace: ns,
    workers: 2,
    releaseKey: await loadReleaseKey(client, { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET }),
    releaseKeySecret: { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET },
    clock: systemClock,
  });
  await operator.start();
  // Generous: right after a control plane starts on a loaded CI machine, the first lists can be slow (a CI run once took over 30 s).
  await waitFor('the operator to be ready', () => operator!.ready(), { timeoutMs: 120_000 });
}, 180_000);

afterAll(async () => {
  await operator?.stop();
  client?.close();
  await ref?.stop();
});

it('a Bundle deleted with --cascade=orphan while its pass applies keeps every object', async () => {
  const env = ref.env;
  const names = ['oa-a', 'oa-b'];
  const resources = (v: string) => names.map((n) => ({ name: n, object: configMap(n, { v }) }));
  await applyBundle(env, ns, 'oa', resources('1'));
  const bundle = await waitForReady(env, ns, 'oa');
  const uids = new Map<string, string>();
  for (const n of names) uids.set(n, (await env.client.get(t.configMap, ns, n)).metadata.uid);

  // The edit's pass reaches its applies (after its fresh read of the Bundle) and waits there.
  let release!: () => void;
  hold = new Promise<void>((r) => (release = r));
  await applyBundle(env, ns, 'oa', resources('2'));
  await waitFor('the pass to reach its applies', () => held >= 1, { timeoutMs: 30_000 });

  // kubectl delete bundle oa --cascade=orphan; kube-controller-manager orphans the objects.
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'oa', { uid: bundle.metadata.uid, propagationPolicy: 'Orphan' });
  await waitFor(
    'kube-controller-manager to orphan the objects',
    async () => {
      for (const n of names) {
        const o = await env.client.get(t.configMap, ns, n);
        if ((o.metadata.ownerReferences ?? []).some((r) => r.uid === bundle.metadata.uid)) return false;
      }
      const b = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'oa');
      return b === undefined || !(b.metadata.finalizers ?? []).includes(Finalizers.orphan);
    },
    { timeoutMs: 30_000 },
  );
  console.log('orphaned by kube-controller-manager; the held applies go on');

  // The held applies go through.
  hold = undefined;
  release();

  await waitFor('the Bundle to be gone', async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'oa')) === undefined, {
    timeoutMs: 60_000,
  });
  // Give both collectors a moment to act on what the Bundle's deletion left behind, then check.
  await waitFor(
    'each object to settle (no reference to the gone Bundle, or gone)',
    async () => {
      for (const n of names) {
        const o = await env.client.tryGet(t.configMap, ns, n);
        if (
          o !== undefined &&
          o.metadata.deletionTimestamp === undefined &&
          (o.metadata.ownerReferences ?? []).some((r) => r.uid === bundle.metadata.uid)
        )
          return false;
      }
      return true;
    },
    { timeoutMs: 60_000 },
  );
  const events = await env.client.list(await resourceType(env, 'v1', 'Event'), ns);
  console.log(events.items.map((e) => `${(e as { reason?: string }).reason}: ${(e as { message?: string }).message}`).join('\n'));
  for (const n of names) {
    const o = await env.client.tryGet(t.configMap, ns, n);
    console.log(
      n,
      o === undefined
        ? 'GONE'
        : `uid ${o.metadata.uid} deletionTimestamp ${o.metadata.deletionTimestamp} refs ${JSON.stringify(o.metadata.ownerReferences ?? [])}`,
    );
    expectKept(o, uids.get(n)!);
  }
}, 240_000);

it('control: the same orphan deletion with no pass in flight keeps every object', async () => {
  const env = ref.env;
  const names = ['oc-a', 'oc-b'];
  const resources = (v: string) => names.map((n) => ({ name: n, object: configMap(n, { v }) }));
  await applyBundle(env, ns, 'oc', resources('1'));
  const bundle = await waitForReady(env, ns, 'oc');
  await applyBundle(env, ns, 'oc', resources('2'));
  await waitForReady(env, ns, 'oc');
  const uids = new Map<string, string>();
  for (const n of names) uids.set(n, (await env.client.get(t.configMap, ns, n)).metadata.uid);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'oc', { uid: bundle.metadata.uid, propagationPolicy: 'Orphan' });
  await waitFor('the Bundle to be gone', async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'oc')) === undefined, {
    timeoutMs: 60_000,
  });
  for (const n of names) expectKept(await env.client.tryGet(t.configMap, ns, n), uids.get(n)!);
}, 120_000);
