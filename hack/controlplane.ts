/**
 * Starts and stops a real control plane on loopback: etcd, kube-apiserver
 * and, on option, kube-controller-manager running its garbage collector (the
 * reference implementation the GC tests compare against) and/or workloads
 * that run: simulated nodes (kwok plays their kubelets), kube-scheduler, and
 * kube-controller-manager's workload controllers, so Deployments, StatefulSets,
 * DaemonSets and Jobs get pods that become Running and Ready.
 * Only processes this module started are ever signalled, by pid.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import type { ResourceType } from '../src/kube/types.js';
import { freePort } from './ports.js';
import { ensureTools, type Tools } from './tools.js';

export interface ControlPlaneState {
  dir: string;
  kubeconfig: string;
  server: string;
  adminToken: string;
  /** Processes this control plane started, by name. */
  pids: Record<string, number>;
  withGarbageCollector: boolean;
  /** Simulated nodes, kube-scheduler and the workload controllers run (absent in states written before they existed). */
  withWorkloads?: boolean;
  /** kube-controller-manager's port, controllers and extra flags, when it runs (so it can be restarted). */
  controllerManager?: { port: number; args: string[]; controllers?: string[] };
}

export interface StartOptions {
  /** Also run kube-controller-manager's garbage-collector controller. */
  withGarbageCollector?: boolean;
  /**
   * Also run workloads: `nodes` simulated Nodes (kwok), kube-scheduler, and
   * kube-controller-manager's workload controllers (WORKLOAD_CONTROLLERS).
   * The garbage collector runs only if withGarbageCollector asks for it too.
   */
  workloads?: boolean | { nodes?: number };
  /** Where to put data, certs, logs (default: a new temp dir). */
  dir?: string;
  /** How long to wait for /readyz. */
  readyTimeoutMs?: number;
  /** Extra kube-controller-manager flags (benchmarks: `--kube-api-qps`, `--kube-api-burst`). */
  controllerManagerArgs?: string[];
}

/**
 * kube-controller-manager's controllers that make workloads run: their
 * objects get ReplicaSets and pods, and the serviceaccount controller makes
 * each namespace's "default" ServiceAccount, without which the apiserver's
 * ServiceAccount admission refuses every pod.
 */
export const WORKLOAD_CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'cronjob-controller',
  'serviceaccount-controller',
] as const;

/** The bootstrap ClusterRole (system:controller:<name>) each controller runs with in a real cluster. */
const CONTROLLER_ROLES: Record<string, string> = {
  'deployment-controller': 'deployment-controller',
  'replicaset-controller': 'replicaset-controller',
  'statefulset-controller': 'statefulset-controller',
  'daemonset-controller': 'daemon-set-controller',
  'job-controller': 'job-controller',
  'cronjob-controller': 'cronjob-controller',
  'serviceaccount-controller': 'service-account-controller',
};

/** The annotation kwok is told to manage nodes by (its own convention). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const DEFAULT_SIMULATED_NODES = 2;

const NODE_RT: ResourceType = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, verbs: [] };
const CLUSTER_ROLE_BINDING_RT: ResourceType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  plural: 'clusterrolebindings',
  namespaced: false,
  verbs: [],
};

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, a serving certificate for 127.0.0.1/localhost, and a service-account signing key. */
function makeCertificates(pki: string): void {
  mkdirSync(pki, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '30',
      '-subj',
      '/CN=bundlesmith-test-ca',
    ],
    pki,
  );
  writeFileSync(
    join(pki, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
  );
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'serving.key', '-out', 'serving.csr', '-subj', '/CN=kube-apiserver'], pki);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'serving.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'serving.crt',
      '-days',
      '30',
      '-extfile',
      'san.ext',
    ],
    pki,
  );
  openssl(['genrsa', '-out', 'sa.key', '2048'], pki);
  openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], pki);
}

function kubeconfigYaml(server: string, caFile: string, token: string): string {
  const ca = readFileSync(caFile).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: bundlesmith-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    '- name: admin',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: bundlesmith-test',
    '  context:',
    '    cluster: bundlesmith-test',
    '    user: admin',
    '    namespace: default',
    'current-context: bundlesmith-test',
    '',
  ].join('\n');
}

function startProcess(name: string, binary: string, args: string[], dir: string, env: Record<string, string> = {}): number {
  const log = openSync(join(dir, `${name}.log`), 'a');
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', log, log], env: { ...process.env, ...env } });
  closeSync(log);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${name} (${binary})`);
  return child.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function tail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>, failFast: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const failure = failFast();
    if (failure) throw new Error(failure);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready within ${Math.round(timeoutMs / 1000)} s`);
}

async function httpOk(url: string, token?: string, caFile?: string): Promise<boolean> {
  const https = await import('node:https');
  const http = await import('node:http');
  return await new Promise((resolve) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(
      u,
      {
        method: 'GET',
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        ca: caFile ? readFileSync(caFile) : undefined,
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Whether anything answers HTTPS on `url` (a TLS handshake and a status line, whatever the status). */
async function httpAnswers(url: string): Promise<boolean> {
  const https = await import('node:https');
  return await new Promise((resolve) => {
    const req = https.request(new URL(url), { method: 'GET', rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlaneState> {
  const tools: Tools = await ensureTools();
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'bundlesmith-cp-'));
  mkdirSync(dir, { recursive: true });
  const pki = join(dir, 'pki');
  makeCertificates(pki);
  const adminToken = randomBytes(24).toString('hex');
  const gcToken = randomBytes(24).toString('hex');
  const schedulerToken = randomBytes(24).toString('hex');
  const kwokToken = randomBytes(24).toString('hex');
  // Static tokens: an admin in system:masters for tests and tools,
  // kube-controller-manager's own identity (RBAC grants it only the roles of
  // the controllers it runs), kube-scheduler's (bound to its roles by the
  // apiserver's bootstrap policy), and kwok's: it plays the kubelet of every
  // simulated node, which the node authorizer would need one identity per
  // node for, so it is an admin.
  writeFileSync(
    join(pki, 'tokens.csv'),
    [
      `${adminToken},admin,admin-uid,system:masters`,
      `${gcToken},system:kube-controller-manager,kcm-uid,`,
      `${schedulerToken},system:kube-scheduler,scheduler-uid,`,
      `${kwokToken},kwok,kwok-uid,system:masters`,
      '',
    ].join('\n'),
  );

  const [etcdClient, etcdPeer, apiPort, kcmPort, schedulerPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const state: ControlPlaneState = {
    dir,
    kubeconfig: join(dir, 'kubeconfig'),
    server: `https://127.0.0.1:${apiPort}`,
    adminToken,
    pids: {},
    withGarbageCollector: opts.withGarbageCollector ?? false,
    withWorkloads: opts.workloads !== undefined && opts.workloads !== false,
  };
  const save = () => writeFileSync(join(dir, 'state.json'), JSON.stringify(state, null, 2));
  const timeout = opts.readyTimeoutMs ?? 90_000;
  try {
    state.pids.etcd = startProcess(
      'etcd',
      tools.etcd,
      [
        '--name=default',
        `--data-dir=${join(dir, 'etcd-data')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
        '--listen-metrics-urls=',
        // Test data is disposable: skip fsync so a test run is not bound by disk latency.
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      dir,
    );
    save();
    await waitFor(
      'etcd',
      timeout,
      () => httpOk(`http://127.0.0.1:${etcdClient}/health`),
      () =>
        alive(state.pids.etcd ?? 0)
          ? undefined
          : `etcd exited at start. Last lines of ${join(dir, 'etcd.log')}:\n${tail(join(dir, 'etcd.log'))}`,
    );

    state.pids['kube-apiserver'] = startProcess(
      'kube-apiserver',
      tools.kubeApiserver,
      [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        `--cert-dir=${join(dir, 'apiserver-certs')}`,
        `--tls-cert-file=${join(pki, 'serving.crt')}`,
        `--tls-private-key-file=${join(pki, 'serving.key')}`,
        `--client-ca-file=${join(pki, 'ca.crt')}`,
        `--token-auth-file=${join(pki, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        `--service-account-key-file=${join(pki, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
        '--service-account-issuer=https://kubernetes.default.svc',
        '--service-cluster-ip-range=10.96.0.0/24',
        '--allow-privileged=true',
        // Nodes here are simulated at most; the endpoint reconciler would only log about them.
        '--endpoint-reconciler-type=none',
        '--profiling=false',
        '--v=1',
      ],
      dir,
    );
    save();
    await waitFor(
      'kube-apiserver',
      timeout,
      () => httpOk(`${state.server}/readyz`, adminToken, join(pki, 'ca.crt')),
      () =>
        alive(state.pids['kube-apiserver'] ?? 0)
          ? undefined
          : `kube-apiserver exited at start. Last lines of ${join(dir, 'kube-apiserver.log')}:\n${tail(join(dir, 'kube-apiserver.log'))}`,
    );
    writeFileSync(state.kubeconfig, kubeconfigYaml(state.server, join(pki, 'ca.crt'), adminToken));

    if (state.withWorkloads) {
      const nodes = typeof opts.workloads === 'object' ? (opts.workloads.nodes ?? DEFAULT_SIMULATED_NODES) : DEFAULT_SIMULATED_NODES;
      writeFileSync(join(dir, 'kwok.kubeconfig'), kubeconfigYaml(state.server, join(pki, 'ca.crt'), kwokToken));
      writeFileSync(join(dir, 'scheduler.kubeconfig'), kubeconfigYaml(state.server, join(pki, 'ca.crt'), schedulerToken));
      await startSimulatedNodes(state, tools, nodes, timeout);
      state.pids['kube-scheduler'] = startProcess(
        'kube-scheduler',
        tools.kubeScheduler,
        [
          `--kubeconfig=${join(dir, 'scheduler.kubeconfig')}`,
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          `--secure-port=${schedulerPort}`,
          `--cert-dir=${join(dir, 'scheduler-certs')}`,
          '--v=1',
        ],
        dir,
      );
      save();
      await waitForProcess(state, 'kube-scheduler', `https://127.0.0.1:${schedulerPort}/healthz`, timeout);
    }
    if (state.withGarbageCollector || state.withWorkloads) {
      const controllers = [
        ...(state.withGarbageCollector ? ['garbage-collector-controller'] : []),
        ...(state.withWorkloads ? WORKLOAD_CONTROLLERS : []),
      ];
      if (state.withWorkloads) await bindControllerRoles(state.kubeconfig, WORKLOAD_CONTROLLERS);
      writeFileSync(join(dir, 'kcm.kubeconfig'), kubeconfigYaml(state.server, join(pki, 'ca.crt'), gcToken));
      state.controllerManager = { port: kcmPort, args: opts.controllerManagerArgs ?? [], controllers };
      await startControllerManager(state, timeout);
    }
    save();
    return state;
  } catch (err) {
    stopControlPlane(state, { keepDir: true });
    throw new Error(`the test control plane did not come up: ${(err as Error).message}\n(logs kept in ${dir})`);
  }
}

/**
 * Grants kube-controller-manager's identity the bootstrap role of each
 * controller it runs, as a real cluster's per-controller service accounts
 * have (the garbage collector's is granted by the tests that run it).
 */
async function bindControllerRoles(kubeconfig: string, controllers: readonly string[]): Promise<void> {
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  try {
    for (const controller of controllers) {
      const role = `system:controller:${CONTROLLER_ROLES[controller] ?? controller}`;
      await client.apply(
        CLUSTER_ROLE_BINDING_RT,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: `bundlesmith-test:kcm:${controller}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' }],
        },
        { fieldManager: 'bundlesmith-test', force: true },
      );
    }
  } finally {
    client.close();
  }
}

/**
 * Creates `count` Nodes annotated for kwok, starts kwok with the Stage
 * config (hack/kwok/stages.yaml) and waits until every node is Ready.
 */
async function startSimulatedNodes(state: ControlPlaneState, tools: Tools, count: number, timeoutMs: number): Promise<void> {
  const dir = state.dir;
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig));
  try {
    const names = Array.from({ length: count }, (_, i) => `kwok-node-${i}`);
    for (const name of names) {
      await client.apply(
        NODE_RT,
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name,
            annotations: { [KWOK_NODE_ANNOTATION]: 'fake' },
            labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
          },
        },
        { fieldManager: 'bundlesmith-test', force: true },
      );
    }
    state.pids.kwok = startProcess(
      'kwok',
      tools.kwok,
      [
        `--kubeconfig=${join(dir, 'kwok.kubeconfig')}`,
        `--config=${tools.kwokStages}`,
        `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
        // Addresses nothing routes to: no pod runs, kwok only reports them.
        '--node-ip=10.254.0.1',
        '--cidr=10.244.0.0/16',
        '--v=INFO',
      ],
      dir,
      {
        // kwok also reads ~/.kwok/kwok.yaml when it exists: not a user's own here.
        HOME: dir,
      },
    );
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state, null, 2));
    const log = join(dir, 'kwok.log');
    await waitFor(
      `${count} simulated nodes to be Ready`,
      timeoutMs,
      async () => {
        const { items } = await client.list(NODE_RT, undefined);
        const ready = items.filter(
          (n) =>
            names.includes(n.metadata.name) &&
            ((n.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some(
              (c) => c.type === 'Ready' && c.status === 'True',
            ),
        );
        return ready.length === names.length;
      },
      () => (alive(state.pids.kwok ?? 0) ? undefined : `kwok exited at start. Last lines of ${log}:\n${tail(log)}`),
    );
    // The apiserver taints every new Node not-ready (TaintNodesByCondition);
    // in a real cluster the node lifecycle controller lifts the taint once
    // the node reports Ready. That controller does not run here (it would
    // evict on missed heartbeats, which simulated nodes have no use for), so
    // the taint is lifted here, once kwok has made the node Ready.
    for (const name of names) await client.patch(NODE_RT, undefined, name, { spec: { taints: null } }, 'merge');
  } finally {
    client.close();
  }
}

/** Waits until a started process answers on `url` (any HTTP answer: these ports need a client certificate for 200), failing fast if it exits. */
async function waitForProcess(state: ControlPlaneState, name: string, url: string, timeoutMs: number): Promise<void> {
  const log = join(state.dir, `${name}.log`);
  await waitFor(
    name,
    timeoutMs,
    () => httpAnswers(url),
    () => (alive(state.pids[name] ?? 0) ? undefined : `${name} exited at start. Last lines of ${log}:\n${tail(log)}`),
  );
}

/**
 * Starts (or starts again, after stopControllerManager) this control
 * plane's kube-controller-manager, running its garbage collector and/or the
 * workload controllers as the control plane was started with, and waits for
 * its port to answer.
 */
export async function startControllerManager(state: ControlPlaneState, timeoutMs = 90_000): Promise<void> {
  const kcm = state.controllerManager;
  if (!kcm) throw new Error('this control plane was started without kube-controller-manager (withGarbageCollector or workloads)');
  const tools: Tools = await ensureTools();
  const dir = state.dir;
  state.pids['kube-controller-manager'] = startProcess(
    'kube-controller-manager',
    tools.kubeControllerManager,
    [
      `--kubeconfig=${join(dir, 'kcm.kubeconfig')}`,
      `--controllers=${(kcm.controllers ?? ['garbage-collector-controller']).join(',')}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${kcm.port}`,
      `--cert-dir=${join(dir, 'kcm-certs')}`,
      '--use-service-account-credentials=false',
      '--v=1',
      ...kcm.args,
    ],
    dir,
  );
  writeFileSync(join(dir, 'state.json'), JSON.stringify(state, null, 2));
  await waitForProcess(state, 'kube-controller-manager', `https://127.0.0.1:${kcm.port}/healthz`, timeoutMs);
}

/**
 * Stops this control plane's kube-controller-manager (SIGKILL by default: a
 * crash, no cleanup) and waits until the process is gone.
 */
export function stopControllerManager(state: ControlPlaneState, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): void {
  const pid = state.pids['kube-controller-manager'];
  if (!pid || !alive(pid) || !isOurProcess(pid, state.dir)) return;
  process.kill(pid, signal);
  const deadline = Date.now() + 10_000;
  while (alive(pid) && isOurProcess(pid, state.dir) && Date.now() < deadline) execFileSync('sleep', ['0.05']);
  if (alive(pid) && isOurProcess(pid, state.dir)) process.kill(pid, 'SIGKILL');
  delete state.pids['kube-controller-manager'];
}

/** Stops the processes this control plane started (by pid) and removes its directory. */
export function stopControlPlane(state: ControlPlaneState, opts: { keepDir?: boolean } = {}): void {
  const order = ['kube-controller-manager', 'kube-scheduler', 'kwok', 'kube-apiserver', 'etcd'];
  for (const name of order) {
    const pid = state.pids[name];
    if (pid && alive(pid) && isOurProcess(pid, state.dir)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }
  const deadline = Date.now() + 10_000;
  for (const name of order) {
    const pid = state.pids[name];
    if (!pid) continue;
    while (alive(pid) && isOurProcess(pid, state.dir) && Date.now() < deadline) execFileSync('sleep', ['0.1']);
    if (alive(pid) && isOurProcess(pid, state.dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  if (!opts.keepDir) rmSync(state.dir, { recursive: true, force: true });
}

/** A pid is ours only if its command line names our directory (pids get reused). */
function isOurProcess(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return false;
  }
}

export function readState(dir: string): ControlPlaneState {
  return JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as ControlPlaneState;
}
