/**
 * npm run demo: a local control plane where workloads run (simulated nodes),
 * the operator as a child process, the examples, a Deployment becoming Ready
 * and rolling out, and a soft delete walked through (removal with a short
 * deletionDelay, a cancellation, an expiry), printing what happens. Stops the
 * operator and the control plane on every path, failures and Ctrl-C included.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { repoRoot } from '../src/api/crd-paths.js';
import { Annotations } from '../src/api/names.js';
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import type { KubeObject, ResourceType } from '../src/kube/types.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from './controlplane.js';
import { applyCrd } from './crd-install.js';
import { ensureTools } from './tools.js';

const NAMESPACE = 'demo';
const started = Date.now();

function say(message: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`[${seconds}s] ${message}`);
}

function step(title: string): void {
  console.log(`\n== ${title}`);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** stdout of the command; a non-zero exit rejects unless `exitCodeIsAnAnswer` (status says "not Ready" with exit 1). */
async function exec(binary: string, args: string[], env: Record<string, string> = {}, exitCodeIsAnAnswer = false): Promise<string> {
  return await new Promise((resolve, reject) => {
    execFile(binary, args, { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err && exitCodeIsAnAnswer && typeof err.code === 'number') resolve(stdout);
      else if (err) reject(new Error(`${binary.split('/').pop() ?? binary} ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

interface Demo {
  state?: ControlPlaneState;
  operator?: ChildProcess;
  client?: KubeClient;
}

const BUNDLE_RT: ResourceType = {
  group: 'smith.atlassian.com',
  version: 'v1',
  apiVersion: 'smith.atlassian.com/v1',
  kind: 'Bundle',
  plural: 'bundles',
  namespaced: true,
  verbs: [],
};
const CONFIGMAP_RT: ResourceType = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  verbs: [],
};
const DEPLOYMENT_RT: ResourceType = {
  group: 'apps',
  version: 'v1',
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
  verbs: [],
};

function conditions(bundle: KubeObject | undefined): { type: string; status: string; reason?: string; message?: string }[] {
  return (
    (bundle?.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions ?? []
  );
}

function observed(bundle: KubeObject | undefined): boolean {
  return (bundle?.status as { observedGeneration?: number } | undefined)?.observedGeneration === bundle?.metadata.generation;
}

function walkthroughBundle(names: string[]): string {
  const objects: Record<string, Record<string, unknown>> = {
    settings: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'walkthrough-settings' }, data: { mode: 'demo' } },
    cache: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'walkthrough-cache', annotations: { [Annotations.deletionDelay]: '5s' } },
      data: { warm: 'true' },
    },
    keepsake: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'walkthrough-keepsake', annotations: { [Annotations.deletionDelay]: '5s' } },
      data: { precious: 'true' },
    },
  };
  return JSON.stringify({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'walkthrough', namespace: NAMESPACE },
    spec: { resources: names.map((name) => ({ name, spec: { object: objects[name] } })) },
  });
}

async function run(demo: Demo): Promise<void> {
  step('Control plane');
  say(
    'starting etcd, kube-apiserver, kwok (simulated nodes), kube-scheduler and the workload controllers on loopback (the first run on a machine builds them: minutes)',
  );
  const tools = await ensureTools();
  const state = await startControlPlane({ workloads: true });
  demo.state = state;
  await applyCrd(state.kubeconfig);
  say(`kube-apiserver at ${state.server}; Bundle CRD installed (logs in ${state.dir})`);
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig));
  demo.client = client;
  const kubectl = (args: string[], input?: string) =>
    input === undefined
      ? exec(tools.kubectl, args, { KUBECONFIG: state.kubeconfig })
      : new Promise<string>((resolve, reject) => {
          const child = execFile(tools.kubectl, args, { env: { ...process.env, KUBECONFIG: state.kubeconfig } }, (err, stdout, stderr) =>
            err ? reject(new Error(stderr || err.message)) : resolve(stdout),
          );
          child.stdin?.end(input);
        });
  const cli = (args: string[], exitCodeIsAnAnswer = false) =>
    exec(
      process.execPath,
      [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), ...args, '--kubeconfig', state.kubeconfig],
      {},
      exitCodeIsAnAnswer,
    );
  await kubectl(['create', 'namespace', NAMESPACE]);

  step('Operator');
  const metricsPort = await freePort();
  const logFile = join(state.dir, 'operator.log');
  const operator = spawn(
    process.execPath,
    [
      join(repoRoot(), 'dist', 'src', 'main.js'),
      '--kubeconfig',
      state.kubeconfig,
      '--namespace',
      NAMESPACE,
      '--gc=bundles',
      '--leader-elect',
      '--leader-election-namespace',
      NAMESPACE,
      '--metrics-addr',
      `127.0.0.1:${metricsPort}`,
      '--health-addr',
      '0',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  demo.operator = operator;
  const log = createWriteStream(logFile);
  operator.stdout?.pipe(log);
  operator.stderr?.pipe(log);
  const lease = await waitFor('the operator to take the Lease', async () => {
    const l = await client.tryGet(
      {
        group: 'coordination.k8s.io',
        version: 'v1',
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        plural: 'leases',
        namespaced: true,
        verbs: [],
      },
      NAMESPACE,
      'bundlesmith-leader',
    );
    return (l?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
  });
  say(`operator pid ${operator.pid} leads (Lease ${NAMESPACE}/bundlesmith-leader held by ${lease}); JSON logs in ${logFile}`);

  step('Examples');
  const examples = join(repoRoot(), 'examples');
  say('validating them offline: bundlesmith validate examples/...');
  await cli([
    'validate',
    join(examples, 'configmap-secret-deployment.yaml'),
    join(examples, 'soft-delete.yaml'),
    join(examples, 'adoption', 'bundle.yaml'),
    join(examples, 'custom-resource', 'bundle.yaml'),
  ]);
  await kubectl(['apply', '--server-side', '-f', join(examples, 'custom-resource', 'crd.yaml')]);
  await kubectl(['apply', '--server-side', '-n', NAMESPACE, '-f', join(examples, 'adoption', 'existing-configmap.yaml')]);
  say('a pre-existing ConfigMap legacy-settings (no owner) and the example CRD are in place');
  // diff exits 1 when there are changes (kubectl diff's contract): here there are.
  const diff = await cli(['diff', join(examples, 'adoption', 'bundle.yaml'), '-n', NAMESPACE], true);
  say(`bundlesmith diff examples/adoption/bundle.yaml:\n${diff.trimEnd().replace(/^/gm, '        ')}`);
  for (const file of [
    'configmap-secret-deployment.yaml',
    'soft-delete.yaml',
    join('adoption', 'bundle.yaml'),
    join('custom-resource', 'bundle.yaml'),
  ]) {
    await kubectl(['apply', '--server-side', '-n', NAMESPACE, '-f', join(examples, file)]);
  }
  say('applied 4 example Bundles; waiting for the operator to reconcile each');
  const { items } = await client.list(BUNDLE_RT, NAMESPACE);
  for (const b of items) {
    const live = await waitFor(`Bundle ${b.metadata.name} to be reconciled`, async () => {
      const l = await client.tryGet(BUNDLE_RT, NAMESPACE, b.metadata.name);
      return observed(l) && conditions(l).length > 0 ? l : undefined;
    });
    const ready = conditions(live).find((c) => c.type === 'Ready');
    const resources = (live.status as { resourcesReady?: string } | undefined)?.resourcesReady ?? '?';
    say(
      `Bundle ${b.metadata.name}: Ready=${ready?.status ?? '?'} (${ready?.reason ?? ''}), resources ready ${resources}${ready?.status === 'True' ? '' : ` - ${ready?.message ?? ''}`}`,
    );
  }
  say('(no database controller runs here: the example Database never becomes ready, so orders-db waits for it, as it should)');
  const statusAll = await cli(['status', '-n', NAMESPACE], true);
  say(`bundlesmith status -n ${NAMESPACE} (exit 1: not every Bundle is Ready):\n${statusAll.trimEnd().replace(/^/gm, '        ')}`);
  const statusWeb = await cli(['status', 'web', '-n', NAMESPACE], true);
  say(`bundlesmith status web -n ${NAMESPACE}:\n${statusWeb.trimEnd().replace(/^/gm, '        ')}`);
  const adopted = await client.get(CONFIGMAP_RT, NAMESPACE, 'legacy-settings');
  say(
    `legacy-settings adopted: controller ${adopted.metadata.ownerReferences?.find((r) => r.controller)?.kind ?? 'none'}, data ${JSON.stringify(adopted.data)}`,
  );

  step('A Deployment that runs');
  const webReady = (generation?: number) => async () => {
    const web = await client.tryGet(BUNDLE_RT, NAMESPACE, 'web');
    return web !== undefined &&
      observed(web) &&
      (generation === undefined || web.metadata.generation === generation) &&
      conditions(web).some((c) => c.type === 'Ready' && c.status === 'True')
      ? web
      : undefined;
  };
  await waitFor('Bundle web to be Ready', webReady());
  say(
    'Bundle web is Ready: its Deployment has every replica updated and available (pods bound to simulated nodes by kube-scheduler, reported Running by kwok; no container runs)',
  );
  say(
    `kubectl get deployments,replicasets,pods -n ${NAMESPACE} -o wide:\n${(await kubectl(['get', 'deployments,replicasets,pods', '-n', NAMESPACE, '-o', 'wide'])).trimEnd().replace(/^/gm, '        ')}`,
  );
  const hashOf = async () =>
    ((await client.get(DEPLOYMENT_RT, NAMESPACE, 'web')).spec as { template?: { metadata?: { annotations?: Record<string, string> } } })
      .template?.metadata?.annotations?.[Annotations.envRefHash];
  const hashBefore = await hashOf();
  say(
    `its pod template carries smith.atlassian.com/envRefHash=${hashBefore?.slice(0, 16) ?? '?'}…: Smith's hash of web-config and web-credentials, which its container reads`,
  );
  const patched = JSON.parse(
    await kubectl([
      'patch',
      'bundle',
      'web',
      '-n',
      NAMESPACE,
      '--type=json',
      '-o',
      'json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/resources/0/spec/object/data/greeting', value: 'bonjour' }]),
    ]),
  ) as KubeObject;
  say(
    "changed greeting in the Bundle's ConfigMap, nothing in the Deployment: the ConfigMap is applied, then the Deployment with a new hash, so it rolls out",
  );
  await waitFor('Bundle web to be Ready with the new ConfigMap', webReady(patched.metadata.generation));
  await waitFor('the new envRefHash', async () => ((await hashOf()) !== hashBefore ? true : undefined));
  say(`envRefHash is now ${(await hashOf())?.slice(0, 16) ?? '?'}…`);
  say('Bundle web is Ready again, once the new ReplicaSet was available and the old one scaled to 0:');
  say(
    `kubectl get replicasets,pods -n ${NAMESPACE}:\n${(await kubectl(['get', 'replicasets,pods', '-l', 'app=web', '-n', NAMESPACE])).trimEnd().replace(/^/gm, '        ')}`,
  );

  step('Soft delete: removal, cancellation, expiry');
  await kubectl(['apply', '--server-side', '-f', '-'], walkthroughBundle(['settings', 'cache', 'keepsake']));
  await waitFor('walkthrough to be Ready', async () =>
    conditions(await client.tryGet(BUNDLE_RT, NAMESPACE, 'walkthrough')).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  say('Bundle walkthrough is Ready with settings, cache and keepsake (cache and keepsake carry deletionDelay: 5s)');
  const treeBefore = await cli(['tree', 'walkthrough', '-n', NAMESPACE]);
  say(`bundlesmith tree walkthrough -n ${NAMESPACE}:\n${treeBefore.trimEnd().replace(/^/gm, '        ')}`);

  await kubectl(['apply', '--server-side', '-f', '-'], walkthroughBundle(['settings']));
  say('removed cache and keepsake from the Bundle');
  const [cacheStamp] = await waitFor('both to be stamped', async () => {
    const [cache, keepsake] = await Promise.all([
      client.tryGet(CONFIGMAP_RT, NAMESPACE, 'walkthrough-cache'),
      client.tryGet(CONFIGMAP_RT, NAMESPACE, 'walkthrough-keepsake'),
    ]);
    const a = cache?.metadata.annotations?.[Annotations.deletionTimestamp];
    const b = keepsake?.metadata.annotations?.[Annotations.deletionTimestamp];
    return a && b ? ([a, b] as const) : undefined;
  });
  say(`the operator stamped both instead of deleting them: ${Annotations.deletionTimestamp}=${cacheStamp}`);
  await waitFor(
    'the countdowns in the Bundle status',
    async () =>
      ((await client.get(BUNDLE_RT, NAMESPACE, 'walkthrough')).status as { pendingDeletions?: unknown[] } | undefined)?.pendingDeletions
        ?.length === 2,
  );
  const treeAfter = await cli(['tree', 'walkthrough', '-n', NAMESPACE]);
  say(`bundlesmith tree walkthrough -n ${NAMESPACE} (after the removal):\n${treeAfter.trimEnd().replace(/^/gm, '        ')}`);
  const pending = await cli(['pending', '-n', NAMESPACE]);
  say(`bundlesmith pending -n ${NAMESPACE}:\n${pending.trimEnd().replace(/^/gm, '        ')}`);

  await kubectl(['apply', '--server-side', '-f', '-'], walkthroughBundle(['settings', 'keepsake']));
  say('cancellation: keepsake is listed in the Bundle again');
  await waitFor('the keepsake stamp to be removed', async () => {
    const keepsake = await client.tryGet(CONFIGMAP_RT, NAMESPACE, 'walkthrough-keepsake');
    return keepsake !== undefined && keepsake.metadata.annotations?.[Annotations.deletionTimestamp] === undefined;
  });
  say('keepsake: stamp removed, the object stays (same UID, never recreated)');

  const stampedAt = Date.parse(cacheStamp);
  await waitFor(
    'cache to be deleted on expiry',
    async () => (await client.tryGet(CONFIGMAP_RT, NAMESPACE, 'walkthrough-cache')) === undefined,
    30_000,
  );
  say(`expiry: cache deleted ${((Date.now() - stampedAt) / 1000).toFixed(1)} s after it was stamped (deletionDelay 5s)`);
  const walkthrough = await client.get(BUNDLE_RT, NAMESPACE, 'walkthrough');
  say(
    `Bundle walkthrough status.pendingDeletions: ${JSON.stringify((walkthrough.status as { pendingDeletions?: unknown[] }).pendingDeletions ?? [])}`,
  );

  step('Metrics');
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  for (const line of metrics
    .split('\n')
    .filter((l) => /^bundlesmith_(leader|reconcile_total|pending_deletions|bundles\{)/.test(l))
    .slice(0, 12))
    say(line);
}

async function cleanup(demo: Demo): Promise<void> {
  step('Cleanup');
  demo.client?.close();
  const operator = demo.operator;
  if (operator && operator.exitCode === null && operator.signalCode === null) {
    const exited = new Promise<number | null>((resolve) => operator.once('exit', (code) => resolve(code)));
    operator.kill('SIGTERM');
    const forced = setTimeout(() => operator.kill('SIGKILL'), 25_000);
    const code = await exited;
    clearTimeout(forced);
    say(`operator stopped on SIGTERM (exit ${code ?? 'signal'}): in-flight work finished, Lease released`);
  }
  if (demo.state) {
    stopControlPlane(demo.state);
    say('control plane stopped and its directory removed');
  }
}

const demo: Demo = {};
let cleaning: Promise<void> | undefined;
const cleanOnce = () => (cleaning ??= cleanup(demo));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: cleaning up`);
    cleanOnce()
      .catch((err: unknown) => console.error(`cleanup failed: ${String(err)}`))
      .finally(() => process.exit(130));
  });
}

run(demo)
  .then(async () => {
    await cleanOnce();
    say('demo finished');
  })
  .catch(async (err: unknown) => {
    console.error(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}`);
    await cleanOnce().catch((e: unknown) => console.error(`cleanup failed: ${String(e)}`));
    process.exitCode = 1;
  });
