/**
 * A prune the Bundle's identity may not make (RBAC refuses the delete) is
 * retried with backoff, and its status says Forbidden once: the retries
 * write nothing while nothing changes. (The softdelete fuzz's seed 19718
 * showed a refused expiry delete, of an approved object gated on
 * BundleReady, sent every 100 ms while the rights were gone, each failed pass
 * followed by one that succeeded and reset the backoff; this plain prune
 * does not do that, and the expiry case is still to be pinned down.)
 */
import { Reasons } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, waitForBundle, waitForReady } from './bundles.js';
import { conditionOf, expectKept, resourceType, uidOf, waitFor } from './harness.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('prune-forbidden');
const ACCOUNT = 'no-delete';

it('a prune RBAC refuses: Forbidden said once, the object kept, and the retries write nothing while nothing changes', async () => {
  const { env, ns } = f;
  const as = { fieldManager: 'test-admin' };
  const sa = await resourceType(env, 'v1', 'ServiceAccount');
  const role = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'Role');
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding');
  await env.client.apply(sa, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: ACCOUNT, namespace: ns } }, as);
  await env.client.apply(
    role,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: ACCOUNT, namespace: ns },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }],
    },
    as,
  );
  await env.client.apply(
    binding,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: ACCOUNT, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ACCOUNT },
      subjects: [{ kind: 'ServiceAccount', name: ACCOUNT, namespace: ns }],
    },
    as,
  );
  const apply = async (names: string[]): Promise<void> => {
    const manifest = bundleManifest(
      ns,
      'refused',
      names.map((n) => ({ name: n, object: configMap(n) })),
    );
    const spec = manifest.spec as Record<string, unknown>;
    await env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      { ...manifest, spec: { ...spec, serviceAccountName: ACCOUNT } },
      { fieldManager: 'test-user', force: true },
    );
  };
  await apply(['kept-cm', 'pruned-cm']);
  await waitForReady(env, ns, 'refused');
  const uid = await uidOf(env, f.t.configMap, ns, 'pruned-cm');

  await apply(['kept-cm']);
  const refused = await waitForBundle(
    env,
    ns,
    'refused',
    'the prune refused',
    (b) => conditionOf(b, 'Error')?.reason === Reasons.Forbidden,
  );
  expect(conditionOf(refused, 'Error')?.message).toContain('pruned-cm');
  const rvOf = async (): Promise<string> => (await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'refused')).metadata.resourceVersion;
  const reconciles = async (): Promise<number> => (await f.op.metrics.reconciles.get()).values.reduce((sum, v) => sum + v.value, 0);
  // Let the write that said Forbidden land, then count: three more passes (retries) change nothing.
  await waitFor('the status to settle', async () => {
    const before = await rvOf();
    const count = await reconciles();
    await waitFor('another pass', async () => (await reconciles()) > count + 1);
    return (await rvOf()) === before;
  });
  const settled = await rvOf();
  for (let i = 0; i < 3; i++) {
    const count = await reconciles();
    f.op.operator.bundles.enqueue(`${ns}/refused`);
    await waitFor('another pass', async () => (await reconciles()) > count);
  }
  expect(await rvOf()).toBe(settled);
  expectKept(await env.client.get(f.t.configMap, ns, 'pruned-cm'), uid);
});
