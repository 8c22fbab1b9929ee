/**
 * /metrics on --metrics-addr; /healthz and /readyz on --health-addr. "0"
 * disables an endpoint.
 *
 * /healthz answers while the event loop runs (liveness: a wedged process is
 * restarted). /readyz answers 200 only when `readiness()` says so, with the
 * reason in the body either way, so `kubectl get --raw` or a probe's event
 * shows why a replica is not ready.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';

export interface Readiness {
  ready: boolean;
  /** One line: what the replica is doing, or what it waits for. */
  detail: string;
}

export interface HttpEndpointsOptions {
  metricsAddr: string;
  healthAddr: string;
  metrics: OperatorMetrics;
  readiness: () => Readiness;
  logger: Logger;
}

function parseAddr(addr: string): { host: string | undefined; port: number } | undefined {
  if (addr === '0') return undefined;
  const colon = addr.lastIndexOf(':');
  const host = addr.slice(0, colon).replace(/^\[|\]$/g, '');
  return { host: host === '' ? undefined : host, port: Number(addr.slice(colon + 1)) };
}

async function listen(server: Server, addr: string): Promise<Server | undefined> {
  const parsed = parseAddr(addr);
  if (!parsed) return undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(parsed.port, parsed.host, () => resolve());
  });
  return server;
}

export async function startHttpEndpoints(o: HttpEndpointsOptions): Promise<{ close(): Promise<void> }> {
  const metricsServer = createServer((req, res) => {
    if (req.url === '/metrics') {
      o.metrics.registry
        .metrics()
        .then((body) => {
          res.writeHead(200, { 'Content-Type': o.metrics.registry.contentType });
          res.end(body);
        })
        .catch((err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        });
      return;
    }
    res.writeHead(404);
    res.end();
  });
  const healthServer = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200);
      res.end('ok');
    } else if (req.url === '/readyz') {
      const { ready, detail } = o.readiness();
      res.writeHead(ready ? 200 : 503, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`${ready ? 'ok' : 'not ready'}: ${detail}\n`);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  // A listen failure (port taken) must not leave the other server open behind a rejected promise.
  const results = await Promise.allSettled([listen(metricsServer, o.metricsAddr), listen(healthServer, o.healthAddr)]);
  const servers = results.flatMap((r) => (r.status === 'fulfilled' && r.value !== undefined ? [r.value] : []));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    throw new Error(`cannot listen for HTTP endpoints: ${failure.reason instanceof Error ? failure.reason.message : String(failure.reason)}`);
  }
  o.logger.info({ metricsAddr: o.metricsAddr, healthAddr: o.healthAddr }, 'HTTP endpoints listening');
  return {
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
