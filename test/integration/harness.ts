/**
 * Helpers for integration tests against the real control plane started by
 * global-setup.ts: a client, a fresh namespace per test file, polling waits,
 * and the kubectl / helm binaries.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import type { Clock, ServerTime } from '../../src/kube/clock.js';

export function kubeconfigPath(): string {
  const path = process.env.BUNDLESMITH_TEST_KUBECONFIG;
  if (!path)
    throw new Error(
      'BUNDLESMITH_TEST_KUBECONFIG is not set: integration tests must run through jest with the integration project (global setup starts the control plane)',
    );
  return path;
}

export interface TestEnv {
  client: KubeClient;
  discovery: Discovery;
  kubeconfig: string;
  close(): void;
}

export async function connect(): Promise<TestEnv> {
  const kubeconfig = kubeconfigPath();
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  const discovery = new Discovery(client, 0);
  await discovery.refresh();
  return { client, discovery, kubeconfig, close: () => client.close() };
}

/** A resource type that must be served; throws with a clear message otherwise. */
export async function resourceType(env: TestEnv, apiVersion: string, kind: string): Promise<ResourceType> {
  const rt = await env.discovery.resolve(apiVersion, kind);
  if (!rt) throw new Error(`${apiVersion} ${kind} is not served by the test apiserver`);
  return rt;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

/** Creates a namespace with a unique name. No namespace controller runs here, so it is never cleaned: harmless, the etcd data is thrown away. */
export async function createNamespace(env: TestEnv, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await env.client.create(await resourceType(env, 'v1', 'Namespace'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `probe` until it returns something other than undefined/false.
 * On timeout, fails with `what` and the last value seen, so a failure says
 * what the cluster looked like.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  opts: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail =
        lastError !== undefined
          ? `last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`
          : `last value: ${JSON.stringify(last)}`;
      throw new Error(`timed out waiting for ${what} (${detail})`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

export async function waitForGone(
  env: TestEnv,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  opts: WaitOptions = {},
): Promise<void> {
  await waitFor(
    `${rt.kind} ${namespace ?? ''}/${name} to be gone`,
    async () => (await env.client.tryGet(rt, namespace, name)) === undefined,
    opts,
  );
}

export function tool(name: 'kubectl' | 'helm'): string {
  const path = name === 'kubectl' ? process.env.BUNDLESMITH_KUBECTL : process.env.BUNDLESMITH_HELM;
  if (!path) throw new Error(`${name} path not set by the integration global setup`);
  return path;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl and fails the test with its stderr unless it exits 0. */
export async function kubectl(args: string[]): Promise<void> {
  const r = await run('kubectl', args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
}

/** Runs kubectl or helm against the test control plane. */
export async function run(
  name: 'kubectl' | 'helm',
  args: string[],
  opts: { input?: string; env?: Record<string, string> } = {},
): Promise<RunResult> {
  return await new Promise((resolve) => {
    const child = execFile(
      tool(name),
      args,
      { env: { ...process.env, KUBECONFIG: kubeconfigPath(), HOME: process.env.HOME ?? '/tmp', ...opts.env }, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

export function conditionOf(obj: KubeObject | undefined, type: string): { status: string; reason?: string; message?: string } | undefined {
  const conditions = (obj?.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)
    ?.conditions;
  return conditions?.find((c) => c.type === type);
}

/**
 * Kept, with its countdown started again: waits until the object carries a
 * countdown stamp other than `oldStamp` (a pass decided on it and read the
 * stamp written back, or the cancelled countdown, as none), failing at once
 * if the object is gone or being deleted first; then asserts it kept. No
 * timing is asserted: the new countdown cannot end before its stamp exists,
 * and the wrong outcome (the old countdown ended) deletes the object before
 * any new stamp.
 */
export async function expectCountdownRestarted(
  env: TestEnv,
  rt: ResourceType,
  namespace: string,
  name: string,
  uid: string,
  oldStamp: string | undefined,
): Promise<void> {
  let last: KubeObject | undefined;
  await waitFor(
    `${name} stamped again (not ${oldStamp ?? 'unstamped'}), or deleted`,
    async () => {
      last = await env.client.tryGet(rt, namespace, name);
      if (last === undefined || last.metadata.uid !== uid || last.metadata.deletionTimestamp !== undefined) return 'deleted';
      const stamp = last.metadata.annotations?.['smith.atlassian.com/deletionTimestamp'];
      return stamp !== undefined && stamp !== oldStamp ? 'stamped again' : false;
    },
    { timeoutMs: 90_000 },
  );
  // Deleted first: the old countdown ended (this fails with the object as found).
  expectKept(last, uid);
}

/**
 * "Kept" means the same object, still alive: the UID it had before (not
 * deleted and re-created) and no deletionTimestamp (not being deleted).
 * A name that still resolves proves neither. (jest's global `expect`: this
 * module is also loaded outside jest, by the fuzzers.)
 */
export function expectKept(obj: KubeObject | undefined, uid: string): void {
  expect(obj?.metadata.uid).toBe(uid);
  expect(obj?.metadata.deletionTimestamp).toBeUndefined();
}

/** The UID of an object that must exist now (to check later that it was kept). */
export async function uidOf(env: { client: KubeClient }, rt: ResourceType, namespace: string | undefined, name: string): Promise<string> {
  return (await env.client.get(rt, namespace, name)).metadata.uid;
}

/**
 * Trusts a local clock as the server's (both bounds are its `now()`), for
 * tests that cross long delays with an injected clock; the operator itself
 * always reads the server's Date headers.
 */
export function localClockAsServerTime(clock: Clock): ServerTime {
  return { lowerBound: () => clock.now(), upperBound: () => clock.now() };
}

/** The built `bundlesmith` CLI against the test cluster. */
export async function bundlesmith(args: string[]): Promise<RunResult> {
  return await new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), ...args, '--kubeconfig', kubeconfigPath()],
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
