/**
 * The released-object sweep starts each resource's watch and, when RBAC
 * refuses it, leaves the resource alone for a while instead of asking RBAC
 * first (stop 33). Fuzz seed 19614 found the cost: the operator started
 * while it could not list ConfigMaps, was granted them back, and a Bundle
 * deleted later released a ConfigMap with a countdown that the sweep, still
 * not watching ConfigMaps, left for five minutes. A Bundle being deleted
 * now brings the refused watches back (the finalizer could list the kind to
 * release it): the countdown ends in a deletion on time.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { conditionOf, connect, createNamespace, resourceType, waitFor, waitForGone, type TestEnv } from './harness.js';
import { applyBundle, configMap, types, waitForBundle, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let op: InProcessOperator | undefined;
const user = 'system:serviceaccount:bundlesmith-test:sweep-refused';
const rbac = 'rbac.authorization.k8s.io/v1';

async function grant(name: string, rules: Record<string, unknown>[]): Promise<void> {
  await env.client.apply(
    await resourceType(env, rbac, 'ClusterRole'),
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name }, rules },
    {
      fieldManager: 'test-user',
    },
  );
  await env.client.apply(
    await resourceType(env, rbac, 'ClusterRoleBinding'),
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
    { fieldManager: 'test-user' },
  );
}

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'sweep-refused');
  t = await types(env);
  // Everything the operator needs but ConfigMaps.
  await grant('bundlesmith-test-sweep-refused', [
    { apiGroups: ['smith.atlassian.com'], resources: ['bundles', 'bundles/status'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
  ]);
});
afterAll(async () => {
  await op?.stop();
  env.close();
});

it('a watch refused at start is tried again when a Bundle is deleted: its released countdown ends in a deletion on time', async () => {
  op = await startOperator({ namespace: ns, impersonate: { user }, watchSyncTimeoutMs: 1_000 });
  // RBAC grows after the operator started: its sweep had its ConfigMap watch refused.
  await grant('bundlesmith-test-sweep-refused-configmaps', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'] },
  ]);
  await applyBundle(env, ns, 'rf', [{ name: 'x', object: configMap('rf-x', { k: 'v' }, { [Annotations.deletionDelay]: '2s' }) }]);
  const bundle = await waitForBundle(env, ns, 'rf', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 90_000);
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'rf', { uid: bundle.metadata.uid });
  // Released with a countdown by the finalizer...
  await waitFor('rf-x released with a countdown', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'rf-x');
    return o === undefined || o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined;
  });
  // ...and deleted by the sweep once it is due, well before the five minutes a refused watch is otherwise left alone.
  await waitForGone(env, t.configMap, ns, 'rf-x', { timeoutMs: 90_000 });
}, 240_000);
