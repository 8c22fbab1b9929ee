/** /metrics on --metrics-addr; /healthz and /readyz on --health-addr. "0" disables an endpoint. */
import { createServer, type Server } from 'node:http';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';

export interface HttpEndpointsOptions {
  metricsAddr: string;
  healthAddr: string;
  metrics: OperatorMetrics;
  ready: () => boolean;
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
      const ready = o.ready();
      res.writeHead(ready ? 200 : 503);
      res.end(ready ? 'ok' : 'not ready');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  const servers = (await Promise.all([listen(metricsServer, o.metricsAddr), listen(healthServer, o.healthAddr)])).filter((s): s is Server => s !== undefined);
  o.logger.info({ metricsAddr: o.metricsAddr, healthAddr: o.healthAddr }, 'HTTP endpoints listening');
  return {
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
