/**
 * The Helm chart: lint, what it renders for each mode, and install / upgrade /
 * uninstall with the real helm binary against the test apiserver (no nodes
 * run here, so the Deployment's pods never start; rbac.test.ts runs the
 * operator as the chart's ServiceAccount instead).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { buildBundleCrd } from '../../src/api/crd.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import type { KubeObject } from '../../src/kube/types.js';
import { connect, createNamespace, resourceType, run, uniqueName, waitFor, type TestEnv } from './harness.js';

const chart = join(repoRoot(), 'charts', 'bundlesmith');

interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  rules?: { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[]; nonResourceURLs?: string[] }[];
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

interface RenderedContainer {
  image: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  securityContext: Record<string, unknown>;
  env?: { name: string; value: string }[];
}

function container(docs: Rendered[], name: string): RenderedContainer {
  const deployment = find(docs, 'Deployment', name);
  const containers = (deployment?.spec as { template: { spec: { containers: RenderedContainer[] } } } | undefined)?.template.spec
    .containers;
  const first = containers?.[0];
  if (!first) throw new Error(`no container in Deployment ${name}`);
  return first;
}

const wildcardRule = (doc: Rendered | undefined) => doc?.rules?.find((r) => r.apiGroups?.includes('*') && r.resources?.includes('*'));

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
const crdType = () => resourceType(env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition');

/**
 * A copy of the chart whose CRD is served under `group` instead of
 * smith.atlassian.com, optionally with `edit` applied to the CRD: the CRD
 * upgrade test must not touch the Bundle CRD every other test file uses.
 */
function chartCopy(group: string, edit: (crd: CrdDocument) => void = () => undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'bundlesmith-chart-'));
  cpSync(chart, dir, { recursive: true });
  const file = join(dir, 'files', 'bundles.smith.atlassian.com.yaml');
  const crd = parse(readFileSync(file, 'utf8').replaceAll('smith.atlassian.com', group)) as CrdDocument;
  edit(crd);
  writeFileSync(file, stringify(crd));
  return dir;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
}
interface CrdDocument {
  metadata: { name: string; uid?: string };
  spec: { versions: { name: string; schema: { openAPIV3Schema: SchemaNode } }[] };
}

/** The names of the fields of a Bundle's status in a CRD's schema. */
function statusFields(crd: CrdDocument): string[] {
  const status = crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.status?.properties;
  if (!status) throw new Error('the CRD has no status schema');
  return Object.keys(status);
}

/**
 * A release of an old chart, whose CRD (served under a group of its own)
 * lacks status.managedKinds, is installed, then upgraded by `upgrade`: the
 * CRD keeps its uid and gains the field, and helm uninstall keeps it.
 * `oldLayout` rearranges the old chart's files first. Returns the CRD as
 * uninstall left it; it is deleted (no objects of it exist).
 */
async function upgradeOldCrd(c: {
  oldLayout?: (oldChart: string) => void;
  upgrade: (release: string, newChart: string, ns: string, crdName: string) => Promise<void>;
}): Promise<KubeObject> {
  const ns = await createNamespace(env, 'helm-crd');
  const release = uniqueName('crd');
  const group = `${release}.bundlesmith.test`;
  const crdName = `bundles.${group}`;
  const crds = await crdType();
  const oldChart = chartCopy(group, (crd) => {
    delete crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.status?.properties?.managedKinds;
  });
  c.oldLayout?.(oldChart);
  const newChart = chartCopy(group);
  try {
    const install = await run('helm', ['install', release, oldChart, '-n', ns]);
    expect({ code: install.code, stderr: install.stderr }).toEqual({ code: 0, stderr: '' });
    const before = (await env.client.get(crds, undefined, crdName)) as unknown as CrdDocument;
    expect(statusFields(before)).not.toContain('managedKinds');

    await c.upgrade(release, newChart, ns, crdName);
    const after = (await env.client.get(crds, undefined, crdName)) as unknown as CrdDocument;
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(statusFields(after)).toContain('managedKinds');

    const uninstall = await run('helm', ['uninstall', release, '-n', ns]);
    expect(uninstall.code).toBe(0);
    const kept = await env.client.get(crds, undefined, crdName);
    expect(kept.metadata.uid).toBe(before.metadata.uid);
    await env.client.delete(crds, undefined, crdName, { uid: kept.metadata.uid ?? '' });
    return kept;
  } finally {
    rmSync(oldChart, { recursive: true, force: true });
    rmSync(newChart, { recursive: true, force: true });
  }
}

let env: TestEnv;
beforeAll(async () => {
  env = await connect();
});
afterAll(() => env.close());

describe('helm chart', () => {
  it('passes helm lint --strict, with default and non-default values', async () => {
    for (const set of [
      [],
      ['gc.mode=off', 'watchNamespace=team-a', 'replicaCount=1', 'leaderElection.enabled=false', 'crds.install=false'],
      [
        'metrics.auth=kubernetes',
        'networkPolicy.enabled=true',
        'networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring',
        `image.digest=${DIGEST}`,
      ],
    ]) {
      const result = await run('helm', ['lint', '--strict', chart, ...set.flatMap((s) => ['--set', s])]);
      expect({ set, code: result.code, out: result.stdout + result.stderr }).toMatchObject({ set, code: 0 });
    }
  });

  it('renders a leader-elected, non-root, read-only Deployment with the flags of its values', async () => {
    const docs = await template('r1', 'ops', ['logLevel=debug', 'gc.mode=bundles']);
    const c = container(docs, 'r1-bundlesmith');
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--leader-elect=true',
        '--leader-election-namespace=ops',
        '--leader-election-id=bundlesmith-leader',
        '--gc=bundles',
        '--log-level=debug',
        '--metrics-addr=127.0.0.1:8080',
        '--metrics-auth=none',
        '--health-addr=:8081',
      ]),
    );
    expect(c.args.some((a) => a.startsWith('--namespace') || a.startsWith('--debug-addr'))).toBe(false);
    expect(container(await template('r1', 'ops', ['debugAddr=:8082']), 'r1-bundlesmith').args).toContain('--debug-addr=:8082');
    expect(c.env).toBeUndefined();
    expect(container(await template('r1', 'ops', ['heapLimitMiB=4096']), 'r1-bundlesmith').env).toEqual([
      { name: 'NODE_OPTIONS', value: '--max-old-space-size=4096' },
    ]);
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    const pod = find(docs, 'Deployment', 'r1-bundlesmith')?.spec as {
      replicas: number;
      template: { spec: { securityContext: Record<string, unknown>; serviceAccountName: string } };
    };
    expect(pod.replicas).toBe(2);
    expect(pod.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.template.spec.serviceAccountName).toBe('r1-bundlesmith');
    expect(c.image).toBe('ghcr.io/bundlesmith/bundlesmith:0.1.0');
    expect(find(docs, 'Role', 'r1-bundlesmith-leader-election')?.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['bundlesmith-leader'], verbs: ['get', 'update'] },
    ]);
  });

  it.each([
    ['cluster', '', '', { gcRole: true, namespaceRole: false }],
    ['bundles', '', '', { gcRole: false, namespaceRole: false }],
    ['off', 'team-a', '', { gcRole: false, namespaceRole: true }],
    ['cluster', 'team-a', '', { gcRole: true, namespaceRole: true }],
    ['bundles', 'team-a', 'bundles', { gcRole: false, namespaceRole: true }],
  ])(
    'grants cluster-wide GC rights only for gc.mode=cluster, and no wildcard resources (gc.mode=%s, watchNamespace=%j, tenancy.defaultServiceAccount=%j)',
    async (mode, watchNamespace, account, want) => {
      const docs = await template('r2', 'ops', [
        `gc.mode=${mode}`,
        `watchNamespace=${watchNamespace}`,
        `tenancy.defaultServiceAccount=${account}`,
      ]);
      expect(find(docs, 'ClusterRole', 'r2-bundlesmith-gc') !== undefined).toBe(want.gcRole);
      expect(find(docs, 'ClusterRoleBinding', 'r2-bundlesmith-gc') !== undefined).toBe(want.gcRole);
      const role = find(docs, 'Role', 'r2-bundlesmith');
      expect(role !== undefined).toBe(want.namespaceRole);
      if (want.namespaceRole) expect(role?.metadata.namespace).toBe('team-a');
      for (const doc of docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role')) {
        // "*" in apiGroups would reach admission webhooks; "*" in the core group would reach pods/exec and
        // serviceaccounts/token. Only the collector's per-group rules name resources with "*".
        expect(wildcardRule(doc)).toBeUndefined();
        for (const rule of doc.rules ?? []) {
          expect(rule.verbs ?? []).not.toContain('*');
          expect(rule.verbs ?? []).not.toContain('escalate');
          expect(rule.verbs ?? []).not.toContain('bind');
          if (rule.resources?.includes('*')) expect(rule.apiGroups ?? []).not.toContain('');
          if (rule.resources?.includes('*') && rule.apiGroups?.includes('admissionregistration.k8s.io'))
            expect(rule.verbs).toEqual(['get', 'list', 'watch']);
        }
      }
      const objectRule = (find(docs, 'Role', 'r2-bundlesmith') ?? find(docs, 'ClusterRole', 'r2-bundlesmith'))?.rules?.find((r) =>
        r.resources?.includes('configmaps'),
      );
      // Lockdown: the operator reads Bundle objects and the collector (gc.mode=bundles) patches and deletes them;
      // only the impersonated accounts create them.
      expect(objectRule?.verbs).toEqual(
        account ? ['get', 'list', 'watch', 'patch', 'delete'] : ['get', 'list', 'watch', 'create', 'patch', 'delete'],
      );
    },
  );

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

  it('serves /metrics on loopback only by default: no container port, no Service, no review rights', async () => {
    const docs = await template('m1', 'ops');
    expect(container(docs, 'm1-bundlesmith').ports.map((p) => p.name)).toEqual(['health']);
    expect(find(docs, 'Service', 'm1-bundlesmith-metrics')).toBeUndefined();
    expect(find(docs, 'ClusterRole', 'm1-bundlesmith-metrics-auth')).toBeUndefined();
    expect(find(docs, 'ClusterRole', 'm1-bundlesmith-metrics-reader')).toBeUndefined();
    const ipv6 = container(await template('m1', 'ops', ['metrics.bindAddress=::1']), 'm1-bundlesmith');
    expect(ipv6.args).toContain('--metrics-addr=[::1]:8080');
    const open = await template('m1', 'ops', ['metrics.bindAddress=']);
    expect(container(open, 'm1-bundlesmith').args).toEqual(expect.arrayContaining(['--metrics-addr=:8080', '--metrics-auth=none']));
    expect(find(open, 'Service', 'm1-bundlesmith-metrics')).toBeDefined();
  });

  it('with metrics.auth=kubernetes, listens on every interface with the reviews on, and ships the review rights and a metrics-reader ClusterRole', async () => {
    const docs = await template('m2', 'ops', ['metrics.auth=kubernetes']);
    const c = container(docs, 'm2-bundlesmith');
    expect(c.args).toEqual(expect.arrayContaining(['--metrics-addr=:8080', '--metrics-auth=kubernetes', '--metrics-secure']));
    // No Secret named: a self-signed certificate, no certificate directory.
    expect(c.args.filter((a) => a.startsWith('--metrics-cert-dir'))).toEqual([]);
    expect(c.ports.map((p) => p.name)).toEqual(['metrics', 'health']);
    expect(find(docs, 'Service', 'm2-bundlesmith-metrics')).toBeDefined();
    expect(find(docs, 'ClusterRole', 'm2-bundlesmith-metrics-auth')?.rules).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    expect(find(docs, 'ClusterRoleBinding', 'm2-bundlesmith-metrics-auth')).toMatchObject({
      subjects: [{ kind: 'ServiceAccount', name: 'm2-bundlesmith', namespace: 'ops' }],
    });
    expect(find(docs, 'ClusterRole', 'm2-bundlesmith-metrics-reader')?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  });

  it.each([
    [2, true],
    [3, true],
    [1, false],
  ])('renders a PodDisruptionBudget (minAvailable 1) only with several replicas (replicaCount=%d)', async (replicas, want) => {
    const docs = await template('p1', 'ops', [`replicaCount=${replicas}`]);
    const pdb = find(docs, 'PodDisruptionBudget', 'p1-bundlesmith');
    expect(pdb !== undefined).toBe(want);
    if (pdb)
      expect(pdb.spec).toEqual({
        minAvailable: 1,
        selector: { matchLabels: { 'app.kubernetes.io/name': 'bundlesmith', 'app.kubernetes.io/instance': 'p1' } },
      });
  });

  it('renders a NetworkPolicy only when enabled, admitting the health port and the metrics port from metricsFrom only', async () => {
    expect(find(await template('n1', 'ops'), 'NetworkPolicy', 'n1-bundlesmith')).toBeUndefined();
    const selector = { matchLabels: { 'app.kubernetes.io/name': 'bundlesmith', 'app.kubernetes.io/instance': 'n1' } };
    const healthRule = { ports: [{ port: 8081, protocol: 'TCP' }] };
    // No peers: no metrics rule (a rule without "from" would admit everyone).
    const closed = find(
      await template('n1', 'ops', ['networkPolicy.enabled=true', 'metrics.auth=kubernetes']),
      'NetworkPolicy',
      'n1-bundlesmith',
    );
    expect(closed?.spec).toEqual({ podSelector: selector, policyTypes: ['Ingress'], ingress: [healthRule] });
    const peers = [
      'networkPolicy.enabled=true',
      'metrics.auth=kubernetes',
      'networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring',
      'networkPolicy.metricsFrom[1].ipBlock.cidr=10.0.0.0/8',
    ];
    const open = find(await template('n1', 'ops', peers), 'NetworkPolicy', 'n1-bundlesmith');
    expect(open?.spec).toEqual({
      podSelector: selector,
      policyTypes: ['Ingress'],
      ingress: [
        healthRule,
        {
          from: [{ namespaceSelector: { matchLabels: { team: 'monitoring' } } }, { ipBlock: { cidr: '10.0.0.0/8' } }],
          ports: [{ port: 8080, protocol: 'TCP' }],
        },
      ],
    });
    // Peers, but /metrics on loopback: nothing to admit.
    const loopback = find(
      await template('n1', 'ops', [
        'networkPolicy.enabled=true',
        'networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring',
      ]),
      'NetworkPolicy',
      'n1-bundlesmith',
    );
    expect(loopback?.spec).toMatchObject({ ingress: [healthRule] });
  });

  it('pins the image by digest when image.digest is set (the tag is ignored), and rejects a malformed digest', async () => {
    const docs = await template('d1', 'ops', [`image.digest=${DIGEST}`, 'image.tag=9.9.9']);
    expect(container(docs, 'd1-bundlesmith').image).toBe(`ghcr.io/bundlesmith/bundlesmith@${DIGEST}`);
    const bad = await run('helm', ['template', 'd2', chart, '--set', 'image.digest=latest']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/digest/);
  });

  it('rejects unknown metrics.auth values and NetworkPolicy peers through the values schema', async () => {
    for (const set of ['metrics.auth=basic', 'networkPolicy.metricsFrom[0].everyone=true']) {
      const result = await run('helm', ['template', 'v1', chart, '--set', set]);
      expect({ set, code: result.code }).toEqual({ set, code: 1 });
    }
  });

  it('renders the generated Bundle CRD as a kept template (crds.install), not from crds/', async () => {
    const docs = await template('c1', 'ops');
    const crd = find(docs, 'CustomResourceDefinition', 'bundles.smith.atlassian.com');
    expect(crd?.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
    // The generated labels stay beside the chart's: without is-parent-type kubectl would not take a Bundle as an ApplySet parent.
    expect(crd?.metadata.labels).toMatchObject({
      'app.kubernetes.io/managed-by': 'Helm',
      ...(buildBundleCrd() as { metadata: { labels: Record<string, string> } }).metadata.labels,
    });
    expect(crd?.spec).toEqual((buildBundleCrd() as { spec: unknown }).spec);
    expect(
      find(await template('c1', 'ops', ['crds.install=false']), 'CustomResourceDefinition', 'bundles.smith.atlassian.com'),
    ).toBeUndefined();
  });

  it('upgrades the CRD on helm upgrade: a field the old CRD lacked is served afterwards, and uninstall keeps the CRD', async () => {
    const kept = await upgradeOldCrd({
      upgrade: async (release, newChart, ns) => {
        const upgrade = await run('helm', ['upgrade', release, newChart, '-n', ns]);
        expect({ code: upgrade.code, stderr: upgrade.stderr }).toEqual({ code: 0, stderr: '' });
      },
    });
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
  });

  it('migrates a release whose CRD came from crds/ (earlier chart versions): refused without --take-ownership, upgraded with it', async () => {
    await upgradeOldCrd({
      // The earlier layout: the CRD in crds/, no CRD template.
      oldLayout: (oldChart) => {
        mkdirSync(join(oldChart, 'crds'));
        renameSync(join(oldChart, 'files', 'bundles.smith.atlassian.com.yaml'), join(oldChart, 'crds', 'bundles.yaml'));
        rmSync(join(oldChart, 'templates', 'crds.yaml'));
      },
      upgrade: async (release, newChart, ns, crdName) => {
        const refused = await run('helm', ['upgrade', release, newChart, '-n', ns]);
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toMatch(/ownership/);
        expect(statusFields((await env.client.get(await crdType(), undefined, crdName)) as unknown as CrdDocument)).not.toContain(
          'managedKinds',
        );

        const upgrade = await run('helm', ['upgrade', release, newChart, '-n', ns, '--take-ownership']);
        expect({ code: upgrade.code, stderr: upgrade.stderr }).toEqual({ code: 0, stderr: '' });
      },
    });
  });

  it('installs, upgrades and uninstalls against the API server', async () => {
    const ns = await createNamespace(env, 'helm');
    const release = uniqueName('bs');
    const fullname = `${release}-bundlesmith`;
    const clusterRole = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRole');
    const deployment = await resourceType(env, 'apps/v1', 'Deployment');
    const serviceAccount = await resourceType(env, 'v1', 'ServiceAccount');

    // The Bundle CRD is the global setup's, not this release's: Helm would refuse to take it over.
    const install = await run('helm', ['install', release, chart, '-n', ns, '--set', 'crds.install=false', '--set', 'gc.mode=cluster']);
    expect({ code: install.code, stderr: install.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await env.client.tryGet(serviceAccount, ns, fullname)).toBeDefined();
    expect(await env.client.tryGet(clusterRole, undefined, `${fullname}-gc`)).toBeDefined();
    const installed = await env.client.get(deployment, ns, fullname);
    expect(JSON.stringify(installed.spec)).toContain('--gc=cluster');

    const upgrade = await run('helm', [
      'upgrade',
      release,
      chart,
      '-n',
      ns,
      '--set',
      'crds.install=false',
      '--set',
      'gc.mode=off',
      '--set',
      'logLevel=debug',
    ]);
    expect({ code: upgrade.code, stderr: upgrade.stderr }).toEqual({ code: 0, stderr: '' });
    await waitFor(
      'the GC ClusterRole to be removed by the upgrade',
      async () => (await env.client.tryGet(clusterRole, undefined, `${fullname}-gc`)) === undefined,
    );
    const upgraded = await env.client.get(deployment, ns, fullname);
    expect(JSON.stringify(upgraded.spec)).toContain('--gc=off');
    expect(JSON.stringify(upgraded.spec)).toContain('--log-level=debug');

    const status = await run('helm', ['status', release, '-n', ns, '-o', 'json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ version: 2, info: { status: 'deployed' } });

    const uninstall = await run('helm', ['uninstall', release, '-n', ns]);
    expect(uninstall.code).toBe(0);
    await waitFor(
      'the chart objects to be gone',
      async () =>
        (await env.client.tryGet(clusterRole, undefined, fullname)) === undefined &&
        (await env.client.tryGet(serviceAccount, ns, fullname)) === undefined,
    );
    // The Bundle CRD was not the release's: it stays.
    expect(await env.client.tryGet(await crdType(), undefined, 'bundles.smith.atlassian.com')).toBeDefined();
  });
});
