/**
 * Runs the operator for integration tests: in-process (with an injectable
 * clock, scoped to the test's namespace) or as a real child process (for
 * kill/restart tests and RBAC impersonation).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { silentLogger, createLogger } from '../../src/observability/logger.js';
import { OperatorMetrics } from '../../src/observability/metrics.js';
import { systemClock, type Clock, type ServerTime } from '../../src/kube/clock.js';
import { Operator, type GarbageCollectorPart } from '../../src/operator.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import { connect, createNamespace, kubeconfigPath, waitFor, type TestEnv } from './harness.js';
import { types, type KnownTypes } from './bundles.js';
import { DEFAULT_RELEASE_KEY_SECRET, loadReleaseKey } from '../../src/controllers/softdelete/release-key.js';
import { releaseFactsOf, signRelease, type ReleasedMeta } from '../../src/core/softdelete/provenance.js';
import { Annotations } from '../../src/api/names.js';
import { parseLabelSelector, type LabelSelector } from '../../src/core/selector.js';

export interface InProcessOperator {
  operator: Operator;
  client: KubeClient;
  metrics: OperatorMetrics;
  stop(): Promise<void>;
}

export interface InProcessOptions {
  namespace: string;
  /** Another control plane's (a test file's own, e.g. workloads.ts); default: the run's shared one. */
  kubeconfig?: string;
  clock?: Clock;
  /** The API server's clock as the operator sees it; default: from the Date headers of its answers. */
  serverTime?: ServerTime;
  garbageCollector?: (client: KubeClient, clock: Clock) => GarbageCollectorPart;
  workers?: number;
  /** Run as this user (Impersonate-User), e.g. a ServiceAccount with limited rights. */
  impersonate?: { user: string; groups?: string[] };
  watchSyncTimeoutMs?: number;
  /** Lockdown: Bundles without spec.serviceAccountName act as this ServiceAccount of their namespace. */
  defaultServiceAccount?: string;
  /** Sharding: reconcile only the Bundles whose labels match (--bundle-selector). */
  bundleSelector?: string;
  /** Whether this process runs the released-object sweeper (--sweep-released; default true). */
  sweepReleased?: boolean;
}

/**
 * The release key every operator of the test cluster uses: the Secret a
 * spawned operator reads by default (default/bundlesmith-release-key),
 * read or created with the test's admin rights.
 */
export async function testReleaseKey(kubeconfig: string = kubeconfigPath()): Promise<Uint8Array> {
  const admin = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  try {
    return await loadReleaseKey(admin, { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET });
  } finally {
    admin.close();
  }
}

/**
 * The release-proof annotation an operator would have written had it
 * released an object with this metadata (for tests that fabricate
 * releases): by default one signed before releases were recorded (v2),
 * which counts without a record; a v3 proof counts only with its record.
 */
export async function releaseProofFor(meta: ReleasedMeta, version: 'v2' | 'v3' = 'v2'): Promise<Record<string, string>> {
  const facts = releaseFactsOf(meta);
  if (facts === undefined) throw new Error('releaseProofFor: needs uid, the former-bundle label and a deletionDelay');
  return { [Annotations.releaseProof]: signRelease(await testReleaseKey(), facts, version) };
}

function selectorOf(text: string): LabelSelector {
  const parsed = parseLabelSelector(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.selector;
}

/** Starts an operator in this process, watching only `namespace`. BUNDLESMITH_TEST_LOGS=1 shows its logs. */
export async function startOperator(opts: InProcessOptions): Promise<InProcessOperator> {
  const kubeconfig = opts.kubeconfig ?? kubeconfigPath();
  const releaseKey = await testReleaseKey(kubeconfig);
  const client = await KubeClient.fromKubeConfig(
    loadKubeConfig(kubeconfig),
    opts.impersonate ? { impersonateUser: opts.impersonate.user, impersonateGroups: opts.impersonate.groups ?? [] } : {},
  );
  const clock = opts.clock ?? systemClock;
  const metrics = new OperatorMetrics();
  const logger = process.env.BUNDLESMITH_TEST_LOGS === '1' ? createLogger('debug') : silentLogger();
  const operator = new Operator({
    client,
    clock,
    logger,
    metrics,
    releaseKey,
    releaseKeySecret: { namespace: 'default', name: DEFAULT_RELEASE_KEY_SECRET },
    namespace: opts.namespace,
    workers: opts.workers ?? 2,
    ...(opts.watchSyncTimeoutMs ? { watchSyncTimeoutMs: opts.watchSyncTimeoutMs } : {}),
    ...(opts.defaultServiceAccount ? { defaultServiceAccount: opts.defaultServiceAccount } : {}),
    ...(opts.bundleSelector ? { bundleSelector: selectorOf(opts.bundleSelector) } : {}),
    ...(opts.sweepReleased === false ? { sweepReleased: false } : {}),
    ...(opts.serverTime ? { serverTime: opts.serverTime } : {}),
    ...(opts.garbageCollector ? { garbageCollector: opts.garbageCollector(client, clock) } : {}),
  });
  await operator.start();
  // Generous: right after a control plane starts on a loaded CI machine, the first lists can be slow (a CI run once took over 30 s).
  await waitFor('the operator to be ready', () => operator.ready(), { timeoutMs: 120_000 });
  return {
    operator,
    client,
    metrics,
    stop: async () => {
      await operator.stop();
      client.close();
    },
  };
}

export interface OperatorProcess {
  child: ChildProcess;
  logFile: string;
  /** SIGKILL: no cleanup, as a crash. */
  kill(): Promise<void>;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  terminate(): Promise<number | null>;
}

/**
 * Starts `node dist/src/main.js` with the given flags against the test
 * control plane, or the one `kubeconfig` names (the fuzzers run outside
 * jest); npm test and npm run fuzz build dist first.
 */
export function startOperatorProcess(
  args: string[],
  env: Record<string, string> = {},
  kubeconfig: string = kubeconfigPath(),
): OperatorProcess {
  const logFile = join(tmpdir(), `bundlesmith-operator-${process.pid}-${Date.now()}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [join(repoRoot(), 'dist', 'src', 'main.js'), '--kubeconfig', kubeconfig, '--metrics-addr', '0', '--health-addr', '0', ...args],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    logFile,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    terminate: async () => {
      child.kill('SIGTERM');
      return await exited;
    },
  };
}

export interface OperatorFixture {
  env: TestEnv;
  ns: string;
  op: InProcessOperator;
  t: KnownTypes;
}

/**
 * The usual shape of an integration file: a client, a fresh namespace, the
 * common resource types and an in-process operator watching that namespace,
 * set up before the file's tests and torn down after. Fields are filled in
 * beforeAll; `op` may be replaced by a test that restarts the operator.
 */
export function operatorFixture(prefix: string, options: () => Omit<InProcessOptions, 'namespace'> = () => ({})): OperatorFixture {
  const fixture = {} as OperatorFixture;
  beforeAll(async () => {
    fixture.env = await connect();
    fixture.ns = await createNamespace(fixture.env, prefix);
    fixture.t = await types(fixture.env);
    fixture.op = await startOperator({ ...options(), namespace: fixture.ns });
  });
  afterAll(async () => {
    await fixture.op.stop();
    fixture.env.close();
  });
  return fixture;
}
