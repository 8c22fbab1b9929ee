/**
 * `bundlesmith gc-graph` (issue 14) against the real apiserver: our
 * collector runs on a namespace, the read-only debug endpoint serves its
 * graph, and the CLI prints the dependents subtree of an owner as a tree,
 * JSON and DOT, with an owner in foreground deletion and a held dependent
 * marked (virtual nodes: test/unit/gc/graph-view.test.ts).
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { runCli } from '../../src/cli/program.js';
import type { CliIo } from '../../src/cli/io.js';
import { startDebugEndpoint } from '../../src/observability/debug.js';
import { silentLogger } from '../../src/observability/logger.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { connect, createNamespace, resourceType, waitFor, type TestEnv } from './harness.js';

let env: TestEnv;
let ns: string;
let cm: ResourceType;
let secret: ResourceType;
let collector: GarbageCollector;
let debug: { close(): Promise<void>; port: number };

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'gcgraph');
  cm = await resourceType(env, 'v1', 'ConfigMap');
  secret = await resourceType(env, 'v1', 'Secret');
  collector = new GarbageCollector(env.client, { mode: 'cluster', namespaces: [ns], workers: 2 });
  await collector.start();
  debug = await startDebugEndpoint({ addr: '127.0.0.1:0', graph: () => collector.engine.graph, logger: silentLogger() });
});
afterAll(async () => {
  await debug.close();
  await collector.stop();
  env.close();
});

function capture(): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l) => out.push(l), err: (l) => err.push(l), isTty: false }, out, err };
}

const ref = (o: KubeObject, blocking = false) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  uid: o.metadata.uid,
  ...(blocking ? { blockOwnerDeletion: true } : {}),
});

it('prints the dependents the collector holds under an owner: tree, JSON and DOT; an owner waiting for its dependents and a dependent being deleted marked', async () => {
  const owner = await env.client.create(secret, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'g-owner', namespace: ns } });
  const a = await env.client.create(cm, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'g-a', namespace: ns, ownerReferences: [ref(owner, true)] },
  });
  await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'g-b', namespace: ns, ownerReferences: [ref(a)] } });
  const base = `http://127.0.0.1:${debug.port}`;
  try {
    const tree = await waitFor('the collector to hold the subtree', async () => {
      const c = capture();
      const code = await runCli(['gc-graph', '--owner', 'Secret/g-owner', '-n', ns, '--debug-url', base], c.io);
      // The owner observed too: its dependents may be seen first (it is then a virtual node for a moment).
      return code === 0 && c.out.length === 3 && !c.out[0]?.includes('virtual') ? c.out : undefined;
    });
    expect(tree).toEqual([`Secret/${ns}/g-owner`, `└─ ConfigMap/${ns}/g-a  [blocks owner deletion]`, `   └─ ConfigMap/${ns}/g-b`]);

    const json = capture();
    expect(await runCli(['gc-graph', '--owner', 'Secret/g-owner', '-n', ns, '-o', 'json', '--debug-url', base], json.io)).toBe(0);
    const view = JSON.parse(json.out.join('\n')) as { nodes: { name: string }[]; edges: { blockOwnerDeletion: boolean }[] };
    expect(view.nodes.map((n) => n.name)).toEqual(['g-owner', 'g-a', 'g-b']);
    expect(view.edges.map((e) => e.blockOwnerDeletion)).toEqual([true, false]);

    const dot = capture();
    expect(await runCli(['gc-graph', '--owner', 'Secret/g-owner', '-n', ns, '-o', 'dot', '--debug-url', base], dot.io)).toBe(0);
    expect(dot.out.join('\n')).toContain(`"${owner.metadata.uid}" -> "${a.metadata.uid}" [style=bold];`);

    // Foreground deletion of the owner while a blocking dependent is held by a foreign finalizer: both marked.
    await env.client.create(cm, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'g-held', namespace: ns, finalizers: ['example.com/hold'], ownerReferences: [ref(owner, true)] },
    });
    await env.client.delete(secret, ns, 'g-owner', { uid: owner.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    const waiting = await waitFor('the owner to wait for its held dependent', async () => {
      const c = capture();
      const code = await runCli(['gc-graph', '--owner', 'Secret/g-owner', '-n', ns, '--debug-url', base], c.io);
      return code === 0 && c.out.length === 2 && c.out[1]?.includes('being deleted') ? c.out : undefined;
    });
    expect(waiting).toEqual([
      `Secret/${ns}/g-owner  (waiting for its dependents)`,
      `└─ ConfigMap/${ns}/g-held  (being deleted)  [blocks owner deletion]`,
    ]);

    const missing = capture();
    expect(await runCli(['gc-graph', '--owner', 'Secret/nothing', '-n', ns, '--debug-url', base], missing.io)).toBe(1);
    expect(missing.err.join('\n')).toContain('holds no Secret/nothing');
  } finally {
    // Only if the test got as far as creating it: a 404 here would hide what failed before.
    if (await env.client.tryGet(cm, ns, 'g-held')) await env.client.patch(cm, ns, 'g-held', { metadata: { finalizers: null } }, 'merge');
  }
});
