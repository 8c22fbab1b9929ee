/**
 * The watch behind the envRefHash (core/bundle/workload-env-hash.ts): each
 * pass reads the ConfigMaps and Secrets its workloads read afresh
 * (kube/env-sources.ts); this watch of their metadata, keeping one identity
 * stub per object and no data, wakes exactly the Bundles that read the
 * object that changed: an index from (kind, namespace, name) to Bundles,
 * replaced on every pass.
 */
import { SOURCE_RESOURCES, type SourceKind } from '../../kube/env-sources.js';
import type { KubeClient } from '../../kube/client.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { identityStub, SupervisedInformer } from '../../runtime/informer.js';
import { BundleIndex } from './bundle-index.js';
import type { BundleKey } from './object-cache.js';

export interface EnvSourceWatchOptions {
  client: KubeClient;
  /** The operator's --namespace, when it watches one. */
  namespace?: string;
  /** A source a Bundle reads changed (or appeared, or went). */
  onBundleEvent: (key: BundleKey) => void;
  onInformerError?: (err: unknown, rt: ResourceType) => void;
}

export class EnvSourceWatch {
  private readonly informers = new Map<SourceKind, SupervisedInformer>();
  /** `${kind}|${namespace}|${name}` <-> the Bundles whose workloads read it. */
  private readonly readers = new BundleIndex();

  constructor(private readonly o: EnvSourceWatchOptions) {}

  /** Replaces what a Bundle's workloads read; the watch of a kind starts with its first reader. */
  declare(bundle: BundleKey, namespace: string, sources: readonly { kind: SourceKind; name: string }[]): void {
    this.readers.declare(
      bundle,
      sources.map((s) => `${s.kind}|${namespace}|${s.name}`),
    );
    for (const s of sources) this.ensure(s.kind);
  }

  undeclare(bundle: BundleKey): void {
    this.readers.undeclare(bundle);
  }

  /**
   * Whether a change to this kind wakes its readers: its watch has listed.
   * Until then (or when RBAC forbids the watch) a Bundle that reads one
   * polls instead.
   */
  watching(kind: SourceKind): boolean {
    return this.informers.get(kind)?.hasSynced() === true;
  }

  /** Identity stubs held (one per ConfigMap or Secret in scope): what the watch costs in memory. */
  size(): number {
    let n = 0;
    for (const i of this.informers.values()) n += i.size();
    return n;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  private ensure(kind: SourceKind): void {
    if (this.informers.has(kind)) return;
    const rt = SOURCE_RESOURCES[kind];
    const informer = new SupervisedInformer(this.o.client, rt, {
      ...(this.o.namespace ? { namespace: this.o.namespace } : {}),
      metadataOnly: true,
      storeAs: identityStub,
      onError: (err) => this.o.onInformerError?.(err, rt),
    });
    const wake = (obj: KubeObject): void => {
      for (const b of this.readers.bundles(`${kind}|${obj.metadata.namespace ?? ''}|${obj.metadata.name}`)) this.o.onBundleEvent(b);
    };
    informer.addHandler({ onAdd: wake, onUpdate: (_old, obj) => wake(obj), onDelete: wake });
    this.informers.set(kind, informer);
    informer.start();
  }
}
