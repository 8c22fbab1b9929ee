/**
 * A control plane of a test file's own where kube-controller-manager's
 * garbage collector runs: the reference our collector and finalizer are
 * held against. Ours is not started there unless the test starts it.
 */
import {
  startControlPlane,
  startControllerManager,
  stopControlPlane,
  stopControllerManager,
  type ControlPlaneState,
} from '../../hack/controlplane.js';
import { applyCrd } from '../../hack/crd-install.js';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import { createLogger, silentLogger } from '../../src/observability/logger.js';
import { Operator, type OperatorOptions } from '../../src/operator.js';
import { systemClock } from '../../src/kube/clock.js';
import { DEFAULT_RELEASE_KEY_SECRET, loadReleaseKey } from '../../src/controllers/softdelete/release-key.js';
import { createNamespace, resourceType, waitFor, type TestEnv } from './harness.js';
import { types, type KnownTypes } from './bundles.js';

/** The user kube-controller-manager acts as here (its garbage collector's deletes come from it). */
export const KCM_USER = 'system:kube-controller-manager';

export interface ReferenceCluster {
  state: ControlPlaneState;
  env: TestEnv;
  /** SIGKILLs kube-controller-manager (its collector stops mid-work). */
  collectorDown: () => Promise<void>;
  /** Starts it again unless it runs. */
  collectorUp: () => Promise<void>;
  /** Our operator, in-process, on one namespace, with no collector of ours (kube-controller-manager's is the only one); ready when this resolves. */
  startOperator: (namespace: string, options?: Partial<Pick<OperatorOptions, 'clock' | 'serverTime'>>) => Promise<Operator>;
  /** Stops the operator (if started), the client and the control plane. */
  stop: () => Promise<void>;
}

export async function startReferenceCluster(options: { bundleCrd: boolean }): Promise<ReferenceCluster> {
  const state = await startControlPlane({ withGarbageCollector: true });
  if (options.bundleCrd) {
    await applyCrd(state.kubeconfig);
    // Started again once the CRD is served: kube-controller-manager's collector watches the kinds discovery showed at
    // its start and looks for new ones every 30 s, so a Bundle deleted in that window waited up to 30 s for it.
    stopControllerManager(state, 'SIGTERM');
    await startControllerManager(state);
  }
  // A request timeout, as the operator's own clients have (process-clients.ts): a list that hangs on a freshly started
  // control plane is retried by the informer instead of holding readiness for good.
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(state.kubeconfig), { requestTimeoutMs: 60_000 });
  const discovery = new Discovery(client, 0);
  await discovery.refresh();
  const env: TestEnv = { client, discovery, kubeconfig: state.kubeconfig, close: () => client.close() };
  // kube-controller-manager runs here under its own identity (no service
  // account credentials), which RBAC does not let delete or patch arbitrary
  // objects: grant it the garbage collector's bootstrap role.
  const binding = await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding');
  await client.create(binding, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'bundlesmith-test:kcm-garbage-collector' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:controller:generic-garbage-collector' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: KCM_USER }],
  });
  let operator: Operator | undefined;
  return {
    state,
    env,
    startOperator: async (namespace, options = {}) => {
      const started = new Operator({
        client,
        // BUNDLESMITH_TEST_LOGS=1 shows its logs, as for the shared control plane's operators (operator.ts).
        logger: process.env.BUNDLESMITH_TEST_LOGS === '1' ? createLogger('debug') : silentLogger(),
        namespace,
        workers: 2,
        releaseKey: await loadReleaseKey(client, { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET }),
        releaseKeySecret: { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET },
        ...options,
        clock: options.clock ?? systemClock,
      });
      operator = started;
      await started.start();
      // Generous: right after a control plane starts on a loaded CI machine, the first lists can be slow (a CI run once took over 30 s).
      await waitFor('the operator to be ready', () => started.ready(), { timeoutMs: 120_000 });
      return started;
    },
    collectorDown: () => Promise.resolve(stopControllerManager(state)),
    collectorUp: async () => {
      if (state.pids['kube-controller-manager'] === undefined) await startControllerManager(state);
    },
    stop: async () => {
      await operator?.stop();
      env.close();
      stopControlPlane(state, { keepDir: process.env.BUNDLESMITH_KEEP_CLUSTER === '1' });
    },
  };
}

/** A reference cluster for a whole test file: its env, known types and one namespace, with our operator (no collector of ours) on it. */
export interface ReferenceFixture {
  ref: ReferenceCluster;
  env: TestEnv;
  t: KnownTypes;
  ns: string;
  /** The operator running on `ns` (the one the last `startOperator` started); a test may stop it. */
  operator: Operator;
  /** Starts our operator on `ns` again (after `operator.stop()`), kept as `operator`; ready when this resolves. */
  startOperator: () => Promise<Operator>;
  /** kube-controller-manager's user and a client acting as it (for the chart's deletion guard). */
  collector: { user: string; client: KubeClient };
}

/** Starts the reference cluster (the Bundle CRD installed) and our operator on a namespace `prefix`-..., before all tests; stops it after. */
export function referenceFixture(prefix: string): ReferenceFixture {
  const fixture = {} as ReferenceFixture;
  let started: ReferenceCluster | undefined;
  fixture.startOperator = async () => {
    if (!started) throw new Error('the reference cluster is not started');
    fixture.operator = await started.startOperator(fixture.ns);
    return fixture.operator;
  };
  beforeAll(async () => {
    started = await startReferenceCluster({ bundleCrd: true });
    fixture.ref = started;
    fixture.env = started.env;
    fixture.collector = { user: KCM_USER, client: started.env.client.impersonating({ user: KCM_USER }) };
    fixture.t = await types(started.env);
    fixture.ns = await createNamespace(started.env, prefix);
    await fixture.startOperator();
  }, 180_000);
  afterAll(async () => {
    await started?.stop();
  });
  return fixture;
}
