/**
 * A kind the operator may not watch (here: RBAC forbids Secrets) must not
 * hang a worker or the Bundle silently (issue 23, class 6): the pass gives
 * its worker back at once, the Bundle says why (WatchNotSynced), other
 * Bundles (two dozen blocked ones beside them) reconcile, the replica stays
 * ready, and the Bundle is woken when the watch can list.
 */
import { conditionOf, connect, createNamespace, resourceType, type TestEnv } from './harness.js';
import { applyBundle, configMap, waitForBundle } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';

let env: TestEnv;
let ns: string;
let op: InProcessOperator;
const user = 'system:serviceaccount:bundlesmith-test:limited';

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'forbidden');
  const role = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRole');
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
  await env.client.apply(
    role,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'bundlesmith-test-limited' },
      rules: [
        {
          apiGroups: ['smith.atlassian.com'],
          resources: ['bundles', 'bundles/status'],
          verbs: ['get', 'list', 'watch', 'update', 'patch'],
        },
        { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
        { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
      ],
    },
    { fieldManager: 'test-user' },
  );
  await env.client.apply(
    binding,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bundlesmith-test-limited' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bundlesmith-test-limited' },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
    { fieldManager: 'test-user' },
  );
  op = await startOperator({ namespace: ns, impersonate: { user }, watchSyncTimeoutMs: 1_000 });
});
afterAll(async () => {
  await op.stop();
  env.close();
});

const secret = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  stringData: { a: 'b' },
});

it('reports a kind it cannot watch on the Bundle, keeps serving other Bundles and stays ready; the Bundle goes on once it may watch', async () => {
  await applyBundle(env, ns, 'needs-secrets', [{ name: 's', object: secret('nope') }]);
  const failing = await waitForBundle(env, ns, 'needs-secrets', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
  expect(conditionOf(failing, 'Error')).toMatchObject({
    reason: 'WatchNotSynced',
    message: expect.stringMatching(/cannot watch secrets.*forbidden/i) as unknown,
  });
  // Another tenant's two dozen such Bundles hold no worker: a Bundle of ConfigMaps still reconciles, and the replica is ready.
  for (let i = 0; i < 24; i++) await applyBundle(env, ns, `blocked-${i}`, [{ name: 's', object: secret(`nope-${i}`) }]);
  await applyBundle(env, ns, 'fine', [{ name: 'cm', object: configMap('fine') }]);
  await waitForBundle(env, ns, 'fine', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True');
  expect(op.operator.ready()).toBe(true);
  // RBAC grows: the watch lists and wakes the Bundle.
  await env.client.apply(
    await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRole'),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'bundlesmith-test-limited-secrets' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] }],
    },
    { fieldManager: 'test-user' },
  );
  await env.client.apply(
    await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bundlesmith-test-limited-secrets' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bundlesmith-test-limited-secrets' },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
    },
    { fieldManager: 'test-user' },
  );
  await waitForBundle(env, ns, 'needs-secrets', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True', 90_000);
}, 150_000);
