/**
 * The Helm chart: lint, what it renders for each mode, and install / upgrade /
 * uninstall with the real helm binary against the test apiserver (no nodes
 * run here, so the Deployment's pods never start; rbac.test.ts runs the
 * operator as the chart's ServiceAccount instead).
 */
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { connect, createNamespace, resourceType, run, uniqueName, waitFor, type TestEnv } from './harness.js';

const chart = join(repoRoot(), 'charts', 'bundlesmith');

interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
  spec?: Record<string, unknown>;
}

async function template(release: string, namespace: string, set: string[] = []): Promise<Rendered[]> {
  const result = await run('helm', ['template', release, chart, '-n', namespace, ...set.flatMap((s) => ['--set', s])]);
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJS() as Rendered | null)
    .filter((d): d is Rendered => d !== null);
}

function find(docs: Rendered[], kind: string, name: string): Rendered | undefined {
  return docs.find((d) => d.kind === kind && d.metadata.name === name);
}

function container(docs: Rendered[], name: string): { args: string[]; securityContext: Record<string, unknown> } {
  const deployment = find(docs, 'Deployment', name);
  const containers = (deployment?.spec as { template: { spec: { containers: { args: string[]; securityContext: Record<string, unknown> }[] } } } | undefined)?.template.spec.containers;
  const first = containers?.[0];
  if (!first) throw new Error(`no container in Deployment ${name}`);
  return first;
}

const wildcardRule = (doc: Rendered | undefined) => doc?.rules?.find((r) => r.apiGroups.includes('*') && r.resources.includes('*'));

let env: TestEnv;
beforeAll(async () => {
  env = await connect();
});
afterAll(() => env.close());

describe('helm chart', () => {
  it('passes helm lint --strict, with default and non-default values', async () => {
    for (const set of [[], ['gc.mode=off', 'watchNamespace=team-a', 'replicaCount=1', 'leaderElection.enabled=false']]) {
      const result = await run('helm', ['lint', '--strict', chart, ...set.flatMap((s) => ['--set', s])]);
      expect({ set, code: result.code, out: result.stdout + result.stderr }).toMatchObject({ set, code: 0 });
    }
  });

  it('renders a leader-elected, non-root, read-only Deployment with the flags of its values', async () => {
    const docs = await template('r1', 'ops', ['logLevel=debug', 'gc.mode=bundles']);
    const c = container(docs, 'r1-bundlesmith');
    expect(c.args).toEqual(
      expect.arrayContaining(['--leader-elect=true', '--leader-election-namespace=ops', '--leader-election-id=bundlesmith-leader', '--gc=bundles', '--log-level=debug', '--metrics-addr=:8080', '--health-addr=:8081']),
    );
    expect(c.args.some((a) => a.startsWith('--namespace'))).toBe(false);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    const pod = (find(docs, 'Deployment', 'r1-bundlesmith')?.spec as { replicas: number; template: { spec: { securityContext: Record<string, unknown>; serviceAccountName: string } } });
    expect(pod.replicas).toBe(2);
    expect(pod.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.template.spec.serviceAccountName).toBe('r1-bundlesmith');
    expect(find(docs, 'Service', 'r1-bundlesmith-metrics')).toBeDefined();
    expect(find(docs, 'Role', 'r1-bundlesmith-leader-election')?.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['bundlesmith-leader'], verbs: ['get', 'update'] },
    ]);
  });

  it.each([
    ['cluster', '', { gcRole: true, clusterWildcard: true, namespaceRole: false }],
    ['bundles', '', { gcRole: false, clusterWildcard: true, namespaceRole: false }],
    ['off', 'team-a', { gcRole: false, clusterWildcard: false, namespaceRole: true }],
    ['cluster', 'team-a', { gcRole: true, clusterWildcard: false, namespaceRole: true }],
  ])('grants cluster-wide GC rights only for gc.mode=cluster (gc.mode=%s, watchNamespace=%j)', async (mode, watchNamespace, want) => {
    const docs = await template('r2', 'ops', [`gc.mode=${mode}`, `watchNamespace=${watchNamespace}`]);
    expect(find(docs, 'ClusterRole', 'r2-bundlesmith-gc') !== undefined).toBe(want.gcRole);
    expect(find(docs, 'ClusterRoleBinding', 'r2-bundlesmith-gc') !== undefined).toBe(want.gcRole);
    expect(wildcardRule(find(docs, 'ClusterRole', 'r2-bundlesmith')) !== undefined).toBe(want.clusterWildcard);
    const role = find(docs, 'Role', 'r2-bundlesmith');
    expect(role !== undefined).toBe(want.namespaceRole);
    if (want.namespaceRole) expect(role?.metadata.namespace).toBe('team-a');
    // The controller never needs update or escalation verbs on arbitrary objects.
    for (const doc of docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role')) {
      expect(wildcardRule(doc)?.verbs ?? []).not.toEqual(expect.arrayContaining(['*']));
      expect(wildcardRule(doc)?.verbs ?? []).not.toContain('update');
    }
  });

  it('refuses several replicas without leader election', async () => {
    const result = await run('helm', ['template', 'r3', chart, '--set', 'leaderElection.enabled=false']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/replicaCount > 1 needs leaderElection.enabled=true/);
  });

  it('rejects an unknown GC mode through the values schema', async () => {
    const result = await run('helm', ['template', 'r4', chart, '--set', 'gc.mode=sometimes']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/gc.mode|mode/);
  });

  it('installs, upgrades and uninstalls against the API server', async () => {
    const ns = await createNamespace(env, 'helm');
    const release = uniqueName('bs');
    const fullname = `${release}-bundlesmith`;
    const clusterRole = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRole');
    const deployment = await resourceType(env, 'apps/v1', 'Deployment');
    const serviceAccount = await resourceType(env, 'v1', 'ServiceAccount');

    const install = await run('helm', ['install', release, chart, '-n', ns]);
    expect({ code: install.code, stderr: install.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await env.client.tryGet(serviceAccount, ns, fullname)).toBeDefined();
    expect(await env.client.tryGet(clusterRole, undefined, `${fullname}-gc`)).toBeDefined();
    const installed = await env.client.get(deployment, ns, fullname);
    expect(JSON.stringify(installed.spec)).toContain('--gc=cluster');

    const upgrade = await run('helm', ['upgrade', release, chart, '-n', ns, '--set', 'gc.mode=off', '--set', 'logLevel=debug']);
    expect({ code: upgrade.code, stderr: upgrade.stderr }).toEqual({ code: 0, stderr: '' });
    await waitFor('the GC ClusterRole to be removed by the upgrade', async () => (await env.client.tryGet(clusterRole, undefined, `${fullname}-gc`)) === undefined);
    const upgraded = await env.client.get(deployment, ns, fullname);
    expect(JSON.stringify(upgraded.spec)).toContain('--gc=off');
    expect(JSON.stringify(upgraded.spec)).toContain('--log-level=debug');

    const status = await run('helm', ['status', release, '-n', ns, '-o', 'json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ version: 2, info: { status: 'deployed' } });

    const uninstall = await run('helm', ['uninstall', release, '-n', ns]);
    expect(uninstall.code).toBe(0);
    await waitFor('the chart objects to be gone', async () => (await env.client.tryGet(clusterRole, undefined, fullname)) === undefined && (await env.client.tryGet(serviceAccount, ns, fullname)) === undefined);
    // CRDs in crds/ are never deleted by helm: Bundles outlive the release.
    expect(await env.client.tryGet(await resourceType(env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition'), undefined, 'bundles.smith.atlassian.com')).toBeDefined();
  });
});
