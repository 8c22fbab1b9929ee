/**
 * Helm 4's `helm install --wait` (kstatus, HIP-0022; the helm binary the
 * suite uses) tells Ready, waiting and failed Bundles apart, with an
 * operator process reconciling them: a chart holding a Bundle installs only
 * once the Bundle is Ready, never succeeds while the Bundle waits on a
 * Deployment that never becomes available, and fails well before its
 * timeout when the Bundle is stalled. A Bundle no operator has seen yet
 * reads as in progress, from the moment it is stored (the CRD's status
 * default).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, markDeploymentAvailable, type ResourceFixture } from './bundles.js';
import { conditionOf, connect, createNamespace, run, waitFor, type RunResult, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

let env: TestEnv;
let ns: string;
let operator: OperatorProcess;
const charts: string[] = [];

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'helm-wait');
  operator = startOperatorProcess(['--namespace', ns, '--gc', 'off']);
});

afterAll(async () => {
  expect(await operator.terminate()).toBe(0);
  for (const dir of charts) rmSync(dir, { recursive: true, force: true });
  env.close();
});

/** A chart whose one template is a Bundle named `name` holding `resources`. */
function bundleChart(name: string, resources: ResourceFixture[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'bundlesmith-wait-chart-'));
  charts.push(dir);
  mkdirSync(join(dir, 'templates'));
  writeFileSync(join(dir, 'Chart.yaml'), stringify({ apiVersion: 'v2', name: 'app', version: '0.1.0' }));
  const manifest = bundleManifest('', name, resources) as { metadata: Record<string, unknown> };
  delete manifest.metadata.namespace;
  writeFileSync(join(dir, 'templates', 'bundle.yaml'), stringify(manifest));
  return dir;
}

/** `helm install --wait` (kstatus' watcher) into `namespace`, with its wall time. */
async function installAndWait(release: string, chart: string, timeout: string, namespace = ns): Promise<RunResult & { seconds: number }> {
  const started = Date.now();
  const result = await run('helm', ['install', release, chart, '-n', namespace, '--wait', '--timeout', timeout]);
  return { ...result, seconds: (Date.now() - started) / 1000 };
}

function deployment(name: string): Record<string, unknown> {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } },
    },
  };
}

describe('helm install --wait of a chart holding a Bundle', () => {
  it('a Bundle no operator has seen reads as in progress: observedGeneration 0 from the moment it is stored, and helm waits', async () => {
    const unwatched = await createNamespace(env, 'helm-wait-unseen');
    const waited = await installAndWait('unseen', bundleChart('unseen', [{ name: 'c', object: configMap('unseen-c') }]), '4s', unwatched);
    expect(waited.code).not.toBe(0);
    expect(waited.stderr).toMatch(/Bundle.*unseen.*InProgress|context deadline exceeded/);
    const stored = await env.client.get(BUNDLE_RESOURCE_TYPE, unwatched, 'unseen');
    expect(stored.metadata.generation).toBe(1);
    expect(stored.status).toEqual({ observedGeneration: 0 });
  });

  it('returns only once the Bundle is Ready', async () => {
    const install = installAndWait(
      'ready',
      bundleChart('ready', [
        { name: 'config', object: configMap('ready-config') },
        { name: 'web', object: deployment('ready-web') },
      ]),
      '90s',
    );
    let settled = false;
    void install.then(() => (settled = true));
    // The Deployment is not available yet (no workload controller runs here): the operator says so, helm waits.
    await waitFor(
      'the Bundle to wait for its Deployment',
      async () => conditionOf(await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'ready'), 'Reconciling')?.status === 'True',
    );
    await new Promise((r) => setTimeout(r, 3000));
    expect(settled).toBe(false);
    expect(conditionOf(await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'ready'), 'Ready')?.status).toBe('False');

    await markDeploymentAvailable(env, ns, 'ready-web');
    const result = await install;
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const bundle = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'ready');
    expect(conditionOf(bundle, 'Ready')?.status).toBe('True');
    expect(conditionOf(bundle, 'Reconciling')).toMatchObject({ status: 'False', reason: 'Reconciled' });
    expect(conditionOf(bundle, 'Stalled')).toMatchObject({ status: 'False' });
    expect((bundle.status as { observedGeneration?: number }).observedGeneration).toBe(bundle.metadata.generation);
  });

  it('does not return success while the Bundle waits on something never ready', async () => {
    const result = await installAndWait('never', bundleChart('never', [{ name: 'web', object: deployment('never-web') }]), '10s');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Bundle.*never.*InProgress|context deadline exceeded/);
    const bundle = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'never');
    expect(conditionOf(bundle, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Working', message: 'waiting for web' });
    expect(conditionOf(bundle, 'Ready')?.status).toBe('False');
  });

  it('fails well before its timeout when the Bundle is stalled (a terminal error)', async () => {
    // A reference to a resource the Bundle does not hold: an invalid spec, which retrying cannot mend.
    const chart = bundleChart('stalled', [{ name: 'config', references: [{ resource: 'missing' }], object: configMap('stalled-config') }]);
    const result = await installAndWait('stalled', chart, '120s');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Bundle.*stalled.*Failed/);
    expect(result.seconds).toBeLessThan(30);
    const bundle = await env.client.get(BUNDLE_RESOURCE_TYPE, ns, 'stalled');
    expect(conditionOf(bundle, 'Stalled')).toMatchObject({ status: 'True', reason: 'TerminalError' });
    expect(conditionOf(bundle, 'Reconciling')?.status).toBe('False');
    // kubectl get says why by default.
    const table = await run('kubectl', ['get', 'bundle', 'stalled', '-n', ns]);
    expect(table.stdout.split('\n')[0]?.split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'RESOURCES', 'PENDING-DELETIONS', 'AGE']);
    expect(table.stdout).toMatch(/stalled\s+False\s+Stalled: .*missing/);
  });
});
