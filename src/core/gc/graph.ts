/**
 * The garbage collector's dependency graph: one node per UID, with the
 * node's owner references and the set of its dependents. Virtual nodes stand
 * for owners referenced by some dependent but not (yet) observed.
 *
 * Memory matters here (the target is <= 300 bytes per tracked object, flat
 * from 10k to 1M objects, and the graph is the collector's only index: its
 * informers keep no store), so nodes keep no object bodies: apiVersion/kind
 * and namespace pairs are interned (one field per node), a single owner
 * reference that names an owner node exactly is that node (no object of its
 * own), other references share the owner's UID and name strings when the
 * owner is known, node state, reference bits and the observing informer are
 * one small integer, the dependents of a leaf (most objects) cost nothing
 * and a few dependents are a plain array.
 *
 * Nodes are in graph-node.ts, identities in graph-identity.ts.
 *
 * The graph is mutated by exactly one writer (see builder.ts); everything
 * else only reads it.
 */
import { GraphNode, type NodeScope, type ObjectType, type OwnerRef } from './graph-node.js';
import { identityOf, refMatchesCoordinates } from './graph-identity.js';

export class Graph {
  /** Read it freely; change it only through newNode/removeNode (the builder does). */
  readonly nodes = new Map<string, GraphNode>();
  private readonly types = new Map<string, ObjectType>();
  private readonly strings = new Map<string, string>();
  private readonly scopes = new Map<ObjectType, Map<string, NodeScope>>();
  /**
   * When the writer first saw each node waiting for its dependents (a clock
   * reading supplied with the event): the foreground cycle breaker measures
   * how long an owner has waited from it. Few entries: only owners in
   * foreground deletion.
   */
  readonly deletingDependentsSince = new Map<string, number>();

  get size(): number {
    return this.nodes.size;
  }

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  internType(apiVersion: string, kind: string): ObjectType {
    const key = `${apiVersion}\n${kind}`;
    let t = this.types.get(key);
    if (!t) {
      t = Object.freeze({ apiVersion, kind });
      this.types.set(key, t);
    }
    return t;
  }

  /** The interned scope of a type and namespace. */
  scopeOf(type: ObjectType, namespace: string): NodeScope {
    let byNamespace = this.scopes.get(type);
    if (!byNamespace) {
      byNamespace = new Map();
      this.scopes.set(type, byNamespace);
    }
    let scope = byNamespace.get(namespace);
    if (!scope) {
      scope = Object.freeze({ type, namespace: this.internNamespace(namespace) });
      byNamespace.set(namespace, scope);
    }
    return scope;
  }

  /** Adds a node (its owner references are set with setOwners, once the owners it names are in the graph). */
  newNode(uid: string, type: ObjectType, name: string, namespace: string, resourceVersion: string, flags: number): GraphNode {
    const node = new GraphNode(uid, this.scopeOf(type, namespace), name, resourceVersion, flags);
    this.nodes.set(uid, node);
    return node;
  }

  /**
   * Sets a node's owner references. A single reference that names exactly
   * an owner node in the graph (uid, apiVersion, kind, name) is kept as that
   * node (most objects have one owner, and most owners many dependents).
   */
  setOwners(node: GraphNode, refs: readonly OwnerRef[]): void {
    const only = refs.length === 1 ? refs[0] : undefined;
    const owner = only ? this.nodes.get(only.uid) : undefined;
    node.storeOwners(refs, owner && only && refMatchesCoordinates(only, identityOf(owner)) ? owner : undefined);
  }

  /** Changes a node's identity (a virtual node observed, or guessed again; an object served under another version). */
  setIdentity(node: GraphNode, type: ObjectType, name: string, namespace: string): void {
    if (node.type === type && node.name === name && node.namespace === namespace) return;
    // References kept as this node named its old identity: they keep naming it.
    for (const dep of node.dependents()) dep.detachFrom(node);
    node.storeIdentity(this.scopeOf(type, namespace), name);
  }

  /** Takes a node out of the graph; references kept as it (its dependents') and by it become OwnerRefs. */
  removeNode(node: GraphNode): void {
    if (this.nodes.get(node.uid) === node) this.nodes.delete(node.uid);
    for (const dep of node.dependents()) dep.detachFrom(node);
    const own = node.owners;
    if (own.length === 1 && own[0]) {
      const owner = this.nodes.get(own[0].uid);
      if (owner) node.detachFrom(owner);
    }
  }

  /** Namespaces: few distinct values, one copy each. */
  internNamespace(namespace: string | undefined): string {
    if (!namespace) return '';
    let s = this.strings.get(namespace);
    if (s === undefined) {
      s = namespace;
      this.strings.set(namespace, s);
    }
    return s;
  }

  /** Every node reachable through dependents, capped (the count only scales a timeout). */
  transitiveDependentCount(uid: string, cap = 10_000): number {
    const start = this.nodes.get(uid);
    if (!start) return 0;
    const seen = new Set<GraphNode>([start]);
    const stack = start.dependents();
    let count = 0;
    while (stack.length > 0 && count < cap) {
      const n = stack.pop();
      if (!n || seen.has(n)) continue;
      seen.add(n);
      count++;
      for (const d of n.dependents()) if (!seen.has(d)) stack.push(d);
    }
    return count;
  }

  /** Dependents of `owner` whose reference to it has blockOwnerDeletion. */
  blockingDependents(owner: GraphNode): GraphNode[] {
    return owner.dependents().filter((d) => d.owners.some((r) => r.uid === owner.uid && r.blockOwnerDeletion));
  }
}
