/**
 * Entry point: flags, client, operator, leader election, HTTP endpoints,
 * signals. Wiring only.
 * `npm start -- --namespace team-a --gc=bundles --leader-elect`
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parse as parseYaml } from 'yaml';
import type { HealthCheck } from './api/health-checks.js';
import { readHealthChecksFile } from './core/bundle/health-checks.js';
import { metricsSecure, parseArgs, type Config } from './config.js';
import type { KubeClient } from './kube/client.js';
import { createProcessClients } from './process-clients.js';
import { createLogger } from './observability/logger.js';
import { startDebugEndpoint } from './observability/debug.js';
import { OperatorMetrics } from './observability/metrics.js';
import { startHttpEndpoints, type Readiness } from './observability/http.js';
import { MetricsAuthorizer } from './observability/metrics-auth.js';
import { metricsTls } from './observability/metrics-tls.js';
import { reviewNonResourceAccess, reviewToken } from './kube/reviews.js';
import { systemClock } from './kube/clock.js';
import { LeaderElector, kubeLeaseStore } from './runtime/leader-election.js';
import { Operator } from './operator.js';
import { createGarbageCollector } from './gc-factory.js';
import { apiEventRecorder } from './controllers/events.js';
import {
  DEFAULT_RELEASE_KEY_SECRET,
  loadReleaseKey,
  parseReleaseKeySecret,
  type ReleaseKeySecret,
} from './controllers/softdelete/release-key.js';
import { errorMessage, type SendGuard } from './kube/errors.js';
import type { Logger } from './observability/logger.js';

/** How long in-flight work may take after SIGTERM before the process exits anyway (the chart's grace period is longer). */
const SHUTDOWN_BOUND_MS = 20_000;
/**
 * How long a replica that lost the Lease waits for in-flight items before it
 * exits. Well inside the gap between the renew deadline and the lease
 * duration, so it has stopped before any standby can take over.
 */
const LOST_LEASE_BOUND_MS = 2_000;

/**
 * The release key, read (or created) before anything runs: without it no
 * release could be signed or checked. Retried for a minute (the apiserver
 * may be starting); then the process exits with the reason.
 */
async function loadReleaseKeyOrExit(
  client: KubeClient,
  config: Config,
  logger: Logger,
): Promise<{ key: Uint8Array; at: ReleaseKeySecret }> {
  const at =
    config.releaseKeySecret !== undefined
      ? parseReleaseKeySecret(config.releaseKeySecret)
      : { namespace: config.leaderElectionNamespace, name: DEFAULT_RELEASE_KEY_SECRET };
  if (at === undefined) throw new Error(`--release-key-secret: ${config.releaseKeySecret ?? ''} is not NAMESPACE/NAME`);
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return { key: await loadReleaseKey(client, at), at };
    } catch (err) {
      if (Date.now() > deadline) {
        logger.fatal(
          { secret: { namespace: at.namespace, name: at.name }, err: errorMessage(err) },
          'cannot read or create the release key Secret (the operator needs get and create on it)',
        );
        process.exit(1);
      }
      logger.warn(
        { secret: { namespace: at.namespace, name: at.name }, attempt, err: errorMessage(err) },
        'reading the release key failed; retrying',
      );
      await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * 2 ** attempt)));
    }
  }
}

/** The --health-checks-file rules; a file that cannot be read or a rule that does not compile ends the process here, before any Bundle is judged by it. */
function loadHealthChecksFile(path: string | undefined): HealthCheck[] {
  if (path === undefined) return [];
  let document: unknown;
  try {
    document = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    console.error(`bundlesmith: --health-checks-file ${path}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
  const read = readHealthChecksFile(document);
  if (!read.ok) {
    for (const issue of read.issues) console.error(`bundlesmith: --health-checks-file ${path}: ${issue}`);
    process.exit(2);
  }
  return read.rules;
}

async function main(config: Config, healthCheckDefaults: readonly HealthCheck[]): Promise<void> {
  const logger = createLogger(config.logLevel);
  const instance = `${hostname()}-${process.pid}`;
  // With --leader-elect, a write of the controllers leaves only while this replica holds its Lease (checked by the
  // monotonic clock at the moment it is sent). Armed once the elector exists: the release key, read or created
  // first, is the one write made before leading.
  const lease: { elector?: LeaderElector } = {};
  const writeFence: SendGuard = () =>
    lease.elector && !lease.elector.holdsLease() ? 'this replica does not hold its leader-election Lease' : undefined;
  // One request budget (--qps/--burst) for every client of the process.
  const metrics = new OperatorMetrics({ defaultMetrics: true });
  const clients = await createProcessClients(config, systemClock, writeFence, (request) => metrics.requestDone(request));
  const { client, backgroundClient, eventClient, leaseClient, reviewClient } = clients;
  // --log-level debug: every 10 s, where the request budget went (requests sent per client, tokens per priority, waiters).
  if (config.logLevel === 'debug' || config.logLevel === 'trace') {
    const sent = (c: { transport: { requestsSent: number } } | undefined) => c?.transport.requestsSent ?? 0;
    setInterval(() => {
      logger.debug(
        {
          sent: { controllers: sent(client), background: sent(backgroundClient), events: sent(eventClient), lease: sent(leaseClient) },
          ...(clients.budget ? { granted: clients.budget.granted(), waiting: clients.budget.waiters() } : {}),
        },
        'requests so far',
      );
    }, 10_000).unref();
  }
  const isLeader = {
    set: (value: 0 | 1) => {
      metrics.leader.set(value);
      if (config.leaderElect) metrics.leaderElectionStatus.set({ name: config.leaderElectionId }, value);
    },
  };
  isLeader.set(0);
  const clock = systemClock;
  const garbageCollector =
    config.gc === 'off'
      ? undefined
      : createGarbageCollector({
          client: backgroundClient,
          eventClient,
          clock,
          logger: logger.child({ controller: 'gc' }),
          metrics,
          mode: config.gc,
          workers: config.gcWorkers,
          ...(config.namespace ? { namespace: config.namespace } : {}),
        });
  const events = apiEventRecorder(eventClient, clock, logger, instance);
  const release = await loadReleaseKeyOrExit(client, config, logger);
  const operator = new Operator({
    client,
    backgroundClient,
    clock,
    logger,
    metrics,
    instance,
    events,
    releaseKey: release.key,
    releaseKeySecret: release.at,
    workers: config.workers,
    sweepReleased: config.sweepReleased,
    ...(config.bundleSelector ? { bundleSelector: config.bundleSelector } : {}),
    ...(config.namespace ? { namespace: config.namespace } : {}),
    ...(config.defaultServiceAccount ? { defaultServiceAccount: config.defaultServiceAccount } : {}),
    ...(healthCheckDefaults.length > 0 ? { healthCheckDefaults } : {}),
    ...(garbageCollector ? { garbageCollector } : {}),
  });

  let stopping = false;
  let operatorStarted = false;
  const startOperator = (): void => {
    if (stopping) return;
    operatorStarted = true;
    isLeader.set(1);
    logger.info(
      {
        watchNamespace: config.namespace ?? '(all)',
        bundles: config.bundleSelector?.text ?? '(all)',
        sweepReleased: config.sweepReleased,
        gc: config.gc,
        workers: config.workers,
        tenancy: config.defaultServiceAccount
          ? `lockdown: Bundles act as their namespace's ServiceAccount ${config.defaultServiceAccount} unless they name one`
          : "single-tenant: Bundles without spec.serviceAccountName act with the operator's rights",
      },
      'starting controllers',
    );
    operator
      .start()
      .then(() => logger.info('controllers started'))
      .catch((err: unknown) => {
        // Stopping (a signal, the Lease lost) refuses the writes a start may still make: the shutdown path exits.
        if (stopping) return;
        logger.fatal({ err: String(err) }, 'controllers failed to start');
        process.exit(1);
      });
  };

  const elector = leaseClient
    ? new LeaderElector({
        store: kubeLeaseStore(leaseClient, config.leaderElectionNamespace, config.leaderElectionId),
        identity: instance,
        clock,
        logger: logger.child({ component: 'leader-election' }),
        leaseDurationSeconds: config.leaseDurationSeconds,
        onStartedLeading: startOperator,
        onStoppedLeading: (reason) => {
          // Another replica may lead soon: stop writing now and restart
          // clean, as client-go operators do (the pod restarts as a candidate).
          isLeader.set(0);
          if (stopping) return;
          stopping = true;
          logger.error({ reason }, 'lost leadership; stopping controllers and exiting');
          const exit = () => process.exit(1);
          setTimeout(exit, LOST_LEASE_BOUND_MS).unref();
          operator.stop().then(exit, exit);
        },
      })
    : undefined;

  if (elector) lease.elector = elector;

  const readiness = (): Readiness => {
    if (stopping) return { ready: false, detail: 'shutting down' };
    // A standby is ready once it takes part in the election: rollouts must
    // not wait for it to lead.
    if (elector && !elector.isLeader()) {
      return elector.hasObservedLease()
        ? { ready: true, detail: 'standby: another replica holds the Lease' }
        : { ready: false, detail: 'has not read the Lease yet' };
    }
    if (!operatorStarted || !operator.ready()) return { ready: false, detail: 'controllers starting: informers not synced yet' };
    return { ready: true, detail: elector ? 'leader: controllers running' : 'controllers running' };
  };
  const metricsAuthorizer = reviewClient
    ? new MetricsAuthorizer({
        reviewToken: (token) => reviewToken(reviewClient, token),
        reviewAccess: (user) => reviewNonResourceAccess(reviewClient, user, 'get', '/metrics'),
      })
    : undefined;
  // A certificate that cannot be read is an error at start, not a /metrics that never answers.
  const tls =
    metricsSecure(config) && config.metricsAddr !== '0'
      ? metricsTls({
          ...(config.metricsCertDir !== undefined ? { certDir: config.metricsCertDir } : {}),
          certName: config.metricsCertName,
          keyName: config.metricsCertKey,
        })
      : undefined;
  const http = await startHttpEndpoints({
    metricsAddr: config.metricsAddr,
    healthAddr: config.healthAddr,
    metrics,
    readiness,
    logger,
    ...(metricsAuthorizer ? { metricsAuthorizer } : {}),
    ...(tls ? { metricsTls: tls } : {}),
  });
  const debug =
    config.debugAddr !== undefined && config.debugAddr !== '0'
      ? await startDebugEndpoint({ addr: config.debugAddr, graph: () => garbageCollector?.engine.graph, logger })
      : undefined;

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight work');
    // Bound the drain: a stuck request must not keep a terminating pod forever.
    setTimeout(() => {
      logger.warn('shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_BOUND_MS).unref();
    // The controllers stop before the Lease is released: once released,
    // another replica may lead at once, and two must never write together.
    (operatorStarted ? operator.stop() : Promise.resolve())
      .then(() => elector?.stop())
      .then(() => http.close())
      .then(() => debug?.close())
      .then(() => {
        for (const c of clients.all()) c.close();
        logger.info('stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err: String(err) }, 'error during shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  // The clock's timers are unref'd and a standby has no open watch: without
  // this (and with the HTTP endpoints disabled) Node would exit while waiting.
  setInterval(() => undefined, 1 << 30);

  if (elector) {
    logger.info(
      {
        identity: instance,
        lease: { namespace: config.leaderElectionNamespace, name: config.leaderElectionId },
        leaseDurationSeconds: config.leaseDurationSeconds,
      },
      'waiting for leadership',
    );
    elector.start();
  } else {
    startOperator();
  }
}

const parsed = parseArgs(process.argv.slice(2));
if (!parsed.ok) {
  for (const e of parsed.errors) console.error(`bundlesmith: ${e}`);
  console.error(
    'usage: bundlesmith-operator [--kubeconfig PATH] [--namespace NS] [--workers N] [--gc=cluster|bundles|off] [--gc-workers N] ' +
      '[--leader-elect] [--leader-election-namespace NS] [--leader-election-id NAME] [--lease-duration-seconds N] ' +
      '[--metrics-addr HOST:PORT] [--metrics-auth=none|kubernetes] [--metrics-secure[=false]] [--metrics-cert-dir DIR] [--metrics-cert-name FILE] [--metrics-cert-key FILE] [--health-addr HOST:PORT] [--debug-addr HOST:PORT] [--log-level LEVEL] [--qps N] [--burst N] [--impersonate USER] [--default-service-account NAME] [--health-checks-file PATH]',
  );
  process.exit(2);
}
const healthCheckDefaults = loadHealthChecksFile(parsed.config.healthChecksFile);
main(parsed.config, healthCheckDefaults).catch((err: unknown) => {
  console.error(`bundlesmith: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
