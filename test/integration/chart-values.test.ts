/**
 * What the chart accepts and renders for each shape, with the real helm
 * binary: `helm lint --strict` clean in every shape, unknown values
 * refused, kubeVersion true to the APIs it renders, a Lease grant for every
 * shard, and pods spread across nodes with more than one replica.
 * chart-shapes.test.ts installs and runs these shapes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { readHealthChecksFile } from '../../src/core/bundle/health-checks.js';
import { chart } from './chart.js';
import { run } from './harness.js';

interface Rendered {
  kind: string;
  apiVersion: string;
  metadata: { name: string };
  rules?: { resources?: string[]; resourceNames?: string[]; verbs: string[] }[];
  spec?: { template?: { spec: { topologySpreadConstraints?: { labelSelector: { matchLabels: Record<string, string> } }[] } } };
}

const flags = (set: string[]): string[] => set.flatMap((s) => ['--set', s]);

async function template(set: string[], extra: string[] = []): Promise<Rendered[]> {
  const result = await run('helm', ['template', 'r', chart, '-n', 'ops', ...flags(set), ...extra]);
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJS() as Rendered | null)
    .filter((d): d is Rendered => d !== null);
}

const sharded = [
  'sharding.shards[0].name=main',
  'sharding.shards[0].selector=!bundlesmith.dev/shard',
  'sharding.shards[1].name=s1',
  'sharding.shards[1].selector=bundlesmith.dev/shard=s1',
];

const SHAPES: [string, string[]][] = [
  ['defaults (two replicas, leader election, gc.mode=bundles, deletion guard on)', []],
  ['one replica without leader election', ['replicaCount=1', 'leaderElection.enabled=false']],
  ['sharded', sharded],
  ['lockdown', ['tenancy.defaultServiceAccount=bundles']],
  ['gc.mode=cluster', ['gc.mode=cluster']],
  ['gc.mode=off', ['gc.mode=off']],
  ['deletion guard off', ['deletionGuard.enabled=false']],
  [
    'operator-wide CEL readiness rules',
    ['healthChecks[0].apiVersion=example.com/v1', 'healthChecks[0].kind=Widget', 'healthChecks[0].current=status.phase == "Ready"'],
  ],
  ['finalizer guard off', ['finalizerGuard.enabled=false']],
  ['record guard on', ['recordGuard.enabled=true']],
  [
    'one namespace, metrics with Kubernetes auth, a NetworkPolicy',
    [
      'watchNamespace=team-a',
      'metrics.auth=kubernetes',
      'networkPolicy.enabled=true',
      'networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring',
    ],
  ],
  [
    'the monitoring kit, metrics over HTTPS with a cert-manager Certificate',
    [
      'metrics.auth=kubernetes',
      'metrics.tls.certManager.enabled=true',
      'metrics.tls.certManager.issuerRef.name=ca',
      'monitoring.serviceMonitor.enabled=true',
      'monitoring.prometheusRule.enabled=true',
      'monitoring.dashboard.enabled=true',
    ],
  ],
];

describe('the chart in every shape', () => {
  it.each(SHAPES)('passes helm lint --strict: %s', async (_name, set) => {
    const result = await run('helm', ['lint', '--strict', chart, ...flags(set)]);
    expect({ code: result.code, out: result.stdout + result.stderr }).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/0 chart\(s\) failed/);
  });

  it.each([
    ['a misspelt top-level key', 'replicas=2', /additional properties 'replicas' not allowed/],
    ['a misspelt nested key', 'leaderElection.leaseDuration=30', /additional properties 'leaseDuration' not allowed/],
    ['an unknown gc key', 'gc.workerCount=4', /additional properties 'workerCount' not allowed/],
    ['an unknown serviceAccount key', 'serviceAccount.automount=false', /additional properties 'automount' not allowed/],
    ['an unknown rbac key', 'rbac.extraRules=x', /additional properties 'extraRules' not allowed/],
    ['a shard with an unknown key', 'sharding.shards[0].label=x', /additional properties 'label' not allowed|missing propert/],
    ['an unknown finalizerGuard key', 'finalizerGuard.users=x', /additional properties 'users' not allowed/],
    [
      'a health check without current',
      'healthChecks[0].apiVersion=v1,healthChecks[0].kind=ConfigMap',
      /missing propert(y|ies).*current|current.*required/,
    ],
  ])('refuses %s (%s)', async (_name, set, message) => {
    const result = await run('helm', ['template', 'r', chart, '--set', set]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });

  it("requires Kubernetes 1.30, where the deletion guard's ValidatingAdmissionPolicy v1 is served", async () => {
    const old = await run('helm', ['template', 'r', chart, '--kube-version', '1.29.9']);
    expect(old.code).not.toBe(0);
    expect(old.stderr).toMatch(/requires kubeVersion: >=1.30/);
    const docs = await template([], ['--kube-version', '1.30.0']);
    expect(docs.find((d) => d.kind === 'ValidatingAdmissionPolicy')?.apiVersion).toBe('admissionregistration.k8s.io/v1');
  });

  it("renders the finalizer guard for Bundle updates only (not bundles/status), exempting the operator's own ServiceAccount, and only when finalizerGuard.enabled", async () => {
    type Policy = Rendered & {
      spec: { matchConstraints: unknown; matchConditions: { expression: string }[]; validations: { messageExpression: string }[] };
    };
    const guard = (docs: Rendered[]): Rendered[] => docs.filter((d) => d.metadata.name === 'r-bundlesmith-finalizer-guard');
    const on = guard(await template(['serviceAccount.name=op']));
    expect(on.map((d) => d.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const policy = on[0] as Policy;
    expect(policy.spec.matchConstraints).toEqual({
      resourceRules: [{ apiGroups: ['smith.atlassian.com'], apiVersions: ['*'], resources: ['bundles'], operations: ['UPDATE'] }],
    });
    expect(policy.spec.matchConditions.map((c) => c.expression)).toEqual(['request.userInfo.username != "system:serviceaccount:ops:op"']);
    expect(policy.spec.validations[0]?.messageExpression).toContain(
      'Keep metadata.finalizers [smith.atlassian.com/deleteResources] in the manifest, or use kubectl apply / server-side apply, which leaves it',
    );
    expect(guard(await template(['finalizerGuard.enabled=false']))).toEqual([]);
    // Its own switch: the deletion guard off leaves it on.
    expect(guard(await template(['deletionGuard.enabled=false']))).toHaveLength(2);
  });

  it('renders the record guard for bundles/status updates only, exempting every operator (the verb write-record), and only when recordGuard.enabled (off by default)', async () => {
    type Policy = Rendered & {
      spec: {
        matchConstraints: unknown;
        matchConditions: { expression: string }[];
        validations: { expression: string; messageExpression: string }[];
      };
    };
    const guard = (docs: Rendered[]): Rendered[] => docs.filter((d) => d.metadata.name === 'r-bundlesmith-record-guard');
    const on = guard(await template(['serviceAccount.name=op', 'recordGuard.enabled=true']));
    expect(on.map((d) => d.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const policy = on[0] as Policy;
    expect(policy.spec.matchConstraints).toEqual({
      resourceRules: [{ apiGroups: ['smith.atlassian.com'], apiVersions: ['*'], resources: ['bundles/status'], operations: ['UPDATE'] }],
    });
    // Every operator is exempt (the verb write-record the chart grants each ServiceAccount), so releases never refuse each other.
    expect(policy.spec.matchConditions.map((c) => c.expression)).toEqual([
      "!authorizer.group('smith.atlassian.com').resource('bundles').subresource('status').namespace(request.namespace).check('write-record').allowed()",
    ]);
    expect(policy.spec.validations[0]?.expression).toContain('variables.pendingBefore == variables.pendingAfter');
    // Off by default.
    expect(guard(await template(['serviceAccount.name=op']))).toEqual([]);
  });

  it('lets each shard get and update its own Lease, <leaseName>-<shard>', async () => {
    const role = (await template(sharded)).find((d) => d.kind === 'Role' && d.metadata.name === 'r-bundlesmith-leader-election');
    expect(role?.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['bundlesmith-leader-main', 'bundlesmith-leader-s1'],
        verbs: ['get', 'update'],
      },
    ]);
  });

  it.each([
    [1, [], 0],
    [2, [], 1],
    [3, sharded, 2],
  ])('spreads pods across nodes with more than one replica (replicaCount=%d)', async (replicas, set, spread) => {
    const deployments = (await template([`replicaCount=${replicas}`, ...set])).filter((d) => d.kind === 'Deployment');
    const constraints = deployments.flatMap((d) => d.spec?.template?.spec.topologySpreadConstraints ?? []);
    expect(constraints).toHaveLength(spread);
    // Each shard's pods spread among themselves.
    if (set === sharded) expect(constraints.map((c) => c.labelSelector.matchLabels['bundlesmith.dev/shard'])).toEqual(['main', 's1']);
  });

  it('takes topologySpreadConstraints as given instead of the default', async () => {
    const docs = await template([
      'topologySpreadConstraints[0].maxSkew=2',
      'topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone',
      'topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule',
    ]);
    expect(docs.find((d) => d.kind === 'Deployment')?.spec?.template?.spec.topologySpreadConstraints).toEqual([
      { maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
    ]);
  });

  it('mounts healthChecks as the --health-checks-file, and rolls the pods when they change', async () => {
    const rule = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      current: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
      failed: "status.phase == 'Failed'",
    };
    const values = join(mkdtempSync(join(tmpdir(), 'bundlesmith-hc-')), 'values.yaml');
    writeFileSync(values, stringify({ healthChecks: [rule] }));
    const docs = await template([], ['-f', values]);
    const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-health-checks')) as unknown as
      { data: Record<string, string> } | undefined;
    expect(configMap).toBeDefined();
    // What the operator reads is what it would accept (the same reader as at start).
    expect(readHealthChecksFile(parse(configMap?.data['health-checks.yaml'] ?? ''))).toEqual({ ok: true, rules: [rule] });
    const deployment = docs.find((d) => d.kind === 'Deployment') as unknown as {
      spec: {
        template: {
          metadata: { annotations?: Record<string, string> };
          spec: {
            containers: { args: string[]; volumeMounts: { name: string; mountPath: string }[] }[];
            volumes: { name: string; configMap?: { name: string } }[];
          };
        };
      };
    };
    const pod = deployment.spec.template;
    expect(pod.spec.containers[0]?.args).toContain('--health-checks-file=/etc/bundlesmith/health-checks/health-checks.yaml');
    expect(pod.spec.containers[0]?.volumeMounts).toContainEqual(
      expect.objectContaining({ name: 'health-checks', mountPath: '/etc/bundlesmith/health-checks' }),
    );
    expect(pod.spec.volumes).toContainEqual({
      name: 'health-checks',
      configMap: { name: configMap ? (configMap as unknown as Rendered).metadata.name : '' },
    });
    expect(pod.metadata.annotations?.['checksum/health-checks']).toMatch(/^[0-9a-f]{64}$/);
    // Without rules: no file, no flag.
    const plain = await template([]);
    expect(plain.some((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-health-checks'))).toBe(false);
  });
});
