/**
 * Control planes for the benchmarks: started fresh per scenario, registered
 * so that every exit path (normal end, error, SIGINT/SIGTERM) stops exactly
 * the processes they started, and a few helpers to fill them with objects
 * and watch them go.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readState, startControlPlane, stopControlPlane, type ControlPlaneState, type StartOptions } from '../hack/controlplane.js';
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import { Discovery } from '../src/kube/discovery.js';
import type { TransportOptions } from '../src/kube/transport.js';
import type { KubeObject, ResourceType } from '../src/kube/types.js';

const running = new Set<ControlPlaneState>();
/** Processes a scenario started besides a control plane (operator processes): killed with the control planes. */
const children = new Set<ChildProcess>();

/** Registers a child process so that every exit path stops it (it unregisters itself when it exits). */
export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
}
/** Directories of control planes still starting: a signal then finds their processes in state.json. */
const starting = new Set<string>();

/**
 * --quick shares control planes: one per set of start options (plain, or
 * with kube-controller-manager at given flags), kept across scenarios, so a
 * smoke run starts three instead of ten. A scenario's stop() then leaves it
 * running; stopAllControlPlanes() still stops it. Scenarios use namespaces
 * and labels of their own, so they do not meet; their figures are not
 * results anyway (a shared control plane carries the earlier scenarios' objects).
 */
let sharing = false;
const shared = new Map<string, Promise<BenchCluster>>();

export function shareControlPlanes(on: boolean): void {
  sharing = on;
}

/** Stops every control plane still running or starting (idempotent; safe in exit handlers, it is synchronous). */
export function stopAllControlPlanes(): void {
  shared.clear();
  for (const child of children) {
    children.delete(child);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  // stopControlPlane waits (up to 10 s) for each one's processes in turn: signal them all first, so that
  // several control planes (--quick keeps three) shut down together rather than one after the other.
  for (const state of running) {
    for (const pid of Object.values(state.pids)) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(state.dir)) process.kill(pid, 'SIGTERM');
      } catch {
        /* gone already, or not ours */
      }
    }
  }
  for (const state of running) {
    running.delete(state);
    stopControlPlane(state);
  }
  for (const dir of starting) {
    starting.delete(dir);
    if (existsSync(join(dir, 'state.json'))) stopControlPlane(readState(dir));
    else rmSync(dir, { recursive: true, force: true });
  }
}

export interface BenchCluster {
  state: ControlPlaneState;
  /** Unthrottled admin client for setup and observation (never the client under test). */
  admin: KubeClient;
  discovery: Discovery;
  configMaps: ResourceType;
  /** A client of its own with these transport options (the caller closes it). */
  client(options?: TransportOptions): Promise<KubeClient>;
  stop(): void;
}

export async function startBenchCluster(options: StartOptions = {}): Promise<BenchCluster> {
  if (!sharing) return startOwnCluster(options);
  const key = JSON.stringify(options);
  let cluster = shared.get(key);
  if (!cluster) {
    cluster = startOwnCluster(options);
    shared.set(key, cluster);
    // A start that failed is not kept: the next scenario tries again.
    cluster.catch(() => shared.delete(key));
  }
  const running = await cluster;
  return { ...running, stop: () => undefined };
}

async function startOwnCluster(options: StartOptions): Promise<BenchCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'bundlesmith-cp-'));
  starting.add(dir);
  let state: ControlPlaneState;
  try {
    state = await startControlPlane({ ...options, dir });
  } finally {
    starting.delete(dir);
  }
  running.add(state);
  try {
    const kubeConfig = loadKubeConfig(state.kubeconfig);
    const admin = await KubeClient.fromKubeConfig(kubeConfig, { maxSockets: Infinity });
    const discovery = new Discovery(admin, 0);
    await discovery.refresh();
    const configMaps = await discovery.resolve('v1', 'ConfigMap');
    if (!configMaps) throw new Error('the apiserver does not serve v1 ConfigMap');
    return {
      state,
      admin,
      discovery,
      configMaps,
      client: (transport: TransportOptions = {}) => KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig), transport),
      stop: () => {
        admin.close();
        running.delete(state);
        stopControlPlane(state);
      },
    };
  } catch (err) {
    running.delete(state);
    stopControlPlane(state);
    throw err;
  }
}

/** kube-controller-manager runs under its own identity here: grant it the garbage collector's bootstrap role (as the reference GC test does). */
export async function grantControllerManagerGcRole(cluster: BenchCluster): Promise<void> {
  const binding = await cluster.discovery.resolve('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
  if (!binding) throw new Error('the apiserver does not serve ClusterRoleBindings');
  const name = 'bundlesmith-bench:kcm-garbage-collector';
  // A shared control plane (--quick) has it already.
  if (await cluster.admin.tryGet(binding, undefined, name)) return;
  await cluster.admin.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:controller:generic-garbage-collector' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'system:kube-controller-manager' }],
  });
}

/** The kube-controller-manager log (to see when its collector has synced). */
export function controllerManagerLog(cluster: BenchCluster): string {
  try {
    return readFileSync(join(cluster.state.dir, 'kube-controller-manager.log'), 'utf8');
  } catch {
    return '';
  }
}

export async function createNamespace(cluster: BenchCluster, name: string): Promise<string> {
  const rt = await cluster.discovery.resolve('v1', 'Namespace');
  if (!rt) throw new Error('the apiserver does not serve Namespaces');
  await cluster.admin.create(rt, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function forEachConcurrently(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

export interface OwnerWithDependents {
  owner: KubeObject;
  dependents: KubeObject[];
}

/** One ConfigMap owner and `count` ConfigMaps that name it in an ownerReference (as a Bundle's objects name their Bundle). */
export async function createOwnerWithDependents(
  cluster: BenchCluster,
  namespace: string,
  prefix: string,
  count: number,
  label: string,
): Promise<OwnerWithDependents> {
  const owner = await cluster.admin.create(cluster.configMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${prefix}-owner`, namespace },
    data: { role: 'owner' },
  });
  const dependents: KubeObject[] = new Array<KubeObject>(count);
  await forEachConcurrently(count, 32, async (i) => {
    dependents[i] = await cluster.admin.create(cluster.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `${prefix}-dep-${i}`,
        namespace,
        labels: { 'bench.bundlesmith.dev/set': label },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: owner.metadata.name,
            uid: owner.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      data: { index: String(i), payload: 'x'.repeat(64) },
    });
  });
  return { owner, dependents };
}

/**
 * Counts the objects of a label set as they disappear, through a watch on
 * the unthrottled admin client (the measurement never competes for the
 * client under test's budget). `gone()` resolves when `expected` DELETED
 * events have arrived, with the time of the last one.
 */
export class DeletionWatch {
  private deleted = 0;
  private lastAt = 0;
  private readonly abort = new AbortController();
  private waiter: (() => void) | undefined;
  private readonly done: Promise<void>;
  private failure: unknown;

  private constructor(
    private readonly expected: number,
    run: (watch: DeletionWatch, signal: AbortSignal) => Promise<void>,
  ) {
    this.done = run(this, this.abort.signal).catch((err: unknown) => {
      this.failure = err;
      this.waiter?.();
    });
  }

  static async start(cluster: BenchCluster, namespace: string, label: string, expected: number): Promise<DeletionWatch> {
    const list = await cluster.admin.list(cluster.configMaps, namespace, {
      labelSelector: `bench.bundlesmith.dev/set=${label}`,
      metadataOnly: true,
    });
    if (list.items.length !== expected) throw new Error(`expected ${expected} objects labelled ${label}, found ${list.items.length}`);
    return new DeletionWatch(expected, async (watch, signal) => {
      await cluster.admin.watch(
        cluster.configMaps,
        namespace,
        list.resourceVersion,
        { labelSelector: `bench.bundlesmith.dev/set=${label}`, metadataOnly: true, timeoutSeconds: 600, signal },
        (event) => {
          if (event.type !== 'DELETED') return;
          watch.deleted++;
          watch.lastAt = performance.now();
          if (watch.deleted >= watch.expected) watch.waiter?.();
        },
      );
    });
  }

  get count(): number {
    return this.deleted;
  }

  /** Resolves with the time (performance.now()) of the last expected deletion; rejects after timeoutMs. */
  async gone(timeoutMs: number): Promise<number> {
    if (this.deleted < this.expected) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
    }
    this.abort.abort();
    await this.done;
    if (this.deleted < this.expected) {
      const why = this.failure instanceof Error ? `: ${this.failure.message}` : '';
      throw new Error(`only ${this.deleted} of ${this.expected} objects were deleted within ${Math.round(timeoutMs / 1000)} s${why}`);
    }
    return this.lastAt;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
