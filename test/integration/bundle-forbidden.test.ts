/**
 * A kind the operator may not watch (here: RBAC forbids Secrets) must not
 * hang a worker or the Bundle silently: the reconcile gives up after a
 * bounded wait, the Bundle says why (RetriableError), and it is retried.
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
  await env.client.apply(role, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'bundlesmith-test-limited' },
    rules: [
      { apiGroups: ['smith.atlassian.com'], resources: ['bundles', 'bundles/status'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
    ],
  }, { fieldManager: 'test-user' });
  await env.client.apply(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'bundlesmith-test-limited' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bundlesmith-test-limited' },
    subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
  }, { fieldManager: 'test-user' });
  op = await startOperator({ namespace: ns, impersonate: { user }, watchSyncTimeoutMs: 1_000 });
});
afterAll(async () => {
  await op.stop();
  env.close();
});

it('reports a kind it cannot watch on the Bundle and keeps serving other Bundles', async () => {
  await applyBundle(env, ns, 'needs-secrets', [{ name: 's', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nope' }, stringData: { a: 'b' } } }]);
  const failing = await waitForBundle(env, ns, 'needs-secrets', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
  expect(conditionOf(failing, 'Error')).toMatchObject({ reason: 'RetriableError', message: expect.stringMatching(/cannot watch secrets.*forbidden/i) as unknown });
  // The workers are free: a Bundle of ConfigMaps still reconciles.
  await applyBundle(env, ns, 'fine', [{ name: 'cm', object: configMap('fine') }]);
  await waitForBundle(env, ns, 'fine', 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True');
});
