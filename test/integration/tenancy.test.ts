/**
 * A Bundle can do only what its own identity may do. The author's
 * ServiceAccount may write ConfigMaps, Deployments (and RoleBindings) in its
 * namespace, nothing else. Through the Bundle it tries what the operator's own rights
 * would allow: adopting an orphan Secret and copying its password into a
 * ConfigMap, and binding itself to cluster-admin. The API server, judging
 * the impersonated account, refuses both; the Bundle says Forbidden (naming
 * the account, the verb and the resource), nothing is written, nothing is
 * deleted. Once with spec.serviceAccountName, once with the operator's
 * lockdown default (--default-service-account).
 */
import { Labels, Reasons } from '../../src/api/names.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import {
  configMap,
  eventsFor,
  getBundle,
  resourceCondition,
  types,
  waitForBundle,
  waitForReady,
  type KnownTypes,
  type ResourceFixture,
} from './bundles.js';
import { conditionOf, connect, createNamespace, expectKept, resourceType, uidOf, waitFor, waitForGone, type TestEnv } from './harness.js';
import { startOperator, type InProcessOperator } from './operator.js';
import { BUNDLE_RESOURCE_TYPE } from './bundles.js';

const AUTHOR = 'author';
const PASSWORD = 'tenancy-test-password-7f3a9c';

let env: TestEnv;
let t: KnownTypes;
let rbac: { role: ResourceType; roleBinding: ResourceType; serviceAccount: ResourceType };

beforeAll(async () => {
  env = await connect();
  t = await types(env);
  rbac = {
    role: await resourceType(env, 'rbac.authorization.k8s.io/v1', 'Role'),
    roleBinding: await resourceType(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding'),
    serviceAccount: await resourceType(env, 'v1', 'ServiceAccount'),
  };
});
afterAll(() => env.close());

/** A namespace with the author's ServiceAccount (ConfigMaps, Deployments and RoleBindings only) and an orphan Secret. */
async function tenantNamespace(prefix: string): Promise<string> {
  const ns = await createNamespace(env, prefix);
  const as = { fieldManager: 'test-admin' };
  await env.client.apply(rbac.serviceAccount, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: AUTHOR, namespace: ns } }, as);
  await env.client.apply(
    rbac.role,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: AUTHOR, namespace: ns },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['rolebindings'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
        { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      ],
    },
    as,
  );
  await env.client.apply(
    rbac.roleBinding,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: AUTHOR, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: AUTHOR },
      subjects: [{ kind: 'ServiceAccount', name: AUTHOR, namespace: ns }],
    },
    as,
  );
  await env.client.apply(
    t.secret,
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-creds', namespace: ns }, stringData: { password: PASSWORD } },
    as,
  );
  return ns;
}

function withIdentity(manifest: Record<string, unknown>, serviceAccountName: string | undefined): Record<string, unknown> {
  if (serviceAccountName === undefined) return manifest;
  const spec = manifest.spec as Record<string, unknown>;
  return { ...manifest, spec: { ...spec, serviceAccountName } };
}

async function applyAs(ns: string, name: string, resources: ResourceFixture[], serviceAccountName: string | undefined): Promise<void> {
  const manifest = withIdentity(
    {
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name, namespace: ns },
      spec: {
        resources: resources.map((r) => ({
          name: r.name,
          ...(r.references ? { references: r.references } : {}),
          spec: { object: r.object },
        })),
      },
    },
    serviceAccountName,
  );
  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
}

const exfiltration: ResourceFixture[] = [
  { name: 'creds', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-creds' }, stringData: { password: PASSWORD } } },
  { name: 'leak', references: [{ name: 'pw', resource: 'creds', path: 'data.password' }], object: configMap('leak', { pw: '!{pw}' }) },
];

const escalation: ResourceFixture[] = [
  {
    name: 'admin',
    object: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'author-is-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: AUTHOR }],
    },
  },
];

function forbiddenFor(bundle: KubeObject, resource: string, ns: string, verbAndResource: RegExp): void {
  const error = resourceCondition(bundle, resource, 'Error');
  expect(error?.status).toBe('True');
  expect(error?.reason).toBe(Reasons.Forbidden);
  expect(error?.message).toContain(`system:serviceaccount:${ns}:${AUTHOR}`);
  expect(error?.message).toMatch(verbAndResource);
  expect(conditionOf(bundle, 'Error')?.status).toBe('True');
  expect(conditionOf(bundle, 'Error')?.reason).toBe(Reasons.Forbidden);
  expect(conditionOf(bundle, 'Ready')?.status).toBe('False');
}

/** Exfiltration and escalation, refused; then what the author may do, done (apply, prune) as the author. */
function tenancyCases(label: string, setup: () => { ns: () => string; account: string | undefined }): void {
  describe(label, () => {
    test('an orphan Secret the identity may not touch is neither adopted nor read: Forbidden, nothing written', async () => {
      const { ns, account } = setup();
      const secretUid = await uidOf(env, t.secret, ns(), 'db-creds');
      await applyAs(ns(), 'exfiltrate', exfiltration, account);
      const bundle = await waitForBundle(
        env,
        ns(),
        'exfiltrate',
        'the Secret forbidden',
        (b) => resourceCondition(b, 'creds', 'Error')?.reason === Reasons.Forbidden,
      );
      forbiddenFor(bundle, 'creds', ns(), /cannot (get|patch) resource "secrets"/);
      // The ConfigMap waits for a dependency it may not read: never written, so the password is nowhere.
      expect(await env.client.tryGet(t.configMap, ns(), 'leak')).toBeUndefined();
      const secret = await env.client.get(t.secret, ns(), 'db-creds');
      expectKept(secret, secretUid);
      expect(secret.metadata.ownerReferences ?? []).toEqual([]);
      const events = await eventsFor(env, ns(), 'exfiltrate');
      expect(events.filter((e) => e.type === 'Warning').length).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(bundle.status)).not.toContain(PASSWORD);
      expect(JSON.stringify(bundle.status)).not.toContain(Buffer.from(PASSWORD).toString('base64'));
    });

    test("a workload whose envRefHash would read a Secret the identity may not read: that workload's error, nothing hashed or written", async () => {
      const { ns, account } = setup();
      const reader = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'hash-reader' },
        spec: {
          selector: { matchLabels: { app: 'r' } },
          template: {
            metadata: { labels: { app: 'r' } },
            spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', envFrom: [{ secretRef: { name: 'db-creds' } }] }] },
          },
        },
      };
      await applyAs(ns(), 'hash-secret', [{ name: 'app', object: reader }], account);
      const bundle = await waitForBundle(
        env,
        ns(),
        'hash-secret',
        'the read refused',
        (b) => resourceCondition(b, 'app', 'Error')?.status === 'True',
      );
      expect(resourceCondition(bundle, 'app', 'Error')?.message).toMatch(
        /cannot read Secret "db-creds" for the pod template's envRefHash: .*forbidden/,
      );
      expect(resourceCondition(bundle, 'app', 'Error')?.message).toContain(`system:serviceaccount:${ns()}:${AUTHOR}`);
      expect(await env.client.tryGet(t.deployment, ns(), 'hash-reader')).toBeUndefined();
    });

    test('a RoleBinding to a ClusterRole the identity does not hold is refused by the API server: Forbidden', async () => {
      const { ns, account } = setup();
      await applyAs(ns(), 'escalate', escalation, account);
      const bundle = await waitForBundle(
        env,
        ns(),
        'escalate',
        'the RoleBinding forbidden',
        (b) => resourceCondition(b, 'admin', 'Error')?.reason === Reasons.Forbidden,
      );
      forbiddenFor(bundle, 'admin', ns(), /attempting to grant RBAC permissions not currently held|cannot bind/);
      expect(await env.client.tryGet(rbac.roleBinding, ns(), 'author-is-admin')).toBeUndefined();
    });

    test('what the identity may do is done as the identity: applied, and pruned when it leaves the Bundle', async () => {
      const { ns, account } = setup();
      await applyAs(
        ns(),
        'allowed',
        [
          { name: 'a', object: configMap('allowed-a') },
          { name: 'b', object: configMap('allowed-b') },
        ],
        account,
      );
      await waitForReady(env, ns(), 'allowed');
      const a = await env.client.get(t.configMap, ns(), 'allowed-a');
      const keptUid = a.metadata.uid;
      // The apply was the author's (managedFields record the operator's field manager, the audit trail the user).
      expect(a.metadata.ownerReferences?.[0]?.kind).toBe('Bundle');
      await applyAs(ns(), 'allowed', [{ name: 'a', object: configMap('allowed-a') }], account);
      await waitForGone(env, t.configMap, ns(), 'allowed-b');
      expectKept(await env.client.get(t.configMap, ns(), 'allowed-a'), keptUid);
    });

    test('a prune the identity may not make keeps the object and says Forbidden', async () => {
      const { ns, account } = setup();
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'noprune-secret' }, stringData: { k: 'v' } };
      await applyAs(
        ns(),
        'noprune',
        [
          { name: 'cm', object: configMap('noprune-cm') },
          { name: 's', object: secret },
        ],
        account,
      );
      const listed = await waitForBundle(
        env,
        ns(),
        'noprune',
        'the Secret forbidden',
        (b) => resourceCondition(b, 's', 'Error')?.reason === Reasons.Forbidden,
      );
      // Someone with more rights hands the Secret to the Bundle, as a single-tenant operator would have applied it.
      await env.client.apply(
        t.secret,
        {
          ...secret,
          metadata: {
            name: 'noprune-secret',
            namespace: ns(),
            labels: { [Labels.managed]: 'true' },
            ownerReferences: [
              {
                apiVersion: 'smith.atlassian.com/v1',
                kind: 'Bundle',
                name: 'noprune',
                uid: listed.metadata.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
        },
        { fieldManager: 'test-admin' },
      );
      const secretUid = await uidOf(env, t.secret, ns(), 'noprune-secret');
      const cmUid = await uidOf(env, t.configMap, ns(), 'noprune-cm');
      // The Secret leaves the Bundle: deleting it is the author's to do, and the author may not.
      await applyAs(ns(), 'noprune', [{ name: 'cm', object: configMap('noprune-cm') }], account);
      const bundle = await waitForBundle(
        env,
        ns(),
        'noprune',
        'the prune forbidden',
        (b) => conditionOf(b, 'Error')?.reason === Reasons.Forbidden && /delete/.test(conditionOf(b, 'Error')?.message ?? ''),
      );
      expect(conditionOf(bundle, 'Error')?.message).toContain(`system:serviceaccount:${ns()}:${AUTHOR}`);
      expectKept(await env.client.get(t.secret, ns(), 'noprune-secret'), secretUid);
      expectKept(await env.client.get(t.configMap, ns(), 'noprune-cm'), cmUid);
    });
  });
}

describe('spec.serviceAccountName', () => {
  let ns: string;
  let op: InProcessOperator;
  beforeAll(async () => {
    ns = await tenantNamespace('tenancy-spec');
    op = await startOperator({ namespace: ns });
  });
  afterAll(async () => {
    await op.stop();
  });
  tenancyCases('the Bundle names its ServiceAccount', () => ({ ns: () => ns, account: AUTHOR }));

  test('a Bundle without serviceAccountName, with no lockdown default, still acts with the operator rights (single-tenant clusters)', async () => {
    await applyAs(
      ns,
      'operator-rights',
      [{ name: 's', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'single-tenant' }, stringData: { k: 'v' } } }],
      undefined,
    );
    await waitForReady(env, ns, 'operator-rights');
    expect((await env.client.get(t.secret, ns, 'single-tenant')).metadata.ownerReferences?.[0]?.kind).toBe('Bundle');
  });
});

describe('--default-service-account (lockdown)', () => {
  let ns: string;
  let op: InProcessOperator;
  beforeAll(async () => {
    ns = await tenantNamespace('tenancy-lockdown');
    op = await startOperator({ namespace: ns, defaultServiceAccount: AUTHOR });
  });
  afterAll(async () => {
    await op.stop();
  });
  tenancyCases('a Bundle without serviceAccountName acts as the default account', () => ({ ns: () => ns, account: undefined }));

  test('a Bundle whose account does not exist gets nothing written: every request is refused for it', async () => {
    await applyAs(ns, 'ghost', [{ name: 'cm', object: configMap('ghost-cm') }], 'no-such-account');
    const bundle = await waitForBundle(env, ns, 'ghost', 'forbidden', (b) => conditionOf(b, 'Error')?.reason === Reasons.Forbidden);
    expect(conditionOf(bundle, 'Error')?.message).toContain(`system:serviceaccount:${ns}:no-such-account`);
    expect(await env.client.tryGet(t.configMap, ns, 'ghost-cm')).toBeUndefined();
    expect(await getBundle(env, ns, 'ghost')).toBeDefined();
  });
});

test('a Bundle with an identity is deleted: its finalizer works as that identity, and its objects go', async () => {
  const ns = await tenantNamespace('tenancy-delete');
  const op = await startOperator({ namespace: ns });
  try {
    await applyAs(ns, 'owned', [{ name: 'cm', object: configMap('owned-cm') }], AUTHOR);
    await waitForReady(env, ns, 'owned');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'owned', {
      uid: (await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'owned')).metadata.uid,
    });
    await waitFor('the Bundle to be gone', async () => (await getBundle(env, ns, 'owned')) === undefined);
    await waitForGone(env, t.configMap, ns, 'owned-cm');
  } finally {
    await op.stop();
  }
});
