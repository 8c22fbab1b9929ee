/**
 * Issue 13.3: the collector's informers keep no store; the graph is the
 * index, and each relist is diffed against what that informer observed.
 * Here a ConfigMap watch goes deaf (its events are dropped, as on a stalled
 * connection), an owner is deleted meanwhile, and the watch is then cut: the
 * informer relists, the graph finds the owner missing from the list, and
 * the collector collects the dependent (still verifying the owner live and
 * deleting with a UID precondition).
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { KubeClient, type WatchOptions } from '../../src/kube/client.js';
import type { ResourceType, WatchEvent } from '../../src/kube/types.js';
import { connect, createNamespace, resourceType, waitFor, waitForGone, type TestEnv } from './harness.js';

/** A client whose ConfigMap watches the test can deafen (events dropped) and then cut (the watch fails: the informer relists). */
class CuttableWatchClient extends KubeClient {
  private deaf = false;
  private readonly cuts = new Set<() => void>();

  constructor(base: KubeClient) {
    super(base.transport);
  }

  deafen(): void {
    this.deaf = true;
  }

  /** Ends the ConfigMap watches with an error; later watches hear again. */
  cut(): void {
    this.deaf = false;
    for (const cut of [...this.cuts]) cut();
  }

  override async watch(
    rt: ResourceType,
    namespace: string | undefined,
    resourceVersion: string,
    opts: WatchOptions,
    onEvent: (event: WatchEvent) => void,
  ): Promise<void> {
    if (rt.plural !== 'configmaps') return super.watch(rt, namespace, resourceVersion, opts, onEvent);
    const abort = new AbortController();
    opts.signal?.addEventListener('abort', () => abort.abort(), { once: true });
    let wasCut = false;
    const cut = () => {
      wasCut = true;
      abort.abort();
    };
    this.cuts.add(cut);
    try {
      await super.watch(rt, namespace, resourceVersion, { ...opts, signal: abort.signal }, (event) => {
        if (!this.deaf) onEvent(event);
      });
    } finally {
      this.cuts.delete(cut);
    }
    if (wasCut) throw new Error('watch cut by the test');
  }
}

let env: TestEnv;
let client: CuttableWatchClient;
let gc: GarbageCollector;
let cm: ResourceType;
let namespace: string;

beforeAll(async () => {
  env = await connect();
  cm = await resourceType(env, 'v1', 'ConfigMap');
  namespace = await createNamespace(env, 'gc-relist');
  client = new CuttableWatchClient(env.client);
  gc = new GarbageCollector(client, { mode: 'cluster', workers: 2, namespaces: [namespace], reportingInstance: 'gc-relist-test' });
  await gc.start();
  await gc.waitForSync();
});

afterAll(async () => {
  await gc?.stop();
  env?.close();
});

it('an owner deleted while the watch was down is found missing at the relist, and its dependent is collected', async () => {
  const owner = await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace } });
  const kept = await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace } });
  const dependent = await env.client.create(cm, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'dependent',
      namespace,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
    },
  });
  await waitFor('the graph to hold the owner, its dependent and the bystander', () =>
    [owner, dependent, kept].every((o) => gc.engine.graph.get(o.metadata.uid)?.observed),
  );

  client.deafen();
  await env.client.delete(cm, namespace, 'owner', { uid: owner.metadata.uid, propagationPolicy: 'Background' });
  expect(await env.client.tryGet(cm, namespace, 'owner')).toBeUndefined();
  // The DELETED event was dropped: the graph cannot know yet.
  expect(gc.engine.graph.get(owner.metadata.uid)?.observed).toBe(true);

  client.cut();
  await waitForGone(env, cm, namespace, 'dependent', { timeoutMs: 60_000 });
  expect(gc.engine.graph.get(owner.metadata.uid)).toBeUndefined();
  // The relist removed only what the list did not hold.
  expect(gc.engine.graph.get(kept.metadata.uid)?.observed).toBe(true);
  expect(await env.client.tryGet(cm, namespace, 'kept')).toBeDefined();
});
