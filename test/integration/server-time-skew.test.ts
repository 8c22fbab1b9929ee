/**
 * Issue 23: time bounds that hold behind a load balancer. The operator talks
 * to the API server through a proxy that answers every other request with a
 * `Date` 15 s ahead: two API servers on one etcd whose clocks differ, as a
 * round-robin balancer shows them. A countdown of 10 s must last at least
 * 10 s. Before, the lower bound was the greatest over all answers (the fast
 * server's), the stamp the least upper bound (the slow one's), and the
 * object went at once.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Annotations } from '../../src/api/names.js';
import { loadKubeConfig } from '../../src/kube/client.js';
import { connect, createNamespace, kubeconfigPath, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, types, waitForReady, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';

const SKEW_MS = 15_000;
const DELAY_MS = 10_000;

let env: TestEnv;
let t: KnownTypes;
let ns: string;
let proxy: http.Server;
let op: InProcessOperator | undefined;

/** A plain-HTTP proxy to the test API server (with the admin's credentials) that puts about one answer in three SKEW_MS ahead. */
async function startSkewingProxy(): Promise<{ server: http.Server; kubeconfig: string }> {
  const kc = loadKubeConfig(kubeconfigPath());
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const upstream = new URL(kc.getCurrentCluster()?.server ?? '');
  const agent = new https.Agent({
    keepAlive: true,
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
  });
  let n = 0;
  const server = http.createServer((req, res) => {
    // Not strictly every other request: the operator's requests come in patterns (a list, then its watch), and a
    // balancer's choice does not follow them. A fixed scramble of the request number, about one in three ahead.
    const ahead = Math.imul(n++, 2654435761) >>> 0 < 0x55555555;
    const headers = { ...req.headers, host: upstream.host, ...(tls.headers ?? {}) };
    const out = https.request(
      { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent },
      (answer) => {
        const date = answer.headers.date;
        const rewritten = ahead && date ? new Date(Date.parse(date) + SKEW_MS).toUTCString() : date;
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...(rewritten ? { date: rewritten } : {}) });
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = join(mkdtempSync(join(tmpdir(), 'bundlesmith-skew-')), 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'skew',
      clusters: [{ name: 'skew', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'skew', user: {} }],
      contexts: [{ name: 'skew', context: { cluster: 'skew', user: 'skew' } }],
    }),
  );
  return { server, kubeconfig };
}

beforeAll(async () => {
  env = await connect();
  t = await types(env);
  ns = await createNamespace(env, 'skew');
  const started = await startSkewingProxy();
  proxy = started.server;
  op = await startOperator({ namespace: ns, kubeconfig: started.kubeconfig });
});
afterAll(async () => {
  await op?.stop();
  proxy.closeAllConnections();
  proxy.close();
  env.close();
});

it('a countdown lasts its delay whichever server answers: the bounds hold for the slower and the faster clock', async () => {
  await applyBundle(env, ns, 'skewed', [
    { name: 'a', object: configMap('skew-a') },
    { name: 'b', object: configMap('skew-b', { x: 'y' }, { [Annotations.deletionDelay]: `${DELAY_MS / 1000}s` }) },
  ]);
  await waitForReady(env, ns, 'skewed');
  await applyBundle(env, ns, 'skewed', [{ name: 'a', object: configMap('skew-a') }]);
  await waitFor(
    'the countdown to start',
    async () => (await env.client.tryGet(t.configMap, ns, 'skew-b'))?.metadata.annotations?.[Annotations.deletionTimestamp],
    { intervalMs: 50 },
  );
  const stampSeenAt = Date.now();
  await waitFor('the object to be deleted at expiry', async () => (await env.client.tryGet(t.configMap, ns, 'skew-b')) === undefined, {
    timeoutMs: 120_000,
    intervalMs: 50,
  });
  // Safety, not speed: it lasted its delay (less the poll that saw the stamp late, at most).
  expect(Date.now() - stampSeenAt).toBeGreaterThanOrEqual(DELAY_MS - 100);
}, 180_000);
