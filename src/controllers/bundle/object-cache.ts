/**
 * Shared informers for the kinds Bundles list, started on demand (one per
 * kind, also for CRDs installed after start). They select on the label the
 * operator puts on everything it applies (Labels.managed), so memory grows
 * with what Bundles manage, not with the cluster: objects without it (an
 * orphan to adopt, an object another controller holds) are read with GETs
 * by the reconcile. Two indexes route object events to Bundles:
 *  - by Bundle reference: objects whose ownerReferences name a Bundle (its
 *    controller reference, or the claim of a Bundle that lost a Conflict);
 *  - by declared name: the (kind, namespace, name) each Bundle lists, so an
 *    orphan or an object controlled by someone else also wakes its Bundle.
 */
import { API_VERSION, BUNDLE_KIND, MANAGED_SELECTOR } from '../../api/names.js';
import type { KubeClient } from '../../kube/client.js';
import { controllerOf, versionedObjectKey, kindKey } from '../../core/bundle/objects.js';
import { isBundleReference } from '../../core/bundle/owner-references.js';
import { namespacedName, type KubeObject, type ResourceType } from '../../kube/types.js';
import { SupervisedInformer, type InformerHealth } from '../../runtime/informer.js';
import { BundleIndex } from './bundle-index.js';
import type { BundleKey } from './bundle-key.js';

export type { BundleKey } from './bundle-key.js';

export interface ObjectCacheOptions {
  client: KubeClient;
  /** Restrict watches to one namespace (the operator's --namespace). */
  namespace?: string;
  /** Bundles to wake for an object event. */
  onBundleEvent: (key: BundleKey) => void;
  onInformerError?: (err: unknown, rt: ResourceType) => void;
  /** How long a pass waits for a new kind's first list before it gives the worker back (WatchNotSynced). */
  syncTimeoutMs?: number;
}

/**
 * A kind's watch has not listed (RBAC forbids it, the server fails it, or its
 * first list is still on its way): the Bundle that needs it waits for it
 * without holding a worker, and is woken when it lists.
 */
export class WatchNotSynced extends Error {
  constructor(
    readonly resource: string,
    readonly lastError: string | undefined,
  ) {
    super(`cannot watch ${resource}${lastError ? `: ${lastError}` : ': not listed yet'}`);
    this.name = 'WatchNotSynced';
  }
}

/** Default for ObjectCacheOptions.syncTimeoutMs: a first list normally takes milliseconds. */
const FIRST_LIST_WAIT_MS = 2_000;

export class ObjectCache {
  private readonly informers = new Map<string, SupervisedInformer>();
  /** Uid of a Bundle an object references (controller or claim) -> object coordinates -> object. */
  private readonly byBundleReference = new Map<string, Map<string, KubeObject>>();
  /** Declared coordinates -> Bundles that list them. */
  private readonly declared = new BundleIndex();
  /** Kinds whose watch has not listed -> the Bundles waiting for it (woken when it lists). */
  private readonly waiting = new Map<string, Set<BundleKey>>();

  constructor(private readonly options: ObjectCacheOptions) {}

  /**
   * The informer for a kind, started and synced. One that has not listed
   * within a short wait (or has failed already: forbidden, not served) throws
   * WatchNotSynced at once, and `waiter` is woken when it lists: a Bundle
   * blocked on something outside it must not hold a worker others need.
   */
  async ensure(rt: ResourceType, waiter?: BundleKey): Promise<SupervisedInformer> {
    const key = kindKey(rt.apiVersion, rt.kind);
    let informer = this.informers.get(key);
    if (!informer) {
      informer = new SupervisedInformer(this.options.client, rt, {
        ...(this.options.namespace && rt.namespaced ? { namespace: this.options.namespace } : {}),
        labelSelector: MANAGED_SELECTOR,
        onError: (err) => this.options.onInformerError?.(err, rt),
      });
      informer.addHandler({
        onAdd: (obj) => this.observe(undefined, obj),
        onUpdate: (old, obj) => this.observe(old, obj),
        onDelete: (obj) => this.forgetObject(obj),
      });
      this.informers.set(key, informer);
      informer.start();
    }
    if (!informer.hasSynced()) await this.waitForSync(key, informer, waiter);
    return informer;
  }

  private async waitForSync(key: string, informer: SupervisedInformer, waiter: BundleKey | undefined): Promise<void> {
    // A watch that failed already (forbidden, not served) is not waited for: it retries with its own backoff.
    if (informer.health().lastError === undefined) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>(
        (resolve) => (timer = setTimeout(() => resolve('timeout'), this.options.syncTimeoutMs ?? FIRST_LIST_WAIT_MS)),
      );
      const result = await Promise.race([informer.waitForSync().then(() => 'synced' as const), timedOut]);
      clearTimeout(timer);
      if (result === 'synced') return;
    }
    if (waiter !== undefined) this.waitFor(key, informer, waiter);
    const rt = informer.resource;
    throw new WatchNotSynced(`${rt.plural}${rt.group ? `.${rt.group}` : ''}`, informer.health().lastError);
  }

  /** Wakes `waiter` when the kind's informer lists (once per informer a wake is armed). */
  private waitFor(key: string, informer: SupervisedInformer, waiter: BundleKey): void {
    let waiters = this.waiting.get(key);
    if (waiters === undefined) {
      this.waiting.set(key, (waiters = new Set()));
      void informer.waitForSync().then(() => {
        const woken = this.waiting.get(key) ?? new Set<BundleKey>();
        this.waiting.delete(key);
        for (const k of woken) this.options.onBundleEvent(k);
      });
    }
    waiters.add(waiter);
  }

  informerFor(apiVersion: string, kind: string): SupervisedInformer | undefined {
    return this.informers.get(kindKey(apiVersion, kind));
  }

  get(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.informers.get(kindKey(rt.apiVersion, rt.kind))?.get(namespace, name);
  }

  /** Every cached object with an ownerReference (controller or claim) to the Bundle with this uid. */
  referencing(uid: string): KubeObject[] {
    return [...(this.byBundleReference.get(uid)?.values() ?? [])];
  }

  /** Replaces what a Bundle declares, so events on those coordinates wake it. */
  declare(bundle: BundleKey, objects: readonly { apiVersion: string; kind: string; namespace: string; name: string }[]): void {
    this.declared.declare(
      bundle,
      objects.map((o) => versionedObjectKey(o.apiVersion, o.kind, o.namespace, o.name)),
    );
  }

  /** Bundles that declared these coordinates on their last pass. */
  bundlesDeclaring(apiVersion: string, kind: string, namespace: string, name: string): BundleKey[] {
    return [...this.declared.bundles(versionedObjectKey(apiVersion, kind, namespace, name))];
  }

  undeclare(bundle: BundleKey): void {
    this.declared.undeclare(bundle);
  }

  health(): InformerHealth[] {
    return [...this.informers.values()].map((i) => i.health());
  }

  /** How many objects the caches hold (all kinds): what the label selection bounds. */
  size(): number {
    let n = 0;
    for (const informer of this.informers.values()) n += informer.list().length;
    return n;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  private observe(old: KubeObject | undefined, obj: KubeObject): void {
    const key = versionedObjectKey(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name);
    const now = referencedBundleUids(obj);
    for (const uid of old ? referencedBundleUids(old) : []) if (!now.has(uid)) this.unindex(uid, key);
    for (const uid of now) {
      let map = this.byBundleReference.get(uid);
      if (!map) this.byBundleReference.set(uid, (map = new Map<string, KubeObject>()));
      map.set(key, obj);
    }
    this.wake(old, obj);
  }

  private forgetObject(obj: KubeObject): void {
    const key = versionedObjectKey(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name);
    for (const uid of referencedBundleUids(obj)) this.unindex(uid, key);
    this.wake(undefined, obj);
  }

  private unindex(uid: string, key: string): void {
    const map = this.byBundleReference.get(uid);
    map?.delete(key);
    if (map?.size === 0) this.byBundleReference.delete(uid);
  }

  private wake(old: KubeObject | undefined, obj: KubeObject): void {
    const keys = new Set<BundleKey>();
    for (const o of old ? [old, obj] : [obj]) {
      const ref = bundleController(o);
      if (ref) keys.add(namespacedName(o.metadata.namespace, ref));
    }
    for (const k of this.declared.bundles(versionedObjectKey(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name)))
      keys.add(k);
    for (const k of keys) this.options.onBundleEvent(k);
  }
}

/** Uids of the Bundles the object's ownerReferences name. */
function referencedBundleUids(obj: KubeObject): Set<string> {
  return new Set((obj.metadata.ownerReferences ?? []).filter((r) => isBundleReference(r)).map((r) => r.uid));
}

/** The name of the Bundle controlling this object, if a Bundle does. */
export function bundleController(obj: KubeObject): string | undefined {
  const ref = controllerOf(obj);
  return ref && ref.apiVersion === API_VERSION && ref.kind === BUNDLE_KIND ? ref.name : undefined;
}
