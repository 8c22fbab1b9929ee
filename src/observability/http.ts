/**
 * /metrics on --metrics-addr; /healthz and /readyz on --health-addr. "0"
 * disables an endpoint.
 *
 * With a `metricsAuthorizer` (--metrics-auth=kubernetes), /metrics answers
 * 401 without an accepted bearer token and 403 when its user may not get
 * /metrics. The health endpoints never ask for credentials: kubelet probes
 * carry none, and are plain HTTP.
 *
 * With `metricsTls` (--metrics-secure, on by default with
 * --metrics-auth=kubernetes), /metrics is served over HTTPS only (TLS 1.2 or
 * later), so a scraper's bearer token never crosses the network in clear; a
 * certificate read from files is re-read every `tlsReloadMs` and a renewed
 * one is served from the next connection on.
 *
 * /healthz answers while the event loop runs (liveness: a wedged process is
 * restarted). /readyz answers 200 only when `readiness()` says so, with the
 * reason in the body either way, so `kubectl get --raw` or a probe's event
 * shows why a replica is not ready.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import type { MetricsAuthorizer, MetricsDecision } from './metrics-auth.js';
import type { MetricsTls } from './metrics-tls.js';

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
  /** When set, /metrics is served over HTTPS with this certificate. */
  metricsTls?: MetricsTls;
  /** How often a certificate from files is re-read (default 10 s). */
  tlsReloadMs?: number;
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
  const handleMetrics = (req: IncomingMessage, res: ServerResponse): void => {
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
  };
  const tls = o.metricsTls;
  const metricsServer = tls ? createHttpsServer({ ...tls.current(), minVersion: 'TLSv1.2' }, handleMetrics) : createServer(handleMetrics);
  let reloadTimer: NodeJS.Timeout | undefined;
  if (tls) {
    let lastError = '';
    reloadTimer = setInterval(() => {
      try {
        const fresh = tls.reload();
        lastError = '';
        if (!fresh) return;
        (metricsServer as ReturnType<typeof createHttpsServer>).setSecureContext({ ...fresh, minVersion: 'TLSv1.2' });
        o.logger.info({ certificate: tls.source }, 'metrics certificate changed: serving the new one');
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (message !== lastError) o.logger.warn({ err: message }, 'cannot re-read the metrics certificate; keeping the one served');
        lastError = message;
      }
    }, o.tlsReloadMs ?? 10_000);
    reloadTimer.unref();
  }
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
    clearInterval(reloadTimer);
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    throw new Error(
      `cannot listen for HTTP endpoints: ${failure.reason instanceof Error ? failure.reason.message : String(failure.reason)}`,
    );
  }
  o.logger.info(
    {
      metricsAddr: o.metricsAddr,
      healthAddr: o.healthAddr,
      metricsAuth: o.metricsAuthorizer ? 'kubernetes' : 'none',
      metricsScheme: tls ? 'https' : 'http',
      ...(tls ? { metricsCertificate: tls.source } : {}),
    },
    'HTTP endpoints listening',
  );
  return {
    close: async () => {
      clearInterval(reloadTimer);
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}
