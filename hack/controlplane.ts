/**
 * Starts and stops a real control plane on loopback: etcd, kube-apiserver
 * and, optionally, kube-controller-manager running only its garbage
 * collector (the reference implementation the GC tests compare against).
 * Only processes this module started are ever signalled, by pid.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
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
  /** kube-controller-manager's port and extra flags, when it runs (so it can be restarted). */
  controllerManager?: { port: number; args: string[] };
}

export interface StartOptions {
  /** Also run kube-controller-manager with only the garbage-collector controller. */
  withGarbageCollector?: boolean;
  /** Where to put data, certs, logs (default: a new temp dir). */
  dir?: string;
  /** How long to wait for /readyz. */
  readyTimeoutMs?: number;
  /** Extra kube-controller-manager flags (benchmarks: `--kube-api-qps`, `--kube-api-burst`). */
  controllerManagerArgs?: string[];
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, a serving certificate for 127.0.0.1/localhost, and a service-account signing key. */
function makeCertificates(pki: string): void {
  mkdirSync(pki, { recursive: true });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '30', '-subj', '/CN=bundlesmith-test-ca'], pki);
  writeFileSync(join(pki, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n');
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'serving.key', '-out', 'serving.csr', '-subj', '/CN=kube-apiserver'], pki);
  openssl(['x509', '-req', '-in', 'serving.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'serving.crt', '-days', '30', '-extfile', 'san.ext'], pki);
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

function startProcess(name: string, binary: string, args: string[], dir: string): number {
  const log = openSync(join(dir, `${name}.log`), 'a');
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', log, log] });
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
    const req = mod.request(u, { method: 'GET', headers: token ? { Authorization: `Bearer ${token}` } : {}, ca: caFile ? readFileSync(caFile) : undefined, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
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
  // Static tokens: an admin in system:masters for tests and tools, and the
  // reference garbage collector's own identity.
  writeFileSync(join(pki, 'tokens.csv'), `${adminToken},admin,admin-uid,system:masters\n${gcToken},system:kube-controller-manager,kcm-uid,\n`);

  const [etcdClient, etcdPeer, apiPort, kcmPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const state: ControlPlaneState = {
    dir,
    kubeconfig: join(dir, 'kubeconfig'),
    server: `https://127.0.0.1:${apiPort}`,
    adminToken,
    pids: {},
    withGarbageCollector: opts.withGarbageCollector ?? false,
  };
  const save = () => writeFileSync(join(dir, 'state.json'), JSON.stringify(state, null, 2));
  const timeout = opts.readyTimeoutMs ?? 90_000;
  try {
    state.pids.etcd = startProcess('etcd', tools.etcd, [
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
    ], dir);
    save();
    await waitFor('etcd', timeout, () => httpOk(`http://127.0.0.1:${etcdClient}/health`), () =>
      alive(state.pids.etcd ?? 0) ? undefined : `etcd exited at start. Last lines of ${join(dir, 'etcd.log')}:\n${tail(join(dir, 'etcd.log'))}`,
    );

    state.pids['kube-apiserver'] = startProcess('kube-apiserver', tools.kubeApiserver, [
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
      // No nodes run here; the endpoint reconciler would only log about them.
      '--endpoint-reconciler-type=none',
      '--profiling=false',
      '--v=1',
    ], dir);
    save();
    await waitFor('kube-apiserver', timeout, () => httpOk(`${state.server}/readyz`, adminToken, join(pki, 'ca.crt')), () =>
      alive(state.pids['kube-apiserver'] ?? 0) ? undefined : `kube-apiserver exited at start. Last lines of ${join(dir, 'kube-apiserver.log')}:\n${tail(join(dir, 'kube-apiserver.log'))}`,
    );
    writeFileSync(state.kubeconfig, kubeconfigYaml(state.server, join(pki, 'ca.crt'), adminToken));

    if (state.withGarbageCollector) {
      writeFileSync(join(dir, 'kcm.kubeconfig'), kubeconfigYaml(state.server, join(pki, 'ca.crt'), gcToken));
      state.controllerManager = { port: kcmPort, args: opts.controllerManagerArgs ?? [] };
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
 * Starts (or starts again, after stopControllerManager) this control
 * plane's kube-controller-manager, running only its garbage collector, and
 * waits for its /healthz.
 */
export async function startControllerManager(state: ControlPlaneState, timeoutMs = 90_000): Promise<void> {
  const kcm = state.controllerManager;
  if (!kcm) throw new Error('this control plane was started without kube-controller-manager (withGarbageCollector)');
  const tools: Tools = await ensureTools();
  const dir = state.dir;
  state.pids['kube-controller-manager'] = startProcess('kube-controller-manager', tools.kubeControllerManager, [
    `--kubeconfig=${join(dir, 'kcm.kubeconfig')}`,
    '--controllers=garbage-collector-controller',
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${kcm.port}`,
    `--cert-dir=${join(dir, 'kcm-certs')}`,
    '--use-service-account-credentials=false',
    '--v=1',
    ...kcm.args,
  ], dir);
  writeFileSync(join(dir, 'state.json'), JSON.stringify(state, null, 2));
  await waitFor('kube-controller-manager', timeoutMs, () => httpOk(`https://127.0.0.1:${kcm.port}/healthz`).then(() => true), () =>
    alive(state.pids['kube-controller-manager'] ?? 0) ? undefined : `kube-controller-manager exited at start. Last lines of ${join(dir, 'kube-controller-manager.log')}:\n${tail(join(dir, 'kube-controller-manager.log'))}`,
  );
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
  const order = ['kube-controller-manager', 'kube-apiserver', 'etcd'];
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
