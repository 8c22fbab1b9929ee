/**
 * Live verification of owner references, by UID, before any delete
 * decision: the graph (an informer cache) is never trusted to say an owner
 * is gone.
 *
 * Cost matters on large cascades, where many dependents share one owner:
 * - absence, once verified (a 404, a UID mismatch, or an observed DELETE), is
 *   remembered in a bounded LRU keyed by the reference's full coordinates;
 *   a UID never comes back, so the entry stays true;
 * - concurrent lookups of the same owner share one request;
 * - a found owner's state is reused for a short time, and forgotten as soon
 *   as the graph sees any change to that owner.
 */
import type { Clock } from '../../kube/clock.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { errorMessage } from '../../kube/errors.js';
import { Finalizers } from '../../api/names.js';
import type { OwnerState, OwnerStateKind } from '../../core/gc/classify.js';
import { identityKey, type Identity } from '../../core/gc/graph-identity.js';
import type { Graph } from '../../core/gc/graph.js';
import type { OwnerRef } from '../../core/gc/graph-node.js';
import { LruSet } from '../../core/gc/lru.js';

export interface ResourceResolver {
  /** The resource serving apiVersion/kind, or undefined when the server does not serve it. */
  resolve(apiVersion: string, kind: string): Promise<ResourceType | undefined>;
  /** What discovery already knows, without asking the server (optional). */
  lookup?(apiVersion: string, kind: string): ResourceType | undefined;
}

export interface OwnerLookupApi {
  tryGet(rt: ResourceType, namespace: string | undefined, name: string, opts: { metadataOnly?: boolean }): Promise<KubeObject | undefined>;
}

interface Memo {
  state: 'present' | 'present-deleting-dependents';
  at: number;
}

export interface OwnerVerifierOptions {
  absentCacheSize: number;
  /** How long a found owner's state may be reused (the graph's events invalidate it sooner). */
  presentTtlMs: number;
  /** Called for every live lookup (for metrics and tests). */
  onLookup?: (ref: OwnerRef) => void;
}

export class OwnerVerifier {
  readonly absent: LruSet<string>;
  private readonly inflight = new Map<string, Promise<OwnerState['state'] | { error: string }>>();
  /** owner UID -> lookup key -> state; per UID so a graph event drops them all at once. */
  private readonly memo = new Map<string, Map<string, Memo>>();

  constructor(
    private readonly api: OwnerLookupApi,
    private readonly resolver: ResourceResolver,
    private readonly clock: Clock,
    private readonly options: OwnerVerifierOptions,
  ) {
    this.absent = new LruSet(options.absentCacheSize);
  }

  markAbsent(id: Identity): void {
    this.absent.add(identityKey(id));
  }

  /** The graph saw a change to this UID: found states of it are stale. */
  invalidate(uid: string): void {
    this.memo.delete(uid);
  }

  /** One state per reference, in order. Never throws: a failed lookup is a 'lookup-failed' state. */
  async ownerStates(graph: Graph, dependent: { namespace: string }, refs: readonly OwnerRef[]): Promise<OwnerState[]> {
    return Promise.all(refs.map((ref) => this.ownerState(graph, dependent, ref)));
  }

  private async ownerState(graph: Graph, dependent: { namespace: string }, ref: OwnerRef): Promise<OwnerState> {
    const coords = { uid: ref.uid, apiVersion: ref.type.apiVersion, kind: ref.type.kind, name: ref.name };
    let rt: ResourceType | undefined;
    try {
      rt = await this.resolver.resolve(ref.type.apiVersion, ref.type.kind);
    } catch (err) {
      return this.knownAbsent(graph, dependent, ref, coords) ?? { ref, state: 'lookup-failed', detail: `discovery: ${errorMessage(err)}` };
    }
    // A kind no longer served: an absence recorded while it was served is still true (a UID never comes back).
    if (!rt)
      return (
        this.knownAbsent(graph, dependent, ref, coords) ?? {
          ref,
          state: 'unknown-kind',
          detail: `${ref.type.apiVersion} ${ref.type.kind} is not served`,
        }
      );
    // Scope first: a cluster-scoped object can never be owned by a namespaced
    // kind, whatever the absent cache holds (upstream forgets such items).
    if (dependent.namespace === '' && rt.namespaced) return { ref, state: 'namespaced-owner-of-cluster-scoped' };
    const namespace = rt.namespaced ? dependent.namespace : '';
    // Only the entry for the owner's real coordinates counts.
    if (this.absent.has(identityKey({ ...coords, namespace })))
      return { ref, state: this.absentKind(graph, dependent, ref, 'absent'), detail: 'known absent' };
    const lookupKey = `${rt.group}/${rt.plural}|${namespace}|${ref.name}`;

    const memo = this.memo.get(ref.uid)?.get(lookupKey);
    if (memo && this.clock.now() - memo.at <= this.options.presentTtlMs) return { ref, state: memo.state, detail: 'verified recently' };

    const flightKey = `${ref.uid}|${lookupKey}`;
    let flight = this.inflight.get(flightKey);
    if (!flight) {
      flight = this.lookup(rt, namespace, ref).finally(() => this.inflight.delete(flightKey));
      this.inflight.set(flightKey, flight);
    }
    const result = await flight;
    if (typeof result === 'object') return { ref, state: 'lookup-failed', detail: result.error };
    if (result === 'present' || result === 'present-deleting-dependents') {
      let byKey = this.memo.get(ref.uid);
      if (!byKey) {
        byKey = new Map<string, Memo>();
        this.memo.set(ref.uid, byKey);
      }
      byKey.set(lookupKey, { state: result, at: this.clock.now() });
      return { ref, state: result };
    }
    this.absent.add(identityKey({ ...coords, namespace }));
    return {
      ref,
      state: this.absentKind(graph, dependent, ref, result),
      detail: result === 'coordinates-mismatch' ? `another object is at ${ref.type.kind} ${ref.name}` : undefined,
    };
  }

  /** The absent cache when discovery cannot say the owner's scope: either coordinate may have been recorded. */
  private knownAbsent(
    graph: Graph,
    dependent: { namespace: string },
    ref: OwnerRef,
    coords: Omit<Identity, 'namespace'>,
  ): OwnerState | undefined {
    const recorded =
      this.absent.has(identityKey({ ...coords, namespace: dependent.namespace })) ||
      (dependent.namespace !== '' && this.absent.has(identityKey({ ...coords, namespace: '' })));
    return recorded ? { ref, state: this.absentKind(graph, dependent, ref, 'absent'), detail: 'known absent' } : undefined;
  }

  private async lookup(rt: ResourceType, namespace: string, ref: OwnerRef): Promise<OwnerState['state'] | { error: string }> {
    this.options.onLookup?.(ref);
    try {
      const live = await this.api.tryGet(rt, rt.namespaced ? namespace : undefined, ref.name, { metadataOnly: true });
      if (!live) return 'absent';
      if (live.metadata.uid !== ref.uid) return 'coordinates-mismatch';
      const waiting =
        live.metadata.deletionTimestamp !== undefined && (live.metadata.finalizers ?? []).includes(Finalizers.foregroundDeletion);
      return waiting ? 'present-deleting-dependents' : 'present';
    } catch (err) {
      return { error: errorMessage(err) };
    }
  }

  /** Refines an absence with what the graph knows, for humans: the UID may live elsewhere. */
  private absentKind(graph: Graph, dependent: { namespace: string }, ref: OwnerRef, found: OwnerStateKind): OwnerStateKind {
    const node = graph.get(ref.uid);
    if (!node || node.virtual) return found;
    if (node.namespace !== '' && node.namespace !== dependent.namespace) return 'wrong-namespace';
    if (node.name !== ref.name || node.type.kind !== ref.type.kind) return 'coordinates-mismatch';
    return found;
  }
}
