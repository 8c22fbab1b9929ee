/**
 * `bundlesmith tree` and `status` (issue 14) on the real apiserver with an
 * operator running: a Bundle with a blocked resource, a pending deletion, an
 * adopted object and objects the collector sees owned two levels down;
 * golden output with the time frozen; the same through `kubectl bundle`.
 */
import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { Annotations } from '../../src/api/names.js';
import { runCli } from '../../src/cli/program.js';
import type { CliIo } from '../../src/cli/io.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, kubeconfigPath, run, waitFor } from './harness.js';
import { BUNDLE_RESOURCE_TYPE } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('clitree');

function capture(now?: number): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { out: (l) => out.push(l), err: (l) => err.push(l), isTty: false, ...(now !== undefined ? { now: () => now } : {}) },
    out,
    err,
  };
}

const cm = (name: string, annotations?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  data: { v: '1' },
});
// No kube-controller-manager runs here, so a Deployment never becomes available: what depends on it stays Blocked.
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'tr-app' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'tr' } },
    template: { metadata: { labels: { app: 'tr' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] } },
  },
};

function manifest(withOld: boolean): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'tr', namespace: f.ns },
    spec: {
      resources: [
        { name: 'cfg', spec: { object: cm('tr-cfg') } },
        { name: 'adopted', spec: { object: cm('tr-adopted') } },
        { name: 'app', references: [{ resource: 'cfg' }], spec: { object: deployment } },
        { name: 'after-app', references: [{ resource: 'app' }, { resource: 'adopted' }], spec: { object: cm('tr-after') } },
        ...(withOld ? [{ name: 'old', spec: { object: cm('tr-old', { [Annotations.deletionDelay]: '1h' }) } }] : []),
      ],
    },
  };
}

async function applyAndObserve(m: Record<string, unknown>): Promise<KubeObject> {
  const result = await run('kubectl', ['apply', '--server-side', '-f', '-'], { input: JSON.stringify(m) });
  if (result.code !== 0) throw new Error(result.stderr);
  return await waitFor('the operator to observe the Bundle', async () => {
    const live = await f.env.client.tryGet(BUNDLE_RESOURCE_TYPE, f.ns, 'tr');
    const observed = (live?.status as { observedGeneration?: number } | undefined)?.observedGeneration;
    return live && observed === live.metadata.generation && conditionOf(live, 'InProgress') !== undefined ? live : undefined;
  });
}

it("tree: the resources by references with their state, the collector's view, the countdown (golden, time frozen); status says why it is not Ready", async () => {
  // An orphan the Bundle adopts, and objects that the collector sees owned by tr-cfg, two levels down.
  await f.env.client.create(f.t.configMap, { ...cm('tr-adopted'), metadata: { name: 'tr-adopted', namespace: f.ns } });
  await applyAndObserve(manifest(true));
  const cfg = await waitFor('tr-cfg', () => f.env.client.tryGet(f.t.configMap, f.ns, 'tr-cfg'));
  const child = await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'tr-child',
      namespace: f.ns,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'tr-cfg', uid: cfg.metadata.uid }],
    },
  });
  await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'tr-grandchild',
      namespace: f.ns,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'tr-child', uid: child.metadata.uid }],
    },
  });
  await waitFor('tr-old to exist', () => f.env.client.tryGet(f.t.configMap, f.ns, 'tr-old'));

  // tr-old leaves the Bundle: a countdown of 1h starts.
  await applyAndObserve(manifest(false));
  const pending = await waitFor('the pending deletion in status', async () => {
    const live = await f.env.client.get(BUNDLE_RESOURCE_TYPE, f.ns, 'tr');
    return ((live.status as { pendingDeletions?: { deleteAfter: string }[] } | undefined)?.pendingDeletions ?? [])[0];
  });
  const now = Date.parse(pending.deleteAfter) - (3 * 60 + 12) * 1000;

  const tree = capture(now);
  expect(await runCli(['tree', 'tr', '-n', f.ns, '--kubeconfig', kubeconfigPath()], tree.io)).toBe(0);
  expect(tree.out).toEqual(expectedTree(f.ns, pending.deleteAfter));

  const json = capture(now);
  expect(await runCli(['tree', 'tr', '-n', f.ns, '-o', 'json', '--kubeconfig', kubeconfigPath()], json.io)).toBe(0);
  const parsed = JSON.parse(json.out.join('\n')) as { pending: { name: string; remainingMs: number }[] };
  expect(parsed.pending).toEqual([expect.objectContaining({ name: 'tr-old', remainingMs: 192_000 })]);

  const status = capture(now);
  expect(await runCli(['status', 'tr', '-n', f.ns, '--kubeconfig', kubeconfigPath()], status.io)).toBe(1);
  expect(status.out[0]).toBe('Bundle ' + f.ns + '/tr: InProgress, 2/4 resources ready');
  expect(status.out).toContain('resources not ready:');
  expect(status.out.some((l) => l.startsWith('  after-app: Blocked'))).toBe(true);
  expect(status.out).toContain(`  ConfigMap/tr-old deletes in 3m12s (after ${pending.deleteAfter})`);

  const waited = capture(now);
  expect(await runCli(['status', 'tr', '-n', f.ns, '--wait', '--timeout', '1s', '--kubeconfig', kubeconfigPath()], waited.io)).toBe(1);
  const table = capture(now);
  expect(await runCli(['status', '-n', f.ns, '--kubeconfig', kubeconfigPath()], table.io)).toBe(1);
  const width = Math.max('NAMESPACE'.length, f.ns.length);
  expect(table.out).toEqual([
    `${'NAMESPACE'.padEnd(width)}  BUNDLE  STATE       READY  ERRORS  PENDING  SOONEST`,
    `${f.ns.padEnd(width)}  tr      InProgress  2/4    0       1        ConfigMap/tr-old deletes in 3m12s`,
  ]);
}, 120_000);

function expectedTree(namespace: string, deleteAfter: string): string[] {
  return [
    `Bundle ${namespace}/tr  InProgress  2/4 ready  1 pending deletion`,
    '├─ ConfigMap/tr-cfg  Ready',
    '│  ├─ ConfigMap/tr-child',
    '│  │  └─ ConfigMap/tr-grandchild',
    '│  └─ Deployment/tr-app  InProgress  waiting for the controller to observe generation 1 (observed none)',
    '│     └─ ConfigMap/tr-after  Blocked  (not created)  also needs adopted  waiting for "app" (in progress)',
    '└─ ConfigMap/tr-adopted  Ready',
    'pending deletion (put the resource back in the Bundle to keep it):',
    `└─ ConfigMap/tr-old  deletes in 3m12s  (after ${deleteAfter})`,
  ];
}

it('status --wait returns 0 once the Bundle is Ready; tree and status answer as a kubectl plugin', async () => {
  const ready = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'tr-ok', namespace: f.ns },
    spec: { resources: [{ name: 'a', spec: { object: cm('tr-ok-a') } }] },
  };
  const applied = await run('kubectl', ['apply', '--server-side', '-f', '-'], { input: JSON.stringify(ready) });
  expect(applied.code).toBe(0);
  const waited = capture();
  expect(await runCli(['status', 'tr-ok', '-n', f.ns, '--wait', '--timeout', '60s', '--kubeconfig', kubeconfigPath()], waited.io)).toBe(0);
  expect(waited.out[0]).toBe(`Bundle ${f.ns}/tr-ok: Ready, 1/1 resources ready`);

  // --watch redraws until interrupted: two frames, then Ctrl-C (the signal).
  const stop = new AbortController();
  const frames: string[] = [];
  const watchIo: CliIo = {
    out: (l) => {
      frames.push(l);
      if (frames.filter((line) => line.startsWith('Bundle ')).length >= 2) stop.abort();
    },
    err: () => {},
    isTty: false,
    signal: stop.signal,
  };
  expect(await runCli(['tree', 'tr-ok', '-n', f.ns, '--watch', '--kubeconfig', kubeconfigPath()], watchIo)).toBe(0);
  expect(frames.filter((line) => line === `Bundle ${f.ns}/tr-ok  Ready  1/1 ready`)).toHaveLength(2);

  // npm links the package's bin kubectl-bundle to the CLI: kubectl finds it on PATH.
  const bin = mkdtempSync(join(tmpdir(), 'bundlesmith-plugin-'));
  try {
    const cliMain = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
    chmodSync(cliMain, 0o755);
    symlinkSync(cliMain, join(bin, 'kubectl-bundle'));
    const pathEnv = `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
    const tree = await run('kubectl', ['bundle', 'tree', 'tr-ok', '-n', f.ns, '--kubeconfig', kubeconfigPath()], {
      env: { PATH: pathEnv },
    });
    expect({ code: tree.code, stderr: tree.stderr }).toEqual({ code: 0, stderr: '' });
    expect(tree.stdout.split('\n').slice(0, 2)).toEqual([`Bundle ${f.ns}/tr-ok  Ready  1/1 ready`, '└─ ConfigMap/tr-ok-a  Ready']);
    const status = await run('kubectl', ['bundle', 'status', '--all', '--kubeconfig', kubeconfigPath()], { env: { PATH: pathEnv } });
    expect(status.stdout).toContain('tr-ok');
    expect(status.code).toBe(1); // tr (elsewhere in this namespace) is not Ready
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}, 120_000);
