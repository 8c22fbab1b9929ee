/**
 * Entry point: flags, client, operator, HTTP endpoints, signals. Wiring only.
 * `npm start -- --namespace team-a --gc=bundles`
 */
import { hostname } from 'node:os';
import { parseArgs, type Config } from './config.js';
import { KubeClient } from './kube/client.js';
import { createLogger } from './observability/logger.js';
import { OperatorMetrics } from './observability/metrics.js';
import { startHttpEndpoints } from './observability/http.js';
import { systemClock } from './runtime/clock.js';
import { Operator } from './operator.js';
import { createGarbageCollector } from './gc-factory.js';

async function main(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const instance = `${hostname()}-${process.pid}`;
  const client = await KubeClient.fromEnvironment(config.kubeconfig, {
    ...(config.qps > 0 ? { qps: config.qps, burst: config.burst } : {}),
    ...(config.impersonate ? { impersonateUser: config.impersonate } : {}),
  });
  const metrics = new OperatorMetrics({ defaultMetrics: true });
  const clock = systemClock;
  const garbageCollector = config.gc === 'off' ? undefined : createGarbageCollector({ client, clock, logger: logger.child({ controller: 'gc' }), metrics, mode: config.gc, workers: config.gcWorkers, ...(config.namespace ? { namespace: config.namespace } : {}) });
  const operator = new Operator({ client, clock, logger, metrics, instance, workers: config.workers, ...(config.namespace ? { namespace: config.namespace } : {}), ...(garbageCollector ? { garbageCollector } : {}) });
  const http = await startHttpEndpoints({ metricsAddr: config.metricsAddr, healthAddr: config.healthAddr, metrics, ready: () => operator.ready(), logger });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight work');
    // Bound the drain: a stuck request must not keep a terminating pod forever.
    const deadline = setTimeout(() => {
      logger.warn('shutdown took too long; exiting');
      process.exit(1);
    }, 20_000);
    deadline.unref();
    operator
      .stop()
      .then(() => http.close())
      .then(() => {
        client.close();
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

  logger.info({ namespace: config.namespace ?? '(all)', gc: config.gc, workers: config.workers }, 'starting');
  await operator.start();
  logger.info('started');
}

const parsed = parseArgs(process.argv.slice(2));
if (!parsed.ok) {
  for (const e of parsed.errors) console.error(`bundlesmith: ${e}`);
  console.error('usage: bundlesmith-operator [--kubeconfig PATH] [--namespace NS] [--workers N] [--gc=cluster|bundles|off] [--leader-elect] [--metrics-addr HOST:PORT] [--health-addr HOST:PORT] [--log-level LEVEL]');
  process.exit(2);
}
main(parsed.config).catch((err: unknown) => {
  console.error(`bundlesmith: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
