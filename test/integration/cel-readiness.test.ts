/**
 * CEL readiness rules (issue 27, part 1) on the real API server, with a CRD
 * whose readiness only an expression can tell: a Database reports
 * status.phase (Provisioning, Available, Failed) and status.endpoint, and no
 * Ready condition, so every built-in rule would leave it in progress for
 * ever. spec.healthChecks is read by an in-process operator; the
 * operator-wide --health-checks-file by the built operator process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HealthCheck } from '../../src/api/health-checks.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { conditionOf, createNamespace, resourceType, waitFor } from './harness.js';
import { bundleManifest, eventsFor, resourceCondition, waitForBundle, waitForReady, type ResourceFixture } from './bundles.js';
import { operatorFixture, startOperatorProcess } from './operator.js';

const GROUP = 'cel.bundlesmith.dev';
const f = operatorFixture('celready');

const databaseRule: HealthCheck = {
  apiVersion: `${GROUP}/v1`,
  kind: 'Database',
  inProgress: "status.phase == 'Provisioning'",
  failed: "status.phase == 'Failed'",
  current: "status.phase == 'Available' && has(status.endpoint) && status.endpoint != ''",
};

const database = (name: string): Record<string, unknown> => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Database',
  metadata: { name },
  spec: { engine: 'postgres' },
});
const configMap = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { a: 'b' },
});

async function applyWithRules(
  namespace: string,
  name: string,
  resources: ResourceFixture[],
  healthChecks: HealthCheck[] | undefined,
): Promise<void> {
  const manifest = bundleManifest(namespace, name, resources) as { spec: Record<string, unknown> };
  if (healthChecks) manifest.spec['healthChecks'] = healthChecks;
  await f.env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
}

async function setStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<void> {
  const rt = await resourceType(f.env, `${GROUP}/v1`, 'Database');
  await waitFor(`Database ${name} to exist`, () => f.env.client.tryGet(rt, namespace, name));
  await f.env.client.patch(rt, namespace, name, { status }, 'merge', { subresource: 'status' });
}

beforeAll(async () => {
  const crdType = await resourceType(f.env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition');
  await f.env.client.apply(
    crdType,
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `databases.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { kind: 'Database', plural: 'databases', singular: 'database' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    },
    { fieldManager: 'test-user' },
  );
  await waitFor('Database to be served', () => f.env.discovery.resolve(`${GROUP}/v1`, 'Database'));
}, 60_000);

describe('spec.healthChecks', () => {
  it('a Database is ready only when its rule says so; what depends on it waits until then', async () => {
    await applyWithRules(
      f.ns,
      'app',
      [
        { name: 'db', object: database('orders') },
        { name: 'config', references: [{ resource: 'db' }], object: configMap('app-config') },
      ],
      [databaseRule],
    );
    await setStatus(f.ns, 'orders', { phase: 'Provisioning' });
    const provisioning = await waitForBundle(
      f.env,
      f.ns,
      'app',
      'db in progress by the rule',
      (b) => resourceCondition(b, 'db', 'InProgress')?.message?.includes('spec.healthChecks[0].inProgress is true') === true,
    );
    expect(conditionOf(provisioning, 'Ready')?.status).toBe('False');
    expect(resourceCondition(provisioning, 'config', 'Blocked')?.status).toBe('True');
    // Available without an endpoint: current is false, still in progress (a Ready condition would not be asked).
    await setStatus(f.ns, 'orders', { phase: 'Available' });
    await waitForBundle(
      f.env,
      f.ns,
      'app',
      'current false',
      (b) => resourceCondition(b, 'db', 'InProgress')?.message?.includes('current is false') === true,
    );
    await setStatus(f.ns, 'orders', { phase: 'Available', endpoint: 'orders.db:5432' });
    const ready = await waitForReady(f.env, f.ns, 'app');
    expect(ready.status).toMatchObject({ resourcesReady: '2/2' });
  });

  it('a rule that flips from inProgress to failed makes a terminal, reported resource error', async () => {
    await applyWithRules(
      f.ns,
      'flip',
      [
        { name: 'db', object: database('billing') },
        { name: 'after', references: [{ resource: 'db' }], object: configMap('after-billing') },
      ],
      [databaseRule],
    );
    await setStatus(f.ns, 'billing', { phase: 'Provisioning' });
    await waitForBundle(
      f.env,
      f.ns,
      'flip',
      'db in progress',
      (b) => resourceCondition(b, 'db', 'InProgress')?.status === 'True' && conditionOf(b, 'Error')?.status !== 'True',
    );
    await setStatus(f.ns, 'billing', { phase: 'Failed', reason: 'disk full' });
    const failed = await waitForBundle(f.env, f.ns, 'flip', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(failed, 'Error')).toMatchObject({ reason: 'TerminalError' });
    expect(resourceCondition(failed, 'db', 'Error')).toMatchObject({ status: 'True' });
    expect(resourceCondition(failed, 'db', 'Error')?.message).toContain(`failed by spec.healthChecks[0].failed (${databaseRule.failed})`);
    expect(resourceCondition(failed, 'after', 'Blocked')).toMatchObject({ status: 'True' });
    expect(conditionOf(failed, 'Ready')?.status).toBe('False');
    // Reported: a Warning event on the Bundle names the failed rule.
    await waitFor('a Warning event naming the rule', async () =>
      (await eventsFor(f.env, f.ns, 'flip')).some(
        (e) => e.type === 'Warning' && e.reason === 'ReconcileError' && e.note.includes('spec.healthChecks[0].failed'),
      ),
    );
  });

  it('an expression that does not compile or can only be a non-bool is an error of the Bundle at once, and nothing is applied', async () => {
    const broken: HealthCheck[] = [
      { ...databaseRule, current: "status.phase == 'Available' &&" },
      { apiVersion: 'v1', kind: 'ConfigMap', current: 'size(data)' },
    ];
    await applyWithRules(
      f.ns,
      'broken',
      [
        { name: 'db', object: database('broken') },
        { name: 'cm', object: configMap('broken-cm') },
      ],
      broken,
    );
    const refused = await waitForBundle(f.env, f.ns, 'broken', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(refused, 'Error')).toMatchObject({ reason: 'TerminalError' });
    expect(conditionOf(refused, 'Error')?.message).toContain('spec.healthChecks[0].current: does not compile');
    expect(conditionOf(refused, 'Error')?.message).toContain('spec.healthChecks[1].current: returns the result of size, not a bool');
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'broken-cm')).toBeUndefined();
  });

  it('a rule returning a non-bool on the live object is a resource error, never ready', async () => {
    await applyWithRules(
      f.ns,
      'typed',
      [{ name: 'db', object: database('typed') }],
      [{ apiVersion: databaseRule.apiVersion, kind: databaseRule.kind, current: 'status.phase' }],
    );
    await setStatus(f.ns, 'typed', { phase: 'Available' });
    const wrong = await waitForBundle(f.env, f.ns, 'typed', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(resourceCondition(wrong, 'db', 'Error')?.message).toBe('spec.healthChecks[0].current: returned a string, not a bool');
    expect(conditionOf(wrong, 'Ready')?.status).toBe('False');
  });

  it('the API server refuses two rules for one kind and a rule without current', async () => {
    const duplicate = f.env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      { ...bundleManifest(f.ns, 'dup', []), spec: { resources: [], healthChecks: [databaseRule, { ...databaseRule, current: 'true' }] } },
      { fieldManager: 'test-user', force: true },
    );
    await expect(duplicate).rejects.toThrow(/[Dd]uplicate/);
    const noCurrent = f.env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        ...bundleManifest(f.ns, 'nocurrent', []),
        spec: { resources: [], healthChecks: [{ apiVersion: 'v1', kind: 'ConfigMap', failed: 'true' }] },
      },
      { fieldManager: 'test-user', force: true },
    );
    await expect(noCurrent).rejects.toThrow(/current.*[Rr]equired|[Rr]equired.*current/);
  });
});

describe('--health-checks-file (the operator process)', () => {
  it('refuses to start with a rule that does not compile, naming it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bundlesmith-hc-')), 'rules.yaml');
    writeFileSync(file, `healthCheckExprs:\n  - apiVersion: ${GROUP}/v1\n    kind: Database\n    current: "status.phase =="\n`);
    const proc = startOperatorProcess(['--namespace', 'default', '--gc', 'off', '--health-checks-file', file]);
    const code = await new Promise<number | null>((resolve) => proc.child.on('exit', resolve));
    expect(code).toBe(2);
    await waitFor('the log', () => (readFileSync(proc.logFile, 'utf8').includes('--health-checks-file') ? true : undefined));
    expect(readFileSync(proc.logFile, 'utf8')).toContain('--health-checks-file[0].current: does not compile');
  }, 30_000);

  it("applies the file's rules to every Bundle; a Bundle's own rule wins for the same kind", async () => {
    const ns = await createNamespace(f.env, 'celfile');
    const file = join(mkdtempSync(join(tmpdir(), 'bundlesmith-hc-')), 'rules.yaml');
    writeFileSync(file, JSON.stringify([databaseRule]));
    const proc = startOperatorProcess(['--namespace', ns, '--gc', 'off', '--health-checks-file', file]);
    try {
      await applyWithRules(ns, 'defaults', [{ name: 'db', object: database('inventory') }], undefined);
      await setStatus(ns, 'inventory', { phase: 'Provisioning' });
      await waitForBundle(
        f.env,
        ns,
        'defaults',
        'in progress by the file',
        (b) => resourceCondition(b, 'db', 'InProgress')?.message?.includes('--health-checks-file[0].inProgress is true') === true,
        60_000,
      );
      await setStatus(ns, 'inventory', { phase: 'Available', endpoint: 'inventory.db:5432' });
      await waitForReady(f.env, ns, 'defaults');
      // The Bundle's rule for Database replaces the file's: "Ready" is its word for done.
      await applyWithRules(
        ns,
        'own',
        [{ name: 'db', object: database('ledger') }],
        [{ apiVersion: `${GROUP}/v1`, kind: 'Database', current: "status.phase == 'Ready'" }],
      );
      await setStatus(ns, 'ledger', { phase: 'Available', endpoint: 'ledger.db:5432' });
      await waitForBundle(
        f.env,
        ns,
        'own',
        'current false',
        (b) => resourceCondition(b, 'db', 'InProgress')?.message === 'spec.healthChecks[0].current is false',
      );
      await setStatus(ns, 'ledger', { phase: 'Ready' });
      await waitForReady(f.env, ns, 'own');
    } finally {
      await proc.terminate();
    }
  }, 120_000);
});
