/**
 * /metrics on --metrics-addr; /healthz and /readyz on --health-addr. "0"
 * disables an endpoint.
 *
 * With a `metricsAuthorizer` (--metrics-auth=kubernetes), /metrics answers
 * 401 without an accepted bearer token and 403 when its user may not get
 * /metrics. The health endpoints never ask for credentials: kubelet probes
 * carry none. Both are plain HTTP.
 *
 * /healthz answers while the event loop runs (liveness: a wedged process is
 * restarted). /readyz answers 200 only when `readiness()` says so, with the
 * reason in the body either way, so `kubectl get --raw` or a probe's event
 * shows why a replica is not ready.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import type { MetricsAuthorizer, MetricsDecision } from './metrics-auth.js';

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
  /** When set, every /metrics request is authenticated and authorized. */
  metricsAuthorizer?: MetricsAuthorizer;
}

/** host:port as the flags give it ("0": disabled; ":PORT": every interface, or `defaultHost`). */
export function parseAddr(addr: string): { host: string | undefined; port: number } | undefined {
  if (addr === '0') return undefined;
  const colon = addr.lastIndexOf(':');
  const host = addr.slice(0, colon).replace(/^\[|\]$/g, '');
  return { host: host === '' ? undefined : host, port: Number(addr.slice(colon + 1)) };
}

export async function listen(server: Server, addr: string, defaultHost?: string): Promise<Server | undefined> {
  const parsed = parseAddr(addr);
  if (!parsed) return undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(parsed.port, parsed.host ?? defaultHost, () => resolve());
  });
  return server;
}

export async function startHttpEndpoints(o: HttpEndpointsOptions): Promise<{ close(): Promise<void> }> {
  const serveMetrics = (res: ServerResponse): void => {
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
  };
  const refuse = (res: ServerResponse, decision: Exclude<MetricsDecision, { status: 200 }>): void => {
    const headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' };
    if (decision.status === 401) headers['WWW-Authenticate'] = 'Bearer';
    res.writeHead(decision.status, headers);
    res.end(decision.status === 401 ? `Unauthorized: ${decision.reason}\n` : `Forbidden: user "${decision.user}" may not get /metrics\n`);
  };
  const metricsServer = createServer((req, res) => {
    if (req.url === '/metrics') {
      const authorizer = o.metricsAuthorizer;
      if (!authorizer) {
        serveMetrics(res);
        return;
      }
      authorizer
        .decide(req.headers.authorization)
        .then((decision) => {
          if (decision.status === 200) serveMetrics(res);
          else {
            o.logger.debug({ status: decision.status, reason: decision.reason }, 'refused a /metrics request');
            refuse(res, decision);
          }
        })
        .catch((err: unknown) => {
          o.logger.warn({ err: String(err) }, 'cannot review a /metrics request');
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('cannot review the request\n');
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
  o.logger.info({ metricsAddr: o.metricsAddr, healthAddr: o.healthAddr, metricsAuth: o.metricsAuthorizer ? 'kubernetes' : 'none' }, 'HTTP endpoints listening');
  return {
    close: async () => {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
