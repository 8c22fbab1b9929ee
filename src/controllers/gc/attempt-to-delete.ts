/**
 * One attempt-to-delete item that is not an owner in foreground deletion:
 * fetch the facts (owner states, verified live by UID), decide (core/gc),
 * act with preconditions. A stale write reads the object once and decides
 * again on what it reads.
 */
import { Finalizers } from '../../api/names.js';
import { guardedDelete, guardedPatch, type WriteFailure } from '../../kube/guarded-write.js';
import { errorMessage } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import type { WorkResult } from '../../runtime/workers.js';
import { classifyReferences } from '../../core/gc/classify.js';
import { decideAttemptToDelete, itemFacts } from '../../core/gc/decide.js';
import type { DeletionPropagation } from '../../api/names.js';
import { OwnerRef, refBits, NodeFlags, type GraphNode } from '../../core/gc/graph-node.js';
import { formatIdentity, identityOf, type Identity } from '../../core/gc/graph-identity.js';
import type { Graph } from '../../core/gc/graph.js';
import { removeRefsPatch, unblockRefsPatch } from '../../core/gc/patches.js';
import type { GcMetrics } from './metrics.js';
import type { OwnerVerifier, ResourceResolver } from './owner-verifier.js';
import type { GcApi } from './writes.js';

/** What the engine lends a worker. */
export interface AttemptContext {
  graph: Graph;
  api: GcApi;
  resolver: ResourceResolver;
  verifier: OwnerVerifier;
  metrics: GcMetrics;
  debug(message: string, fields: Record<string, unknown>): void;
  /** The graph has listed every resource (the sync barrier is complete). */
  graphComplete(): boolean;
  /** Nothing with this identity exists (verified live): tell the graph writer. */
  virtualDelete(identity: Identity): void;
  collected(identity: Identity, propagation: DeletionPropagation, causes: readonly OwnerRef[]): void;
}

/** A dependent as a decision sees it: from the graph, or from a fresh read after a conflict. */
export interface ItemSnapshot {
  identity: Identity;
  resourceVersion: string;
  refs: readonly OwnerRef[];
  orphanFinalizer: boolean;
  foregroundFinalizer: boolean;
}

export function snapshotOfNode(node: GraphNode): ItemSnapshot {
  return {
    identity: identityOf(node),
    resourceVersion: node.resourceVersion,
    refs: node.owners,
    orphanFinalizer: node.has(NodeFlags.orphanFinalizer),
    foregroundFinalizer: node.has(NodeFlags.foregroundFinalizer),
  };
}

function snapshotOfRead(identity: Identity, meta: KubeObject['metadata']): ItemSnapshot {
  const refs = (meta.ownerReferences ?? []).map((r) => new OwnerRef(r.uid, { apiVersion: r.apiVersion, kind: r.kind }, r.name, refBits(r)));
  const finalizers = meta.finalizers ?? [];
  return {
    identity,
    resourceVersion: meta.resourceVersion,
    refs,
    orphanFinalizer: finalizers.includes(Finalizers.orphan),
    foregroundFinalizer: finalizers.includes(Finalizers.foregroundDeletion),
  };
}

/** A virtual node: is anything with its identity on the server? If not, tell the writer. */
export async function verifyVirtual(ctx: AttemptContext, node: GraphNode): Promise<WorkResult> {
  const id = identityOf(node);
  const rt = await ctx.resolver.resolve(id.apiVersion, id.kind);
  // Unknown kind: maybe a CRD not discovered yet; retry with backoff, as upstream.
  if (!rt) return 'requeue';
  // A namespaced kind guessed without a namespace: only cluster-scoped
  // dependents name it, and such a reference is never valid. There is no
  // coordinate to look up, and declaring it absent would record an absence
  // under namespace '' that says nothing true about the real object (a live
  // namespaced owner with this UID). Leave the node alone, as upstream; its
  // dependents are each decided (and forgotten) on their own.
  if (rt.namespaced && id.namespace === '') return 'forget';
  let live: KubeObject | undefined;
  try {
    live = await ctx.api.tryGet(rt, rt.namespaced ? id.namespace : undefined, id.name, { metadataOnly: true });
  } catch (err) {
    ctx.metrics.error(id.kind, 'verify-virtual');
    throw err;
  }
  if (!live || live.metadata.uid !== id.uid) {
    ctx.virtualDelete(id);
    return 'forget';
  }
  // It exists: wait until an informer reports it (then it is no longer virtual).
  return 'requeue';
}

export async function decideAndAct(ctx: AttemptContext, item: ItemSnapshot, isRetry: boolean): Promise<WorkResult> {
  const id = item.identity;
  const rt = await ctx.resolver.resolve(id.apiVersion, id.kind);
  if (!rt) return 'requeue';
  const node = ctx.graph.get(id.uid);
  const states = await ctx.verifier.ownerStates(ctx.graph, { namespace: id.namespace }, item.refs);
  const facts = node ? itemFacts(ctx.graph, node) : { hasDependents: false, dependentDeletingDependents: false };
  // On a partial graph, "it has no dependents" is not known: an item
  // deleted for a waiting owner then goes in the foreground, so that the
  // owner still waits for whatever the item turns out to own.
  if (!ctx.graphComplete()) facts.hasDependents = true;
  const decision = decideAttemptToDelete(
    { ...facts, orphanFinalizer: item.orphanFinalizer, foregroundFinalizer: item.foregroundFinalizer },
    classifyReferences(states),
  );
  ctx.debug(`attempt to delete ${formatIdentity(id)}: ${decision.kind}`, {
    states: states.map((s) => `${s.ref.type.kind}/${s.ref.name}=${s.state}`),
  });
  const namespace = rt.namespaced ? id.namespace : undefined;
  const at = { rt, namespace, name: id.name };
  // Each write is sent once through the guarded write; a stale answer (409, or a 422 without field causes, on the
  // patches and the DELETE alike) is decided again below on a fresh read, once: the decision itself may change.
  let failure: WriteFailure;
  switch (decision.kind) {
    case 'keep':
    case 'forget':
      return 'forget';
    case 'requeue':
      return 'requeue';
    case 'remove-refs': {
      const written = await guardedPatch(ctx.api, at, { patch: removeRefsPatch(id.uid, item.refs, new Set(decision.uids)), type: 'json' });
      if (written.kind === 'written' || written.kind === 'declined') return 'forget'; // (declined: never, the patch is given)
      failure = written;
      break;
    }
    case 'delete': {
      let resourceVersion = item.resourceVersion;
      const unblock = decision.unblockRefsFirst ? unblockRefsPatch(id.uid, item.refs) : [];
      if (unblock.length > 0) {
        const patched = await guardedPatch(ctx.api, at, { patch: unblock, type: 'json' });
        if (patched.kind === 'declined') return 'forget'; // never: the patch is given
        if (patched.kind !== 'written') {
          failure = patched;
          break;
        }
        resourceVersion = patched.result.metadata.resourceVersion;
      }
      const deleted = await guardedDelete(ctx.api, at, {
        opts: { uid: id.uid, resourceVersion, propagationPolicy: decision.propagation },
        stale: 'conflict-or-failed-test',
      });
      if (deleted.kind === 'gone' && !deleted.error) {
        ctx.virtualDelete(id);
        return 'forget';
      }
      if (deleted.kind === 'declined') return 'forget'; // never: the preconditions are given
      if (deleted.kind === 'written') {
        ctx.metrics.deleted(id.kind, decision.propagation);
        ctx.collected(id, decision.propagation, decision.causes);
        return 'forget';
      }
      failure = deleted;
      break;
    }
  }
  if (failure.kind !== 'stale') {
    // A thrown 404 included: an error of the collector's, as any but a stale answer.
    ctx.metrics.error(id.kind, decision.kind === 'delete' ? 'delete' : 'remove-refs');
    throw failure.error;
  }
  // The object changed since the decision: read it once and decide again.
  if (isRetry) return 'requeue';
  const fresh = await ctx.api.tryGet(rt, namespace, id.name, { metadataOnly: true });
  if (!fresh || fresh.metadata.uid !== id.uid) {
    ctx.virtualDelete(id);
    return 'forget';
  }
  if (fresh.metadata.deletionTimestamp) return 'forget';
  const again = snapshotOfRead(id, fresh.metadata);
  if (again.refs.length === 0) return 'forget';
  return decideAndAct(ctx, again, true);
}

/**
 * kube-controller-manager counts an owner that orphans its dependents as
 * solid: a dependent it attempts to delete before the orphaning loses its
 * dangling and waiting references and stays; attempted after, it may have
 * no solid owner left and go. Either order is its own (fuzz seeds 15352,
 * 20104, 20315). Ours takes the one that keeps: each dependent with another
 * owner is attempted first, on live reads of its owners, while the
 * orphaning owner is still solid; only those this collector `acts` on
 * (--gc=bundles leaves the rest to kube-controller-manager). Best effort: a
 * failed attempt leaves the other order, which is kube-controller-manager's
 * too.
 */
export async function attemptBeforeOrphaning(
  ctx: AttemptContext,
  dependents: readonly GraphNode[],
  acts: (node: GraphNode) => boolean,
): Promise<void> {
  for (const d of dependents) {
    if (d.ownerCount < 2 || d.beingDeleted || !acts(d)) continue;
    try {
      await decideAndAct(ctx, snapshotOfNode(d), false);
    } catch (err) {
      ctx.debug(`attempting ${formatIdentity(identityOf(d))} before orphaning it failed`, { error: errorMessage(err) });
    }
  }
}
