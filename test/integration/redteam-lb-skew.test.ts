/**
 * Red team (issue 23, "time bounds that hold behind a load balancer"): two
 * API servers on one etcd behind a load balancer, and server B's clock runs
 * 30 minutes behind A's (A's is the real one: the machine's, etcd's).
 * Simulated as the issue suggests: an HTTP proxy in front of the test API
 * server that rewrites the `Date` header of what "B" answers (everything else
 * as the real server answers), and routes to A, to B, or alternately.
 *
 * While only B answers (the operator's connections pinned to B, as with an L4
 * balancer and keep-alive), an object with deletionDelay 10m leaves its
 * Bundle and is stamped by B's clock (real time - 30 min). Then A answers
 * (B's connections reset, A takes them): the lower bound of the server's time
 * jumps 30 minutes (kube/clock.ts DateHeaderServerTime: the greatest lower
 * bound over the samples of both servers; the operator then even holds
 * lower > upper, bounds that contradict each other), and the next pass finds
 * the countdown expired 20 minutes ago: the object is deleted within a second
 * of leaving the Bundle, 10 minutes early by the real clock.
 *
 * (Held: every other request to B, B 30 minutes ahead: the stamp is taken at
 * max(lower, upper), i.e. by B's clock, and expiry by the same lower bound.)
 * Fails on the code this was written against.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Annotations } from '../../src/api/names.js';
import { connect, createNamespace, expectKept, kubeconfigPath, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, types, waitForReady, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';

const SKEW_MS = 30 * 60_000;

/** Every other request goes to "server B", whose Date header runs SKEW_MS ahead. */
class SkewedBalancer {
  private server: Server | undefined;
  private n = 0;
  /** Which server answers: B only, A only, or every other request. */
  mode: 'A' | 'B' | 'alternate' = 'A';
  /** How far B's clock is from A's (the real one). */
  skewMs = SKEW_MS;

  constructor(
    private readonly upstream: URL,
    private readonly ca: Buffer | undefined,
  ) {}

  async listen(): Promise<number> {
    this.server = createHttpServer((req, res) => {
      const toB = this.mode === 'B' || (this.mode === 'alternate' && this.n++ % 2 === 1);
      const headers: IncomingHttpHeaders = { ...req.headers, host: this.upstream.host };
      const up = httpsRequest(
        {
          host: this.upstream.hostname,
          port: this.upstream.port,
          path: req.url,
          method: req.method,
          headers,
          ...(this.ca ? { ca: this.ca } : { rejectUnauthorized: false }),
        },
        (upRes) => {
          const out = { ...upRes.headers };
          const date = Date.parse(upRes.headers.date ?? '');
          if (toB && Number.isFinite(date)) out.date = new Date(date + this.skewMs).toUTCString();
          res.writeHead(upRes.statusCode ?? 502, out);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let balancer: SkewedBalancer;
let op: InProcessOperator | undefined;
let proxied = '';

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'rt-skew');
  t = await types(env);
  const text = readFileSync(kubeconfigPath(), 'utf8');
  const server = new URL(env.client.transport.serverUrl);
  const caData = /certificate-authority-data: (\S+)/.exec(text)?.[1];
  balancer = new SkewedBalancer(server, caData ? Buffer.from(caData, 'base64') : undefined);
  const port = await balancer.listen();
  proxied = join(tmpdir(), `bundlesmith-rt-skew-${process.pid}.kubeconfig`);
  writeFileSync(
    proxied,
    text.replace(server.origin, `http://127.0.0.1:${port}`).replace(/certificate-authority-data: \S+/, 'insecure-skip-tls-verify: true'),
  );
});

/** A fresh operator behind the balancer (no server-time samples from an earlier test). */
async function startBehindBalancer(): Promise<void> {
  await op?.stop();
  op = await startOperator({ namespace: ns, kubeconfig: proxied });
}

afterAll(async () => {
  await op?.stop();
  await balancer?.close();
  env.close();
});

it('an object stamped while the API server answering runs 30 minutes behind is not deleted the moment the other one (whose clock is right) answers', async () => {
  balancer.mode = 'B';
  balancer.skewMs = -SKEW_MS;
  await startBehindBalancer();
  await applyBundle(env, ns, 'behind', [
    { name: 'x', object: configMap('behind-x', { a: 'b' }, { [Annotations.deletionDelay]: '10m' }) },
    { name: 'y', object: configMap('behind-y') },
  ]);
  await waitForReady(env, ns, 'behind');
  const uid = (await env.client.get(t.configMap, ns, 'behind-x')).metadata.uid;
  await applyBundle(env, ns, 'behind', [{ name: 'y', object: configMap('behind-y') }]);
  const stamped = await waitFor(
    'behind-x to be stamped',
    async () => (await env.client.tryGet(t.configMap, ns, 'behind-x'))?.metadata.annotations?.[Annotations.deletionTimestamp],
  );
  // Stamped by B's clock: 30 minutes before the real time.
  expect(Date.parse(stamped)).toBeLessThan(Date.now() - SKEW_MS / 2);
  balancer.mode = 'A';
  // Any request of the operator's now reaches A: here, the apply of a resource added to the Bundle.
  await applyBundle(env, ns, 'behind', [
    { name: 'y', object: configMap('behind-y') },
    { name: 'z', object: configMap('behind-z') },
  ]);
  await new Promise((r) => setTimeout(r, 5_000));
  const x = await env.client.tryGet(t.configMap, ns, 'behind-x');
  // It left the Bundle seconds ago with deletionDelay 10m: kept, by A's clock, the real one.
  expectKept(x, uid);
});
