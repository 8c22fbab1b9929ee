/**
 * The collector's guarded writes that may need a re-read: each patch pins
 * what it was computed from (core/gc/patches.ts), and a stale write reads the
 * object again and recomputes, a few times at most.
 */
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { guardedPatch } from '../../kube/guarded-write.js';
import { removeFinalizerPatch, removeRefsPatch } from '../../core/gc/patches.js';
import { identityOf, type Identity } from '../../core/gc/graph-identity.js';
import type { GraphNode } from '../../core/gc/graph-node.js';
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

/**
 * Returns false when the object (this UID) or the finalizer was already gone.
 * Read first, then up to three more fresh reads after a stale answer.
 */
export async function removeFinalizer(api: GcApi, metrics: GcMetrics, rt: ResourceType, id: Identity, finalizer: string): Promise<boolean> {
  const namespace = rt.namespaced ? id.namespace : undefined;
  const written = await guardedPatch(
    api,
    { rt, namespace, name: id.name },
    {
      type: 'json',
      redecide: {
        readFirst: true,
        retries: 3,
        read: () => api.tryGet(rt, namespace, id.name, { metadataOnly: true }),
        decide: (live) =>
          !live || live.metadata.uid !== id.uid ? undefined : removeFinalizerPatch(id.uid, live.metadata.finalizers ?? [], finalizer),
      },
    },
  );
  if (written.kind === 'written') return true;
  if (written.kind === 'declined') return false;
  // Any other outcome (a 404 on the patch too) is an error of the collector's.
  metrics.error(id.kind, 'remove-finalizer');
  throw written.error;
}

/**
 * Removes the reference to `ownerUid` from one dependent (this UID); nothing
 * when it is gone or no longer refers to the owner. Up to two fresh reads
 * after a stale answer.
 */
export async function removeOwnerRef(
  api: GcApi,
  metrics: GcMetrics,
  rt: ResourceType,
  id: Identity,
  refs: readonly { uid: string }[],
  ownerUid: string,
): Promise<void> {
  const namespace = rt.namespaced ? id.namespace : undefined;
  const patchOf = (current: readonly { uid: string }[]) =>
    current.some((r) => r.uid === ownerUid) ? removeRefsPatch(id.uid, current, new Set([ownerUid])) : undefined;
  const written = await guardedPatch(
    api,
    { rt, namespace, name: id.name },
    {
      patch: patchOf(refs),
      type: 'json',
      redecide: {
        retries: 2,
        read: () => api.tryGet(rt, namespace, id.name, { metadataOnly: true }),
        decide: (fresh) => (!fresh || fresh.metadata.uid !== id.uid ? undefined : patchOf(fresh.metadata.ownerReferences ?? [])),
      },
    },
  );
  if (written.kind === 'written') metrics.orphaned(id.kind);
  if (written.kind === 'written' || written.kind === 'declined' || written.kind === 'gone') return;
  metrics.error(id.kind, 'orphan');
  throw written.error;
}

/**
 * Removes the reference to `ownerUid` from each dependent, 16 at a time
 * (the transport rate-limits anyway; this bounds memory). Returns the
 * failures: the owner keeps its orphan finalizer until there are none.
 */
export async function releaseDependents(
  api: GcApi,
  resolver: ResourceResolver,
  metrics: GcMetrics,
  dependents: readonly GraphNode[],
  ownerUid: string,
): Promise<unknown[]> {
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
