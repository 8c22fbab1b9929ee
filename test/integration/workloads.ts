/**
 * Workloads that run, for integration tests: a control plane of the test
 * file's own with simulated nodes (kwok), kube-scheduler and
 * kube-controller-manager's workload controllers (hack/controlplane.ts,
 * option `workloads`), so a Deployment gets its ReplicaSets and pods and
 * becomes Available; and a wait for a Deployment's rollout.
 *
 * Its own control plane, not the run's shared one: the workload controllers
 * act on every namespace, and other files create Deployments that no
 * controller must touch (they mark them available by hand, or watch what
 * our operator alone does to them).
 */
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../../hack/controlplane.js';
import { applyCrd } from '../../hack/crd-install.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import type { KubeObject } from '../../src/kube/types.js';
import { types } from './bundles.js';
import { createNamespace, resourceType, waitFor, type TestEnv, type WaitOptions } from './harness.js';
import { startOperator, type InProcessOperator, type InProcessOptions, type OperatorFixture } from './operator.js';

export interface WorkloadCluster {
  state: ControlPlaneState;
  /** An admin client on this control plane. */
  env: TestEnv;
  /** Our operator, in-process, on this control plane (options as operator.ts's startOperator); ready when this resolves. Stopped by stop(). */
  startOperator: (options: Omit<InProcessOptions, 'kubeconfig'>) => Promise<InProcessOperator>;
  /** Stops the operators it started, the client and the control plane. */
  stop: () => Promise<void>;
}

export interface WorkloadClusterOptions {
  /** Simulated nodes (default 2). */
  nodes?: number;
  /** Also run kube-controller-manager's garbage collector (a test granting it its role, as reference-cluster.ts does). */
  withGarbageCollector?: boolean;
}

/** Starts a control plane where workloads run, with the Bundle CRD installed. */
export async function startWorkloadCluster(options: WorkloadClusterOptions = {}): Promise<WorkloadCluster> {
  const state = await startControlPlane({
    workloads: { nodes: options.nodes ?? 2 },
    withGarbageCollector: options.withGarbageCollector ?? false,
  });
  const operators: InProcessOperator[] = [];
  let client: KubeClient | undefined;
  try {
    await applyCrd(state.kubeconfig);
    client = await KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig));
    const discovery = new Discovery(client, 0);
    await discovery.refresh();
    const admin = client;
    const env: TestEnv = { client: admin, discovery, kubeconfig: state.kubeconfig, close: () => admin.close() };
    return {
      state,
      env,
      startOperator: async (opts) => {
        const op = await startOperator({ ...opts, kubeconfig: state.kubeconfig });
        operators.push(op);
        return op;
      },
      stop: async () => {
        for (const op of operators.splice(0)) await op.stop();
        env.close();
        stopControlPlane(state, { keepDir: process.env.BUNDLESMITH_KEEP_CLUSTER === '1' });
      },
    };
  } catch (err) {
    client?.close();
    stopControlPlane(state, { keepDir: true });
    throw err;
  }
}

export interface WorkloadFixture extends OperatorFixture {
  cluster: WorkloadCluster;
}

/**
 * operatorFixture's shape (env, ns, op, t) on a workload cluster of the
 * file's own: started before the file's tests, stopped after. A file that
 * used operatorFixture can switch to this one and keep its field names.
 */
export function workloadFixture(
  prefix: string,
  options: () => Omit<InProcessOptions, 'namespace' | 'kubeconfig'> = () => ({}),
  clusterOptions: WorkloadClusterOptions = {},
): WorkloadFixture {
  const fixture = {} as WorkloadFixture;
  beforeAll(async () => {
    fixture.cluster = await startWorkloadCluster(clusterOptions);
    fixture.env = fixture.cluster.env;
    fixture.ns = await createNamespace(fixture.env, prefix);
    fixture.t = await types(fixture.env);
    fixture.op = await fixture.cluster.startOperator({ ...options(), namespace: fixture.ns });
  }, 180_000);
  afterAll(async () => {
    await fixture.cluster?.stop();
  });
  return fixture;
}

/** Annotation the deployment controller numbers a Deployment's revisions with, on it and on its ReplicaSets. */
const REVISION = 'deployment.kubernetes.io/revision';

export interface Rollout {
  deployment: KubeObject;
  /** The ReplicaSet of the Deployment's current revision, all its replicas available. */
  replicaSet: KubeObject;
  /** The Deployment's other ReplicaSets, each scaled to 0 with no pods left. */
  oldReplicaSets: KubeObject[];
  /** The current ReplicaSet's pods (none being deleted), Running and Ready. */
  pods: KubeObject[];
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function ownedBy(o: KubeObject, owner: KubeObject): boolean {
  return (o.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid && r.controller === true);
}

function podReady(pod: KubeObject): boolean {
  const status = pod.status as { phase?: string; conditions?: { type: string; status: string }[] } | undefined;
  return status?.phase === 'Running' && (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/**
 * The Deployment's rollout as it stands, if it is complete: the controller
 * has observed its latest spec, every wanted replica is updated and
 * available, no old one is left; its current ReplicaSet has them all
 * available, its old ones are scaled to 0 and have no pods, and the current
 * one's pods are Running and Ready. Otherwise why not, as a string.
 */
export async function rolloutOf(env: TestEnv, namespace: string, name: string): Promise<Rollout | string> {
  const [deploymentRt, replicaSetRt, podRt] = [
    await resourceType(env, 'apps/v1', 'Deployment'),
    await resourceType(env, 'apps/v1', 'ReplicaSet'),
    await resourceType(env, 'v1', 'Pod'),
  ];
  const deployment = await env.client.tryGet(deploymentRt, namespace, name);
  if (!deployment) return `Deployment ${namespace}/${name} does not exist`;
  const spec = deployment.spec as { replicas?: number } | undefined;
  const status = (deployment.status ?? {}) as Record<string, unknown>;
  const wanted = spec?.replicas ?? 1;
  if (num(status.observedGeneration) < (deployment.metadata.generation ?? 0))
    return `generation ${deployment.metadata.generation} not observed yet (observed ${num(status.observedGeneration)})`;
  if (num(status.updatedReplicas) !== wanted || num(status.replicas) !== wanted || num(status.availableReplicas) !== wanted) {
    return `replicas: wanted ${wanted}, total ${num(status.replicas)}, updated ${num(status.updatedReplicas)}, available ${num(status.availableReplicas)}`;
  }
  const revision = deployment.metadata.annotations?.[REVISION];
  const owned = (await env.client.list(replicaSetRt, namespace)).items.filter((rs) => ownedBy(rs, deployment));
  const current = owned.filter((rs) => rs.metadata.annotations?.[REVISION] === revision);
  if (revision === undefined || current.length !== 1)
    return `no single ReplicaSet of revision ${revision ?? '(none)'} among ${owned.length}`;
  const replicaSet = current[0] as KubeObject;
  if (num((replicaSet.status as Record<string, unknown> | undefined)?.availableReplicas) !== wanted)
    return `ReplicaSet ${replicaSet.metadata.name}: not all ${wanted} replicas available`;
  const oldReplicaSets = owned.filter((rs) => rs !== replicaSet);
  const pods = (await env.client.list(podRt, namespace)).items;
  for (const old of oldReplicaSets) {
    const oldSpec = old.spec as { replicas?: number } | undefined;
    if (oldSpec?.replicas !== 0 || num((old.status as Record<string, unknown> | undefined)?.replicas) !== 0)
      return `old ReplicaSet ${old.metadata.name} not scaled to 0 yet`;
    if (pods.some((p) => ownedBy(p, old))) return `old ReplicaSet ${old.metadata.name} still has pods`;
  }
  const currentPods = pods.filter((p) => ownedBy(p, replicaSet) && p.metadata.deletionTimestamp === undefined);
  if (currentPods.length !== wanted || !currentPods.every(podReady))
    return `ReplicaSet ${replicaSet.metadata.name}: ${currentPods.filter(podReady).length} of ${wanted} pods Running and Ready`;
  return { deployment, replicaSet, oldReplicaSets, pods: currentPods };
}

/**
 * Waits until the Deployment's rollout is complete (see rolloutOf) and, if
 * given, `accept` holds for it (e.g. a new revision: `(r) => r.replicaSet.metadata.name !== before`).
 * A timeout names the last reason it was not.
 */
export async function waitForRollout(
  env: TestEnv,
  namespace: string,
  name: string,
  accept: (rollout: Rollout) => boolean = () => true,
  opts: WaitOptions = {},
): Promise<Rollout> {
  let why = 'not looked at yet';
  try {
    return await waitFor(
      `the rollout of Deployment ${namespace}/${name}`,
      async () => {
        const rollout = await rolloutOf(env, namespace, name);
        if (typeof rollout === 'string') {
          why = rollout;
          return undefined;
        }
        why = 'complete, but not the rollout asked for';
        return accept(rollout) ? rollout : undefined;
      },
      { timeoutMs: 60_000, ...opts },
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}; last seen: ${why}`);
  }
}
