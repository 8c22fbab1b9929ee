/**
 * A supervised informer: list, then watch from the list's resourceVersion,
 * keeping an in-memory store and calling handlers. client-node's own informer
 * stops on errors other than 410; this one never gives up: on 410 Gone it
 * relists, on any other failure it backs off (capped, with jitter) and
 * relists, and a watchdog restarts a watch that has been silent for too long
 * (the server closes watches after timeoutSeconds, so silence beyond that
 * means a stalled connection). Handlers get objects, and must only enqueue
 * keys: no work in handlers. A consumer with an index of its own (the
 * garbage collector's graph) runs it without a store (InformerOptions.index).
 */
import type { KubeClient } from '../kube/client.js';
import { errorMessage, isGone } from '../kube/errors.js';
import { namespacedName, type KubeObject, type ResourceType } from '../kube/types.js';

export interface InformerHandler {
  onAdd?(obj: KubeObject): void;
  onUpdate?(oldObj: KubeObject, obj: KubeObject): void;
  /** The last state the informer knew of the object. */
  onDelete?(obj: KubeObject): void;
}

export interface InformerOptions {
  namespace?: string;
  metadataOnly?: boolean;
  labelSelector?: string;
  /** Server-side watch timeout; the watch is then re-established from the last resourceVersion. */
  watchTimeoutSeconds?: number;
  /** Backoff after failures: initial and cap. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Relist this often even when the watch is healthy (0 = never). Catches anything a watch could miss. */
  resyncListMs?: number;
  onError?: (err: unknown, resource: ResourceType) => void;
  /**
   * What the store keeps of each object (handlers still get the whole
   * object as received): a consumer that needs only identities keeps a
   * small stub here. `get`/`list` and the `old`/deleted objects handed to
   * handlers are then stubs.
   */
  storeAs?: (obj: KubeObject) => KubeObject;
  /**
   * A consumer that keeps its own index of the objects (the garbage
   * collector's graph): the informer then keeps no store at all, hands every
   * listed or watched object to `index`, and after each list says which UIDs
   * it held, so the consumer diffs its index against the list (deletions
   * missed while the watch was down included). Handlers, get and list are
   * not available then.
   */
  index?: InformerIndex;
}

/** A store stub with only the identity: kind, name, namespace, uid, resourceVersion. */
export function identityStub(obj: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: namespace === undefined ? { name, uid, resourceVersion } : { name, namespace, uid, resourceVersion },
  };
}

/** What a storeless informer hands its consumer. */
export interface InformerIndex {
  /** Listed, added or modified (a relist repeats unchanged objects: compare resourceVersions). */
  observed(obj: KubeObject): void;
  /** Deleted: the object as the DELETED event carries it. */
  deleted(obj: KubeObject): void;
  /**
   * A list is complete and every object in it was handed to `observed`:
   * `uids` is all of them. Whatever else the index holds from this informer
   * no longer exists.
   */
  listed(uids: ReadonlySet<string>): void;
}

export interface InformerHealth {
  resource: string;
  synced: boolean;
  restarts: number;
  lastError?: string;
  lastEventAt?: number;
}

export class SupervisedInformer {
  private readonly store = new Map<string, KubeObject>();
  private readonly handlers: InformerHandler[] = [];
  private synced = false;
  private running = false;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private restarts = 0;
  private lastError: string | undefined;
  private lastEventAt: number | undefined;
  private syncWaiters: (() => void)[] = [];

  constructor(
    private readonly client: KubeClient,
    readonly resource: ResourceType,
    private readonly options: InformerOptions = {},
  ) {}

  addHandler(handler: InformerHandler): void {
    if (this.options.index) throw new Error(`the informer of ${this.resource.plural} keeps no store: its consumer is its index`);
    this.handlers.push(handler);
    // A late handler sees what is already known, as if it had been there.
    for (const obj of this.store.values()) handler.onAdd?.(obj);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort?.abort();
    await this.loop;
    for (const w of this.syncWaiters) w();
    this.syncWaiters = [];
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list has been stored (or the informer is stopped). */
  waitForSync(): Promise<void> {
    if (this.synced || !this.running) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  list(): KubeObject[] {
    return [...this.store.values()];
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.store.get(namespacedName(this.resource.namespaced ? namespace : undefined, name));
  }

  size(): number {
    return this.store.size;
  }

  health(): InformerHealth {
    return {
      resource: `${this.resource.plural}.${this.resource.group || 'core'}`,
      synced: this.synced,
      restarts: this.restarts,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(this.lastEventAt !== undefined ? { lastEventAt: this.lastEventAt } : {}),
    };
  }

  private key(obj: KubeObject): string {
    return namespacedName(this.resource.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name);
  }

  private async run(): Promise<void> {
    let backoff = this.options.backoffInitialMs ?? 200;
    const backoffMax = this.options.backoffMaxMs ?? 30_000;
    while (this.running) {
      this.abort = new AbortController();
      try {
        const rv = await this.relist();
        backoff = this.options.backoffInitialMs ?? 200;
        await this.watchFrom(rv, this.abort.signal);
      } catch (err) {
        if (!this.running) break;
        this.restarts++;
        this.lastError = errorMessage(err);
        this.options.onError?.(err, this.resource);
        // 410 Gone: our resourceVersion is too old; relist at once. Anything else: back off.
        if (!isGone(err)) {
          const jittered = backoff * (0.5 + Math.random());
          await sleep(jittered, this.abort.signal);
          backoff = Math.min(backoffMax, backoff * 2);
        }
      }
    }
  }

  /** Lists everything and reconciles the store (or the consumer's index) with it, emitting the differences. */
  private async relist(): Promise<string> {
    const resourceVersion = this.options.index ? await this.relistInto(this.options.index) : await this.relistIntoStore();
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters) w();
      this.syncWaiters = [];
    }
    return resourceVersion;
  }

  /** Storeless: every page straight to the index (no page kept), then the UIDs the list held. */
  private async relistInto(index: InformerIndex): Promise<string> {
    const uids = new Set<string>();
    const resourceVersion = await this.client.listPages(
      this.resource,
      this.options.namespace,
      {
        metadataOnly: this.options.metadataOnly ?? false,
        ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
      },
      (items) => {
        for (const obj of items) {
          uids.add(obj.metadata.uid);
          index.observed(obj);
        }
      },
    );
    index.listed(uids);
    return resourceVersion;
  }

  private async relistIntoStore(): Promise<string> {
    const { items, resourceVersion } = await this.client.list(this.resource, this.options.namespace, {
      metadataOnly: this.options.metadataOnly ?? false,
      ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
    });
    const seen = new Set<string>();
    for (const obj of items) {
      const key = this.key(obj);
      seen.add(key);
      this.upsert(key, obj);
    }
    for (const [key, old] of [...this.store]) {
      if (!seen.has(key)) {
        this.store.delete(key);
        for (const h of this.handlers) h.onDelete?.(old);
      }
    }
    return resourceVersion;
  }

  private upsert(key: string, obj: KubeObject): void {
    const old = this.store.get(key);
    this.store.set(key, this.options.storeAs ? this.options.storeAs(obj) : obj);
    if (!old) for (const h of this.handlers) h.onAdd?.(obj);
    else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) for (const h of this.handlers) h.onUpdate?.(old, obj);
  }

  /** Watches until the server ends the stream (re-watch from the last rv) or something fails (throw). */
  private async watchFrom(resourceVersion: string, signal: AbortSignal): Promise<void> {
    let rv = resourceVersion;
    const resyncMs = this.options.resyncListMs ?? 0;
    const resyncAt = resyncMs > 0 ? Date.now() + resyncMs : Infinity;
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? 240;
    while (this.running && Date.now() < resyncAt) {
      // Watchdog: the server ends the watch after timeoutSeconds; well past
      // that with no end means the connection stalled.
      const watchdog = new AbortController();
      const onAbort = () => watchdog.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => watchdog.abort(), (timeoutSeconds + 30) * 1000);
      try {
        await this.client.watch(
          this.resource,
          this.options.namespace,
          rv,
          {
            metadataOnly: this.options.metadataOnly ?? false,
            timeoutSeconds,
            signal: watchdog.signal,
            ...(this.options.labelSelector ? { labelSelector: this.options.labelSelector } : {}),
          },
          (event) => {
            this.lastEventAt = Date.now();
            const next = event.object.metadata.resourceVersion;
            if (next) rv = next;
            if (event.type === 'BOOKMARK') return;
            const index = this.options.index;
            if (index) {
              if (event.type === 'DELETED') index.deleted(event.object);
              else index.observed(event.object);
              return;
            }
            const key = this.key(event.object);
            if (event.type === 'DELETED') {
              const old = this.store.get(key) ?? event.object;
              this.store.delete(key);
              for (const h of this.handlers) h.onDelete?.(old);
            } else {
              this.upsert(key, event.object);
            }
          },
        );
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      }
      if (watchdog.signal.aborted && !signal.aborted) throw new Error(`watch of ${this.resource.plural} stalled; restarting`);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
