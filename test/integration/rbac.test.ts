/**
 * The chart's RBAC suffices: the chart is installed with helm, then the
 * operator runs out of cluster with the flags of the chart's Deployment,
 * impersonating the chart's ServiceAccount (no nodes run pods here), and
 * reconciles, soft-deletes and collects garbage. Nothing it does may be
 * forbidden, and it may not do what the chart does not grant.
 */
import { Annotations } from '../../src/api/names.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { canI, forbiddenLines, installChart, serviceAccountKubeconfig } from './chart.js';
import {
  conditionOf,
  connect,
  createNamespace,
  expectKept,
  resourceType,
  run,
  uidOf,
  uniqueName,
  waitFor,
  waitForGone,
  type TestEnv,
} from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

let env: TestEnv;
let bundles: ResourceType;
let configMaps: ResourceType;

beforeAll(async () => {
  env = await connect();
  bundles = await resourceType(env, 'smith.atlassian.com/v1', 'Bundle');
  configMaps = await resourceType(env, 'v1', 'ConfigMap');
});
afterAll(() => env.close());

/** Installs the chart and returns the operator flags its (one) Deployment would run with, and its ServiceAccount as a user. */
async function installOne(release: string, namespace: string, set: string[]): Promise<{ args: string[]; serviceAccount: string }> {
  const installed = await installChart(release, namespace, set);
  return { args: installed.deployments[0]?.args ?? [], serviceAccount: installed.user };
}

function bundle(namespace: string, name: string, resources: { name: string; object: Record<string, unknown> }[]): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace },
    spec: { resources: resources.map((r) => ({ name: r.name, spec: { object: r.object } })) },
  };
}

function configMap(name: string, annotations: Record<string, string> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, annotations }, data: { key: name } };
}

async function applyBundle(manifest: Record<string, unknown>): Promise<void> {
  const result = await run('kubectl', ['apply', '--server-side', '-f', '-'], { input: JSON.stringify(manifest) });
  if (result.code !== 0) throw new Error(`kubectl apply failed: ${result.stderr}`);
}

async function waitReady(namespace: string, name: string): Promise<KubeObject> {
  return await waitFor(`Bundle ${namespace}/${name} to be Ready`, async () => {
    const live = await env.client.tryGet(bundles, namespace, name);
    return conditionOf(live, 'Ready')?.status === 'True' ? live : undefined;
  });
}

/** What no mode may give the operator: minting tokens, exec into pods, rewriting admission. */
async function expectNoClusterTakeover(user: string, namespace: string): Promise<void> {
  expect(await canI(user, 'create', 'serviceaccounts/token', namespace)).toBe(false);
  expect(await canI(user, 'create', 'pods/exec', namespace)).toBe(false);
  expect(await canI(user, 'get', 'pods/exec', namespace)).toBe(false);
  expect(await canI(user, 'get', 'nodes/proxy')).toBe(false);
  for (const verb of ['create', 'patch', 'update', 'delete']) {
    expect(await canI(user, verb, 'validatingwebhookconfigurations.admissionregistration.k8s.io')).toBe(false);
    expect(await canI(user, verb, 'mutatingwebhookconfigurations.admissionregistration.k8s.io')).toBe(false);
  }
  expect(await canI(user, 'escalate', 'clusterroles.rbac.authorization.k8s.io')).toBe(false);
  expect(await canI(user, 'bind', 'clusterroles.rbac.authorization.k8s.io')).toBe(false);
}

/** One describe block's chart release and the operator running with its flags. */
interface ChartOperator {
  releaseNs: string;
  /** The namespace the Bundles of the block live in. */
  ns: string;
  /** The chart's ServiceAccount, as a user name. */
  user: string;
  operator: OperatorProcess;
}

/**
 * Before the block's tests: a release namespace and a namespace for the
 * Bundles, the chart installed with `values` (and a short Lease), and the
 * operator started by `start` with the chart Deployment's flags. After them,
 * the operator must exit 0.
 */
function chartOperator(
  nsPrefix: string,
  values: (ns: string) => string[],
  start: (c: Omit<ChartOperator, 'operator'>, args: string[]) => Promise<OperatorProcess>,
): ChartOperator {
  const c = {} as ChartOperator;
  beforeAll(async () => {
    c.releaseNs = await createNamespace(env, 'rbac-ops');
    c.ns = await createNamespace(env, nsPrefix);
    const installed = await installOne(uniqueName('bs'), c.releaseNs, [...values(c.ns), 'leaderElection.leaseDurationSeconds=4']);
    c.user = installed.serviceAccount;
    c.operator = await start(c, installed.args);
  });
  afterAll(async () => {
    expect(await c.operator.terminate()).toBe(0);
  });
  return c;
}

/** Bundle `app` listing ConfigMaps `names` becomes Ready, and controls the first. */
async function expectReconciled(ns: string, names: string[]): Promise<void> {
  await applyBundle(
    bundle(
      ns,
      'app',
      names.map((n, i) => ({ name: `config-${i}`, object: configMap(n) })),
    ),
  );
  await waitReady(ns, 'app');
  const cm = await env.client.get(configMaps, ns, names[0] ?? '');
  expect(cm.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'app', controller: true });
}

/** An object with a 2 s deletionDelay leaves Bundle `soft`: stamped, then deleted; its sibling is kept. */
async function expectSoftDeleted(ns: string): Promise<void> {
  await applyBundle(
    bundle(ns, 'soft', [
      { name: 'keep', object: configMap('soft-keep') },
      { name: 'go', object: configMap('soft-go', { [Annotations.deletionDelay]: '2s' }) },
    ]),
  );
  await waitReady(ns, 'soft');
  const keepUid = await uidOf(env, configMaps, ns, 'soft-keep');
  await applyBundle(bundle(ns, 'soft', [{ name: 'keep', object: configMap('soft-keep') }]));
  await waitFor(
    'the deletionTimestamp stamp',
    async () => (await env.client.tryGet(configMaps, ns, 'soft-go'))?.metadata.annotations?.[Annotations.deletionTimestamp],
  );
  await waitForGone(env, configMaps, ns, 'soft-go');
  expectKept(await env.client.tryGet(configMaps, ns, 'soft-keep'), keepUid);
}

describe('the chart ServiceAccount, watching one namespace (gc.mode=bundles)', () => {
  const c = chartOperator(
    'rbac-team',
    (ns) => [`watchNamespace=${ns}`, 'gc.mode=bundles'],
    (release, args) => Promise.resolve(startOperatorProcess([...args, '--impersonate', release.user])),
  );

  it('reconciles a Bundle and takes the Lease', async () => {
    await expectReconciled(c.ns, ['app-config', 'app-other']);
    const lease = await env.client.get(await resourceType(env, 'coordination.k8s.io/v1', 'Lease'), c.releaseNs, 'bundlesmith-leader');
    expect((lease.spec as { holderIdentity: string }).holderIdentity).toMatch(new RegExp(`-${c.operator.child.pid}$`));
  });

  it('soft-deletes an object that leaves the Bundle, then deletes it after its delay', async () => {
    await expectSoftDeleted(c.ns);
  });

  it('was never forbidden anything', () => {
    expect(forbiddenLines(c.operator)).toEqual([]);
  });

  it('may not touch other namespaces nor cluster-scoped objects', async () => {
    expect(await canI(c.user, 'create', 'configmaps', c.ns)).toBe(true);
    // In the release namespace only the release key and the release records (ConfigMaps beside it).
    expect(await canI(c.user, 'create', 'configmaps', c.releaseNs)).toBe(true);
    expect(await canI(c.user, 'update', 'configmaps', c.releaseNs)).toBe(false);
    expect(await canI(c.user, 'create', 'services', c.releaseNs)).toBe(false);
    expect(await canI(c.user, 'delete', 'namespaces')).toBe(false);
    expect(await canI(c.user, 'update', 'configmaps', c.ns)).toBe(false);
    expect(await canI(c.user, 'list', 'customresourcedefinitions.apiextensions.k8s.io')).toBe(true);
    expect(await canI(c.user, 'delete', 'customresourcedefinitions.apiextensions.k8s.io')).toBe(false);
  });

  it('cannot mint tokens, exec into pods or write admission webhooks', async () => {
    await expectNoClusterTakeover(c.user, c.ns);
  });
});

describe('the chart ServiceAccount, cluster-wide (gc.mode=cluster)', () => {
  // Cluster-wide rights, but other test files' Bundles are not ours to reconcile.
  const c = chartOperator(
    'rbac-gc',
    () => ['gc.mode=cluster'],
    (release, args) => Promise.resolve(startOperatorProcess([...args, '--namespace', release.ns, '--impersonate', release.user])),
  );

  it('reconciles a Bundle', async () => {
    await expectReconciled(c.ns, ['gc-app-config']);
  });

  it('collects a dependent whose owner is gone', async () => {
    const owner = await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'owner', namespace: c.ns },
    });
    await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'dependent',
        namespace: c.ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
      },
    });
    await env.client.delete(configMaps, c.ns, 'owner', { uid: owner.metadata.uid });
    await waitForGone(env, configMaps, c.ns, 'dependent');
  });

  it('was never forbidden anything', () => {
    expect(forbiddenLines(c.operator)).toEqual([]);
  });

  it('has the collector rights cluster-wide and still no update or escalation rights', async () => {
    expect(await canI(c.user, 'delete', 'configmaps', c.releaseNs)).toBe(true);
    expect(await canI(c.user, 'delete', 'bundles.smith.atlassian.com', c.releaseNs)).toBe(true);
    expect(await canI(c.user, 'list', 'validatingwebhookconfigurations.admissionregistration.k8s.io')).toBe(true);
    expect(await canI(c.user, 'update', 'configmaps', c.ns)).toBe(false);
  });

  it('cannot mint tokens, exec into pods or write admission webhooks', async () => {
    await expectNoClusterTakeover(c.user, c.ns);
  });
});

describe('the chart in lockdown (tenancy.defaultServiceAccount), gc.mode=bundles', () => {
  const c = chartOperator(
    'rbac-tenant',
    (ns) => [`watchNamespace=${ns}`, 'gc.mode=bundles', 'tenancy.defaultServiceAccount=bundles'],
    async (release, args) => {
      // The tenant's account: ConfigMaps in its namespace, nothing else.
      const as = { fieldManager: 'test-admin' };
      await env.client.apply(
        await resourceType(env, 'v1', 'ServiceAccount'),
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bundles', namespace: release.ns } },
        as,
      );
      await env.client.apply(
        await resourceType(env, 'rbac.authorization.k8s.io/v1', 'Role'),
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'bundles', namespace: release.ns },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] }],
        },
        as,
      );
      await env.client.apply(
        await resourceType(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding'),
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'bundles', namespace: release.ns },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bundles' },
          subjects: [{ kind: 'ServiceAccount', name: 'bundles', namespace: release.ns }],
        },
        as,
      );
      const saName = release.user.split(':').pop() ?? '';
      return startOperatorProcess(args, {}, await serviceAccountKubeconfig(release.releaseNs, saName));
    },
  );

  it('reconciles a Bundle as the tenant account', async () => {
    await expectReconciled(c.ns, ['app-config']);
    // The write was the tenant's: the API server recorded the operator's field manager under that identity only
    // because the impersonated request went through (the operator itself may not create ConfigMaps here).
    expect(await canI(c.user, 'create', 'configmaps', c.ns)).toBe(false);
  });

  it('soft-deletes an object that leaves the Bundle, then deletes it after its delay, as the tenant account', async () => {
    await expectSoftDeleted(c.ns);
  });

  it('a Secret the tenant account may not write is refused: Forbidden, not written', async () => {
    await applyBundle(
      bundle(c.ns, 'secretive', [
        { name: 's', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'not-yours' }, stringData: { k: 'v' } } },
      ]),
    );
    await waitFor(
      'Forbidden on the Bundle',
      async () => conditionOf(await env.client.tryGet(bundles, c.ns, 'secretive'), 'Error')?.reason === 'Forbidden',
    );
    expect(await env.client.tryGet(await resourceType(env, 'v1', 'Secret'), c.ns, 'not-yours')).toBeUndefined();
  });

  it('collects the objects of a deleted Bundle (the collector acts with the operator identity)', async () => {
    await applyBundle(bundle(c.ns, 'doomed', [{ name: 'a', object: configMap('doomed-a') }]));
    await waitReady(c.ns, 'doomed');
    const live = await env.client.get(bundles, c.ns, 'doomed');
    await env.client.delete(bundles, c.ns, 'doomed', { uid: live.metadata.uid });
    await waitForGone(env, configMaps, c.ns, 'doomed-a');
  });

  it('has no write rights on Bundle objects but the collector ones, and may impersonate only service accounts', async () => {
    expect(await canI(c.user, 'create', 'configmaps', c.ns)).toBe(false);
    expect(await canI(c.user, 'delete', 'configmaps', c.ns)).toBe(true);
    expect(await canI(c.user, 'impersonate', 'serviceaccounts', c.ns)).toBe(true);
    expect(await canI(c.user, 'impersonate', 'users')).toBe(false);
    expect(await canI(c.user, 'impersonate', 'groups')).toBe(false);
    await expectNoClusterTakeover(c.user, c.ns);
  });
});
