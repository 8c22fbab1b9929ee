/**
 * The collector's guarded writes that may need a re-read: each patch pins
 * what it was computed from (core/gc/patches.ts), and a stale write reads the
 * object again and recomputes, a few times at most.
 */
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { isNotFound, isStaleWrite } from '../../kube/errors.js';
import { removeFinalizerPatch, removeRefsPatch } from '../../core/gc/patches.js';
import { identityOf, type GraphNode, type Identity } from '../../core/gc/graph.js';
import type { DeleteOptions, EventInput, PatchType } from '../../kube/client.js';
import type { GcMetrics } from './metrics.js';
import type { OwnerLookupApi, ResourceResolver } from './owner-verifier.js';

/** The API verbs the collector uses (KubeClient has them all; the engine's step tests use a fake). */
export interface GcApi extends OwnerLookupApi {
  patch(rt: ResourceType, namespace: string | undefined, name: string, patch: unknown, type: PatchType): Promise<KubeObject>;
  delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<'deleted' | 'not-found'>;
  /** Resolves with the new Event's name. */
  createEvent(input: EventInput): Promise<string>;
  /** The next count of an Event's series, with a new note. */
  updateEventSeries(namespace: string, name: string, series: { count: number; lastObservedTime: string }, note: string): Promise<void>;
}

/** Returns false when the object (this UID) or the finalizer was already gone. */
export async function removeFinalizer(api: GcApi, metrics: GcMetrics, rt: ResourceType, id: Identity, finalizer: string): Promise<boolean> {
  const namespace = rt.namespaced ? id.namespace : undefined;
  for (let attempt = 0; ; attempt++) {
    const live = await api.tryGet(rt, namespace, id.name, { metadataOnly: true });
    if (!live || live.metadata.uid !== id.uid) return false;
    const patch = removeFinalizerPatch(id.uid, live.metadata.finalizers ?? [], finalizer);
    if (!patch) return false;
    try {
      await api.patch(rt, namespace, id.name, patch, 'json');
      return true;
    } catch (err) {
      if (isStaleWrite(err) && attempt < 3) continue;
      metrics.error(id.kind, 'remove-finalizer');
      throw err;
    }
  }
}

/** Removes the reference to `ownerUid` from one dependent (this UID); nothing when it is gone or no longer refers to the owner. */
export async function removeOwnerRef(api: GcApi, metrics: GcMetrics, rt: ResourceType, id: Identity, refs: readonly { uid: string }[], ownerUid: string): Promise<void> {
  const namespace = rt.namespaced ? id.namespace : undefined;
  for (let attempt = 0; ; attempt++) {
    if (!refs.some((r) => r.uid === ownerUid)) return;
    try {
      await api.patch(rt, namespace, id.name, removeRefsPatch(id.uid, refs, new Set([ownerUid])), 'json');
      metrics.orphaned(id.kind);
      return;
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isStaleWrite(err) || attempt >= 2) {
        metrics.error(id.kind, 'orphan');
        throw err;
      }
      const fresh = await api.tryGet(rt, namespace, id.name, { metadataOnly: true });
      if (!fresh || fresh.metadata.uid !== id.uid) return;
      refs = fresh.metadata.ownerReferences ?? [];
    }
  }
}

/**
 * Removes the reference to `ownerUid` from each dependent, 16 at a time
 * (the transport rate-limits anyway; this bounds memory). Returns the
 * failures: the owner keeps its orphan finalizer until there are none.
 */
export async function releaseDependents(api: GcApi, resolver: ResourceResolver, metrics: GcMetrics, dependents: readonly GraphNode[], ownerUid: string): Promise<unknown[]> {
  const failures: unknown[] = [];
  for (let i = 0; i < dependents.length; i += 16) {
    const results = await Promise.allSettled(
      dependents.slice(i, i + 16).map(async (dep) => {
        const id = identityOf(dep);
        const rt = await resolver.resolve(id.apiVersion, id.kind);
        if (!rt) throw new Error(`${id.apiVersion} ${id.kind} is not served`);
        await removeOwnerRef(api, metrics, rt, id, dep.owners, ownerUid);
      }),
    );
    for (const r of results) if (r.status === 'rejected') failures.push(r.reason);
  }
  return failures;
}
