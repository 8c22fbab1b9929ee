/**
 * A node of the garbage collector's dependency graph (graph.ts) and what it
 * is made of: its interned type and scope, its owner references, and its
 * flags, packed with the references' bits and the observing informer into
 * one small integer. Separate from graph.ts: the node's memory layout is
 * the part that has to stay small per object, and reads on its own.
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

/** An interned pair of ObjectType and namespace: few distinct values, one copy each, one field per node. */
export interface NodeScope {
  readonly type: ObjectType;
  /** '' for cluster-scoped objects (and for virtual owners referenced from cluster-scoped dependents). */
  readonly namespace: string;
}

/** GraphNode's packed state: NodeFlags in the low bits, then the bits of an owner reference kept as a node, then the source. */
const FLAG_MASK = 0x7f;
const REF_BITS_SHIFT = 7;
const REF_BITS_MASK = 0x3 << REF_BITS_SHIFT;
const SOURCE_SHIFT = 9;
/** Sources fit in the rest of a small integer (V8 keeps it unboxed). */
export const MAX_SOURCE = (1 << 21) - 1;

/** Dependents kept in a plain array up to this many (a Set costs several times more per entry); a Set beyond. */
const DEPENDENTS_ARRAY_MAX = 16;

export class GraphNode {
  /** Dependents: none, one (the node itself), a few (an exact-size array, replaced on change), or a Set. */
  private deps: GraphNode | GraphNode[] | Set<GraphNode> | undefined = undefined;
  /**
   * Owner references: none (NO_REFS), one that names exactly an owner node
   * in the graph (that node itself: its uid, type and name are the
   * reference's; the reference's bits are in `state`), one OwnerRef, or an
   * array. The Graph keeps the node form true: it turns such references
   * into OwnerRefs before the owner's identity changes or it leaves the graph.
   */
  private refs: GraphNode | OwnerRef | readonly OwnerRef[] = NO_REFS;
  /** A canonical decimal resourceVersion (etcd's) is kept as a number: no string per node. */
  private rv: string | number;
  private state: number;
  private nodeScope: NodeScope;
  private nodeName: string;

  /** Nodes are made by Graph.newNode (which interns the scope). */
  constructor(
    readonly uid: string,
    scope: NodeScope,
    name: string,
    /** resourceVersion of the last observed state ('' for virtual nodes). */
    resourceVersion: string,
    flags: number,
  ) {
    this.nodeScope = scope;
    this.nodeName = name;
    this.rv = compactResourceVersion(resourceVersion);
    this.state = flags & FLAG_MASK;
  }

  get type(): ObjectType {
    return this.nodeScope.type;
  }

  get namespace(): string {
    return this.nodeScope.namespace;
  }

  get name(): string {
    return this.nodeName;
  }

  get scope(): NodeScope {
    return this.nodeScope;
  }

  /** NodeFlags bits. */
  get flags(): number {
    return this.state & FLAG_MASK;
  }

  set flags(flags: number) {
    this.state = (this.state & ~FLAG_MASK) | (flags & FLAG_MASK);
  }

  /** Which informer observed it last (0: none given). Relists remove the nodes of their source they did not list. */
  get source(): number {
    return this.state >>> SOURCE_SHIFT;
  }

  set source(source: number) {
    if (!(source >= 0 && source <= MAX_SOURCE)) throw new RangeError(`graph source ${source} out of range`);
    this.state = (this.state & (FLAG_MASK | REF_BITS_MASK)) | (source << SOURCE_SHIFT);
  }

  get owners(): readonly OwnerRef[] {
    const refs = this.refs;
    if (refs instanceof GraphNode) return [this.refToNode(refs)];
    return refs instanceof OwnerRef ? [refs] : refs;
  }

  get ownerCount(): number {
    const refs = this.refs;
    return refs instanceof GraphNode || refs instanceof OwnerRef ? 1 : refs.length;
  }

  get resourceVersion(): string {
    return typeof this.rv === 'number' ? String(this.rv) : this.rv;
  }

  set resourceVersion(value: string) {
    this.rv = compactResourceVersion(value);
  }

  /** Whether the last observed resourceVersion is this one (no string made). */
  hasResourceVersion(value: string): boolean {
    return this.rv === compactResourceVersion(value);
  }

  has(flag: number): boolean {
    return (this.state & flag & FLAG_MASK) !== 0;
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

  /** Graph only: see Graph.setOwners. */
  storeOwners(refs: readonly OwnerRef[], single: GraphNode | undefined): void {
    if (single !== undefined && refs.length === 1 && refs[0]) {
      this.refs = single;
      this.state = (this.state & ~REF_BITS_MASK) | (refs[0].bits << REF_BITS_SHIFT);
      return;
    }
    this.state &= ~REF_BITS_MASK;
    this.refs = refs.length === 0 ? NO_REFS : refs.length === 1 && refs[0] ? refs[0] : refs;
  }

  /** Graph only: the owner `node` is about to change identity or leave the graph; a reference kept as that node becomes an OwnerRef. */
  detachFrom(node: GraphNode): void {
    if (this.refs !== node) return;
    this.refs = this.refToNode(node);
    this.state &= ~REF_BITS_MASK;
  }

  /** Graph only: the node's identity (see Graph.setIdentity). */
  storeIdentity(scope: NodeScope, name: string): void {
    this.nodeScope = scope;
    this.nodeName = name;
  }

  private refToNode(owner: GraphNode): OwnerRef {
    return new OwnerRef(owner.uid, owner.type, owner.name, (this.state & REF_BITS_MASK) >>> REF_BITS_SHIFT);
  }

  addDependent(dep: GraphNode): void {
    const deps = this.deps;
    if (deps === undefined) this.deps = dep;
    else if (deps instanceof GraphNode) {
      if (deps !== dep) this.deps = [deps, dep];
    } else if (deps instanceof Set) deps.add(dep);
    else if (!deps.includes(dep)) this.deps = deps.length < DEPENDENTS_ARRAY_MAX ? [...deps, dep] : new Set([...deps, dep]);
  }

  removeDependent(dep: GraphNode): void {
    const deps = this.deps;
    if (deps === undefined) return;
    if (deps instanceof GraphNode) {
      if (deps === dep) this.deps = undefined;
    } else if (deps instanceof Set) {
      deps.delete(dep);
      if (deps.size <= DEPENDENTS_ARRAY_MAX / 2) this.deps = compactDependents([...deps]);
    } else if (deps.includes(dep)) {
      this.deps = compactDependents(deps.filter((d) => d !== dep));
    }
  }

  dependentCount(): number {
    const deps = this.deps;
    if (deps === undefined) return 0;
    if (deps instanceof GraphNode) return 1;
    return deps instanceof Set ? deps.size : deps.length;
  }

  /** A snapshot: safe to hold across awaits while the writer keeps changing the graph. */
  dependents(): GraphNode[] {
    const deps = this.deps;
    if (deps === undefined) return [];
    if (deps instanceof GraphNode) return [deps];
    return [...deps];
  }

  /** Owner references to the given UID (usually one). */
  refsTo(uid: string): OwnerRef[] {
    return this.owners.filter((r) => r.uid === uid);
  }
}

const NO_REFS: readonly OwnerRef[] = Object.freeze([]);

function compactDependents(deps: GraphNode[]): GraphNode | GraphNode[] | undefined {
  if (deps.length === 0) return undefined;
  return deps.length === 1 ? deps[0] : deps;
}

function compactResourceVersion(rv: string): string | number {
  const n = Number(rv);
  return rv !== '' && Number.isSafeInteger(n) && String(n) === rv ? n : rv;
}
