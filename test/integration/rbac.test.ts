/**
 * The chart's RBAC suffices: the chart is installed with helm, then the
 * operator runs out of cluster with the flags of the chart's Deployment,
 * impersonating the chart's ServiceAccount (no nodes run pods here), and
 * reconciles, soft-deletes and collects garbage. Nothing it does may be
 * forbidden, and it may not do what the chart does not grant.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, parseDocument, stringify } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { Annotations } from '../../src/api/names.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { conditionOf, connect, createNamespace, expectKept, kubeconfigPath, resourceType, run, uidOf, uniqueName, waitFor, waitForGone, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

const chart = join(repoRoot(), 'charts', 'bundlesmith');

let env: TestEnv;
let bundles: ResourceType;
let configMaps: ResourceType;

beforeAll(async () => {
  env = await connect();
  bundles = await resourceType(env, 'smith.atlassian.com/v1', 'Bundle');
  configMaps = await resourceType(env, 'v1', 'ConfigMap');
});
afterAll(() => env.close());

/** Installs the chart and returns the operator flags its Deployment would run with (minus the HTTP addresses). */
async function installChart(release: string, namespace: string, set: string[]): Promise<{ args: string[]; serviceAccount: string }> {
  // The Bundle CRD is the global setup's; the release may not take it over.
  const setArgs = ['crds.install=false', ...set].flatMap((s) => ['--set', s]);
  const install = await run('helm', ['install', release, chart, '-n', namespace, ...setArgs]);
  if (install.code !== 0) throw new Error(`helm install failed: ${install.stderr}`);
  const rendered = await run('helm', ['get', 'manifest', release, '-n', namespace]);
  const deployment = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } } } | null)
    .find((d) => d?.kind === 'Deployment');
  const pod = deployment?.spec?.template.spec;
  if (!pod) throw new Error('the chart rendered no Deployment');
  const args = (pod.containers[0]?.args ?? []).filter((a) => !a.startsWith('--metrics-addr') && !a.startsWith('--health-addr'));
  return { args, serviceAccount: `system:serviceaccount:${namespace}:${pod.serviceAccountName}` };
}

function bundle(namespace: string, name: string, resources: { name: string; object: Record<string, unknown> }[]): Record<string, unknown> {
  return { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name, namespace }, spec: { resources: resources.map((r) => ({ name: r.name, spec: { object: r.object } })) } };
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

function forbiddenLines(operator: OperatorProcess): string[] {
  return readFileSync(operator.logFile, 'utf8')
    .split('\n')
    .filter((l) => /forbidden|\b403\b/i.test(l));
}

/**
 * A kubeconfig that authenticates as a ServiceAccount with a token from the
 * TokenRequest API, as the operator's pod would (impersonation cannot nest,
 * and lockdown impersonates each Bundle's ServiceAccount).
 */
async function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  const token = await run('kubectl', ['create', 'token', name, '-n', namespace, '--duration', '2h']);
  if (token.code !== 0) throw new Error(`kubectl create token failed: ${token.stderr}`);
  const config = parseDocument(readFileSync(kubeconfigPath(), 'utf8')).toJS() as { users: { name: string; user: Record<string, unknown> }[] };
  for (const u of config.users) u.user = { token: token.stdout.trim() };
  const path = join(tmpdir(), `bundlesmith-${namespace}-${name}.kubeconfig`);
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
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

/** `kubectl auth can-i`; a subresource goes in --subresource (kubectl reads "pods/exec" as pods named "exec"). */
async function canI(user: string, verb: string, resource: string, namespace?: string): Promise<boolean> {
  const [type = resource, subresource] = resource.split('/');
  const result = await run('kubectl', ['auth', 'can-i', verb, type, ...(subresource ? ['--subresource', subresource] : []), '--as', user, ...(namespace ? ['-n', namespace] : ['--all-namespaces'])]);
  return result.stdout.trim() === 'yes';
}

describe('the chart ServiceAccount, watching one namespace (gc.mode=bundles)', () => {
  let releaseNs: string;
  let watched: string;
  let user: string;
  let operator: OperatorProcess;

  beforeAll(async () => {
    releaseNs = await createNamespace(env, 'rbac-ops');
    watched = await createNamespace(env, 'rbac-team');
    const installed = await installChart(uniqueName('bs'), releaseNs, [`watchNamespace=${watched}`, 'gc.mode=bundles', 'leaderElection.leaseDurationSeconds=4']);
    user = installed.serviceAccount;
    operator = startOperatorProcess([...installed.args, '--impersonate', user]);
  });
  afterAll(async () => {
    expect(await operator.terminate()).toBe(0);
  });

  it('reconciles a Bundle and takes the Lease', async () => {
    await applyBundle(bundle(watched, 'app', [{ name: 'config', object: configMap('app-config') }, { name: 'other', object: configMap('app-other') }]));
    await waitReady(watched, 'app');
    const cm = await env.client.get(configMaps, watched, 'app-config');
    expect(cm.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'app', controller: true });
    const lease = await env.client.get(await resourceType(env, 'coordination.k8s.io/v1', 'Lease'), releaseNs, 'bundlesmith-leader');
    expect((lease.spec as { holderIdentity: string }).holderIdentity).toMatch(new RegExp(`-${operator.child.pid}$`));
  });

  it('soft-deletes an object that leaves the Bundle, then deletes it after its delay', async () => {
    await applyBundle(bundle(watched, 'soft', [{ name: 'keep', object: configMap('soft-keep') }, { name: 'go', object: configMap('soft-go', { [Annotations.deletionDelay]: '2s' }) }]));
    await waitReady(watched, 'soft');
    const keepUid = await uidOf(env, configMaps, watched, 'soft-keep');
    await applyBundle(bundle(watched, 'soft', [{ name: 'keep', object: configMap('soft-keep') }]));
    await waitFor('the deletionTimestamp stamp', async () => (await env.client.tryGet(configMaps, watched, 'soft-go'))?.metadata.annotations?.[Annotations.deletionTimestamp]);
    await waitForGone(env, configMaps, watched, 'soft-go');
    expectKept(await env.client.tryGet(configMaps, watched, 'soft-keep'), keepUid);
  });

  it('was never forbidden anything', () => {
    expect(forbiddenLines(operator)).toEqual([]);
  });

  it('may not touch other namespaces nor cluster-scoped objects', async () => {
    expect(await canI(user, 'create', 'configmaps', watched)).toBe(true);
    expect(await canI(user, 'create', 'configmaps', releaseNs)).toBe(false);
    expect(await canI(user, 'delete', 'namespaces')).toBe(false);
    expect(await canI(user, 'update', 'configmaps', watched)).toBe(false);
    expect(await canI(user, 'list', 'customresourcedefinitions.apiextensions.k8s.io')).toBe(true);
    expect(await canI(user, 'delete', 'customresourcedefinitions.apiextensions.k8s.io')).toBe(false);
  });

  it('cannot mint tokens, exec into pods or write admission webhooks', async () => {
    await expectNoClusterTakeover(user, watched);
  });
});

describe('the chart ServiceAccount, cluster-wide (gc.mode=cluster)', () => {
  let releaseNs: string;
  let ns: string;
  let user: string;
  let operator: OperatorProcess;

  beforeAll(async () => {
    releaseNs = await createNamespace(env, 'rbac-ops');
    ns = await createNamespace(env, 'rbac-gc');
    const installed = await installChart(uniqueName('bs'), releaseNs, ['gc.mode=cluster', 'leaderElection.leaseDurationSeconds=4']);
    user = installed.serviceAccount;
    // Cluster-wide rights, but other test files' Bundles are not ours to reconcile.
    operator = startOperatorProcess([...installed.args, '--namespace', ns, '--impersonate', user]);
  });
  afterAll(async () => {
    expect(await operator.terminate()).toBe(0);
  });

  it('reconciles a Bundle', async () => {
    await applyBundle(bundle(ns, 'app', [{ name: 'config', object: configMap('gc-app-config') }]));
    await waitReady(ns, 'app');
  });

  it('collects a dependent whose owner is gone', async () => {
    const owner = await env.client.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: ns } });
    await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dependent', namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] },
    });
    await env.client.delete(configMaps, ns, 'owner', { uid: owner.metadata.uid });
    await waitForGone(env, configMaps, ns, 'dependent');
  });

  it('was never forbidden anything', () => {
    expect(forbiddenLines(operator)).toEqual([]);
  });

  it('has the collector rights cluster-wide and still no update or escalation rights', async () => {
    expect(await canI(user, 'delete', 'configmaps', releaseNs)).toBe(true);
    expect(await canI(user, 'delete', 'bundles.smith.atlassian.com', releaseNs)).toBe(true);
    expect(await canI(user, 'list', 'validatingwebhookconfigurations.admissionregistration.k8s.io')).toBe(true);
    expect(await canI(user, 'update', 'configmaps', ns)).toBe(false);
  });

  it('cannot mint tokens, exec into pods or write admission webhooks', async () => {
    await expectNoClusterTakeover(user, ns);
  });
});

describe('the chart in lockdown (tenancy.defaultServiceAccount), gc.mode=bundles', () => {
  let releaseNs: string;
  let watched: string;
  let user: string;
  let operator: OperatorProcess;

  beforeAll(async () => {
    releaseNs = await createNamespace(env, 'rbac-ops');
    watched = await createNamespace(env, 'rbac-tenant');
    const installed = await installChart(uniqueName('bs'), releaseNs, [`watchNamespace=${watched}`, 'gc.mode=bundles', 'tenancy.defaultServiceAccount=bundles', 'leaderElection.leaseDurationSeconds=4']);
    user = installed.serviceAccount;
    // The tenant's account: ConfigMaps in its namespace, nothing else.
    const as = { fieldManager: 'test-admin' };
    await env.client.apply(await resourceType(env, 'v1', 'ServiceAccount'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bundles', namespace: watched } }, as);
    await env.client.apply(await resourceType(env, 'rbac.authorization.k8s.io/v1', 'Role'), {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'bundles', namespace: watched },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] }],
    }, as);
    await env.client.apply(await resourceType(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding'), {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'bundles', namespace: watched },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bundles' },
      subjects: [{ kind: 'ServiceAccount', name: 'bundles', namespace: watched }],
    }, as);
    const saName = user.split(':').pop() ?? '';
    operator = startOperatorProcess(installed.args, {}, await serviceAccountKubeconfig(releaseNs, saName));
  });
  afterAll(async () => {
    expect(await operator.terminate()).toBe(0);
  });

  it('reconciles a Bundle as the tenant account', async () => {
    await applyBundle(bundle(watched, 'app', [{ name: 'config', object: configMap('app-config') }]));
    await waitReady(watched, 'app');
    const cm = await env.client.get(configMaps, watched, 'app-config');
    expect(cm.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Bundle', name: 'app', controller: true });
    // The write was the tenant's: the API server recorded the operator's field manager under that identity only
    // because the impersonated request went through (the operator itself may not create ConfigMaps here).
    expect(await canI(user, 'create', 'configmaps', watched)).toBe(false);
  });

  it('soft-deletes an object that leaves the Bundle, then deletes it after its delay, as the tenant account', async () => {
    await applyBundle(bundle(watched, 'soft', [{ name: 'keep', object: configMap('soft-keep') }, { name: 'go', object: configMap('soft-go', { [Annotations.deletionDelay]: '2s' }) }]));
    await waitReady(watched, 'soft');
    const keepUid = await uidOf(env, configMaps, watched, 'soft-keep');
    await applyBundle(bundle(watched, 'soft', [{ name: 'keep', object: configMap('soft-keep') }]));
    await waitFor('the deletionTimestamp stamp', async () => (await env.client.tryGet(configMaps, watched, 'soft-go'))?.metadata.annotations?.[Annotations.deletionTimestamp]);
    await waitForGone(env, configMaps, watched, 'soft-go');
    expectKept(await env.client.tryGet(configMaps, watched, 'soft-keep'), keepUid);
  });

  it('a Secret the tenant account may not write is refused: Forbidden, not written', async () => {
    await applyBundle(bundle(watched, 'secretive', [{ name: 's', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'not-yours' }, stringData: { k: 'v' } } }]));
    await waitFor('Forbidden on the Bundle', async () => conditionOf(await env.client.tryGet(bundles, watched, 'secretive'), 'Error')?.reason === 'Forbidden');
    expect(await env.client.tryGet(await resourceType(env, 'v1', 'Secret'), watched, 'not-yours')).toBeUndefined();
  });

  it('collects the objects of a deleted Bundle (the collector acts with the operator identity)', async () => {
    await applyBundle(bundle(watched, 'doomed', [{ name: 'a', object: configMap('doomed-a') }]));
    await waitReady(watched, 'doomed');
    const live = await env.client.get(bundles, watched, 'doomed');
    await env.client.delete(bundles, watched, 'doomed', { uid: live.metadata.uid });
    await waitForGone(env, configMaps, watched, 'doomed-a');
  });

  it('has no write rights on Bundle objects but the collector ones, and may impersonate only service accounts', async () => {
    expect(await canI(user, 'create', 'configmaps', watched)).toBe(false);
    expect(await canI(user, 'delete', 'configmaps', watched)).toBe(true);
    expect(await canI(user, 'impersonate', 'serviceaccounts', watched)).toBe(true);
    expect(await canI(user, 'impersonate', 'users')).toBe(false);
    expect(await canI(user, 'impersonate', 'groups')).toBe(false);
    await expectNoClusterTakeover(user, watched);
  });
});
