/**
 * The garbage collector's dependency graph: one node per UID, with the
 * node's owner references and the set of its dependents. Virtual nodes stand
 * for owners referenced by some dependent but not (yet) observed.
 *
 * Memory matters here (the target is ~300 bytes per tracked object at 100k
 * objects), so nodes keep no object bodies: apiVersion/kind pairs and
 * namespaces are interned, owner references share the owner's UID and name
 * strings when the owner is known, node state is a bit set, and the
 * dependents of a leaf (most objects) cost nothing.
 *
 * The graph is mutated by exactly one writer (see builder.ts); everything
 * else only reads it.
 */

/** An interned apiVersion + kind: compared by identity, shared by every node of the type. */
export interface ObjectType {
  readonly apiVersion: string;
  readonly kind: string;
}

/** Bits of GraphNode.flags. */
export const NodeFlags = {
  /** Seen through an informer (a node without it is virtual: only referenced so far). */
  observed: 1,
  /** deletionTimestamp is set. */
  beingDeleted: 2,
  /** Being deleted and holds the foregroundDeletion finalizer: waits for its blocking dependents. */
  deletingDependents: 4,
  /** Holds the orphan finalizer. */
  orphanFinalizer: 8,
  /** Holds the foregroundDeletion finalizer (with or without a deletionTimestamp). */
  foregroundFinalizer: 16,
  /** The writer's `tag` predicate held for the last observed state (used to restrict the collector's reach). */
  tagged: 32,
  /**
   * Its owner chain reached a Bundle when one of its owners was removed from
   * the graph: it stays in --gc=bundles scope once that owner is gone (a
   * Bundle Deployment's ReplicaSet, then its Pods). Kept across updates.
   */
  bundleChain: 64,
} as const;

/** Bits of OwnerRef.bits. */
export const RefBits = {
  controller: 1,
  blockOwnerDeletion: 2,
} as const;

/** RefBits of an owner reference as the API serves it. */
export function refBits(r: { controller?: boolean | undefined; blockOwnerDeletion?: boolean | undefined }): number {
  return (r.controller ? RefBits.controller : 0) | (r.blockOwnerDeletion ? RefBits.blockOwnerDeletion : 0);
}

/** An owner reference as the graph stores it: the coordinates the dependent wrote, nothing else. */
export class OwnerRef {
  constructor(
    readonly uid: string,
    readonly type: ObjectType,
    readonly name: string,
    readonly bits: number,
  ) {}

  get blockOwnerDeletion(): boolean {
    return (this.bits & RefBits.blockOwnerDeletion) !== 0;
  }

  get controller(): boolean {
    return (this.bits & RefBits.controller) !== 0;
  }
}

export class GraphNode {
  /** Dependents: none (undefined), one (the node itself, no Set allocated), or a Set. */
  private deps: GraphNode | Set<GraphNode> | undefined = undefined;
  /** One reference (the common case) is stored without an array around it. */
  private ownerRefs: OwnerRef | readonly OwnerRef[];
  /** A canonical decimal resourceVersion (etcd's) is kept as a number: no string per node. */
  private rv: string | number;

  constructor(
    readonly uid: string,
    public type: ObjectType,
    public name: string,
    /** '' for cluster-scoped objects (and for virtual owners referenced from cluster-scoped dependents). */
    public namespace: string,
    /** resourceVersion of the last observed state ('' for virtual nodes). */
    resourceVersion: string,
    public flags: number,
    owners: readonly OwnerRef[],
  ) {
    this.ownerRefs = compactRefs(owners);
    this.rv = compactResourceVersion(resourceVersion);
  }

  get owners(): readonly OwnerRef[] {
    const refs = this.ownerRefs;
    return refs instanceof OwnerRef ? [refs] : refs;
  }

  set owners(refs: readonly OwnerRef[]) {
    this.ownerRefs = compactRefs(refs);
  }

  get ownerCount(): number {
    const refs = this.ownerRefs;
    return refs instanceof OwnerRef ? 1 : refs.length;
  }

  get resourceVersion(): string {
    return typeof this.rv === 'number' ? String(this.rv) : this.rv;
  }

  set resourceVersion(value: string) {
    this.rv = compactResourceVersion(value);
  }

  has(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  get observed(): boolean {
    return this.has(NodeFlags.observed);
  }

  get virtual(): boolean {
    return !this.has(NodeFlags.observed);
  }

  get beingDeleted(): boolean {
    return this.has(NodeFlags.beingDeleted);
  }

  get deletingDependents(): boolean {
    return this.has(NodeFlags.deletingDependents);
  }

  addDependent(dep: GraphNode): void {
    if (this.deps === undefined) this.deps = dep;
    else if (this.deps instanceof Set) this.deps.add(dep);
    else if (this.deps !== dep) this.deps = new Set([this.deps, dep]);
  }

  removeDependent(dep: GraphNode): void {
    if (this.deps === dep) this.deps = undefined;
    else if (this.deps instanceof Set) {
      this.deps.delete(dep);
      if (this.deps.size === 1) this.deps = this.deps.values().next().value;
      else if (this.deps.size === 0) this.deps = undefined;
    }
  }

  dependentCount(): number {
    if (this.deps === undefined) return 0;
    return this.deps instanceof Set ? this.deps.size : 1;
  }

  /** A snapshot: safe to hold across awaits while the writer keeps changing the graph. */
  dependents(): GraphNode[] {
    if (this.deps === undefined) return [];
    return this.deps instanceof Set ? [...this.deps] : [this.deps];
  }

  /** Owner references to the given UID (usually one). */
  refsTo(uid: string): OwnerRef[] {
    return this.owners.filter((r) => r.uid === uid);
  }
}

const NO_REFS: readonly OwnerRef[] = Object.freeze([]);

function compactRefs(refs: readonly OwnerRef[]): OwnerRef | readonly OwnerRef[] {
  if (refs.length === 0) return NO_REFS;
  return refs.length === 1 && refs[0] ? refs[0] : refs;
}

function compactResourceVersion(rv: string): string | number {
  const n = Number(rv);
  return rv !== '' && Number.isSafeInteger(n) && String(n) === rv ? n : rv;
}

/** Identity of an object as a reference names it: the coordinates plus a namespace ('' = cluster-scoped). */
export interface Identity {
  uid: string;
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}

export function identityOf(node: GraphNode): Identity {
  return { uid: node.uid, apiVersion: node.type.apiVersion, kind: node.type.kind, name: node.name, namespace: node.namespace };
}

export function identityKey(id: Identity): string {
  return `${id.uid}|${id.apiVersion}|${id.kind}|${id.namespace}|${id.name}`;
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.uid === b.uid && a.apiVersion === b.apiVersion && a.kind === b.kind && a.name === b.name && a.namespace === b.namespace;
}

export function formatIdentity(id: Identity): string {
  return `${id.apiVersion}/${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name} (uid ${id.uid})`;
}

/** True when the reference names exactly this identity's apiVersion, kind, name and UID. */
export function refMatchesCoordinates(ref: OwnerRef, id: Identity): boolean {
  return ref.uid === id.uid && ref.name === id.name && ref.type.kind === id.kind && ref.type.apiVersion === id.apiVersion;
}

export class Graph {
  readonly nodes = new Map<string, GraphNode>();
  private readonly types = new Map<string, ObjectType>();
  private readonly strings = new Map<string, string>();
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
