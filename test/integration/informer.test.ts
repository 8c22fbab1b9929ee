/**
 * Supervised informers against the real apiserver, through a loopback TCP
 * proxy the test can cut: a broken watch is noticed, relisted with backoff,
 * and what changed while it was down is seen afterwards.
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { SupervisedInformer } from '../../src/runtime/informer.js';
import type { KubeObject } from '../../src/kube/types.js';
import { connect, createNamespace, kubeconfigPath, resourceType, waitFor, type TestEnv } from './harness.js';

class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  refusing = false;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<number> {
    this.server = createServer((client) => {
      if (this.refusing) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  }

  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

let env: TestEnv;
let ns: string;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'informer');
});
afterAll(() => env.close());

it('relists after its connection is cut and refused, and sees what changed meanwhile', async () => {
  const server = new URL(env.client.transport.serverUrl);
  const proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port) });
  const port = await proxy.listen();
  const proxied = join(tmpdir(), `bundlesmith-proxied-${process.pid}.kubeconfig`);
  writeFileSync(proxied, readFileSync(kubeconfigPath(), 'utf8').replace(server.origin, `https://127.0.0.1:${port}`));
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(proxied));
  const cm = await resourceType(env, 'v1', 'ConfigMap');
  const seen: string[] = [];
  const errors: unknown[] = [];
  const informer = new SupervisedInformer(client, cm, {
    namespace: ns,
    backoffInitialMs: 50,
    backoffMaxMs: 500,
    onError: (e) => errors.push(e),
  });
  informer.addHandler({ onAdd: (o: KubeObject) => seen.push(o.metadata.name) });
  try {
    informer.start();
    await informer.waitForSync();
    await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before', namespace: ns } });
    await waitFor('the informer to see "before"', () => seen.includes('before'));

    // Cut every connection and refuse new ones for a while; create an object meanwhile.
    const restartsBefore = informer.health().restarts;
    proxy.refusing = true;
    proxy.cut();
    const during = await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during', namespace: ns } });
    await waitFor('the informer to notice the failure', () => errors.length >= 1);
    expect(seen).not.toContain('during');
    proxy.refusing = false;

    await waitFor('the informer to relist and see "during"', () => seen.includes('during'));
    expect(informer.health()).toMatchObject({ synced: true });
    // How many attempts the refusal cost depends on the backoff's timing; that it restarted does not.
    expect(informer.health().restarts).toBeGreaterThan(restartsBefore);
    expect(informer.get(ns, 'during')?.metadata.uid).toBe(during.metadata.uid);
  } finally {
    await informer.stop();
    client.close();
    await proxy.close();
  }
});
