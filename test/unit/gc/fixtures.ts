/**
 * Builders for garbage-collector unit tests: objects with modifiers, and a
 * scenario that feeds events to one graph and accumulates the queues the
 * way the controller's writer would (de-duplicated sets of UIDs).
 */
import type { OwnerReference } from '../../../src/api/resource.js';
import { applyEvent } from '../../../src/core/gc/builder.js';
import type { GraphEffects, ObservedObject } from '../../../src/core/gc/graph-change.js';
import { Graph } from '../../../src/core/gc/graph.js';
import type { Identity } from '../../../src/core/gc/graph-identity.js';

export type Modifier = (o: ObservedObject) => void;

/** `kind` is "ConfigMap" (v1) or "apps/v1 Deployment" style. */
export function obj(kindSpec: string, name: string, ...mods: Modifier[]): ObservedObject {
  const [apiVersion, kind] = kindSpec.includes(' ') ? (kindSpec.split(' ') as [string, string]) : ['v1', kindSpec];
  const o: ObservedObject = { apiVersion, kind, metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1' } };
  for (const m of mods) m(o);
  return o;
}

export const ns =
  (namespace: string | undefined): Modifier =>
  (o) => {
    if (namespace === undefined) delete o.metadata.namespace;
    else o.metadata.namespace = namespace;
  };
export const clusterScoped: Modifier = ns(undefined);
export const uid =
  (u: string): Modifier =>
  (o) => {
    o.metadata.uid = u;
  };
export const rv =
  (v: string): Modifier =>
  (o) => {
    o.metadata.resourceVersion = v;
  };
export const deleting: Modifier = (o) => {
  o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
};
export const finalizers =
  (...f: string[]): Modifier =>
  (o) => {
    o.metadata.finalizers = f;
  };
/** Foreground deletion in progress. */
export const foreground: Modifier = (o) => {
  deleting(o);
  finalizers('foregroundDeletion')(o);
};
export const orphaning: Modifier = (o) => {
  deleting(o);
  finalizers('orphan')(o);
};

/** An owner reference to `owner`; `blocking` sets blockOwnerDeletion. */
export function ref(
  owner: ObservedObject,
  opts: { blocking?: boolean; controller?: boolean; name?: string; kind?: string; apiVersion?: string; uid?: string } = {},
): OwnerReference {
  return {
    apiVersion: opts.apiVersion ?? owner.apiVersion,
    kind: opts.kind ?? owner.kind,
    name: opts.name ?? owner.metadata.name,
    uid: opts.uid ?? owner.metadata.uid,
    ...(opts.blocking ? { blockOwnerDeletion: true } : {}),
    ...(opts.controller ? { controller: true } : {}),
  };
}

export const owners =
  (...refs: OwnerReference[]): Modifier =>
  (o) => {
    o.metadata.ownerReferences = refs;
  };

export function identity(o: ObservedObject): Identity {
  return { uid: o.metadata.uid, apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace ?? '' };
}

/** One graph plus the queues its writer would have filled. */
export class Scenario {
  readonly graph = new Graph();
  attemptToDelete = new Set<string>();
  rateLimited = new Set<string>();
  attemptToOrphan = new Set<string>();
  absent: Identity[] = [];
  invalidNamespace: GraphEffects['invalidNamespaceRefs'] = [];
  now = 0;

  private take(fx: GraphEffects): this {
    for (const u of fx.attemptToDelete) this.attemptToDelete.add(u);
    for (const u of fx.attemptToDeleteRateLimited) this.rateLimited.add(u);
    for (const u of fx.attemptToOrphan) this.attemptToOrphan.add(u);
    this.absent.push(...fx.absentOwners);
    this.invalidNamespace.push(...fx.invalidNamespaceRefs);
    return this;
  }

  observe(...objects: ObservedObject[]): this {
    for (const o of objects) this.take(applyEvent(this.graph, { type: 'observed', object: o, at: this.now }));
    return this;
  }

  /** Observed through an informer: `source` numbers it, as the collector does (see the 'listed' event). */
  observeFrom(source: number, ...objects: ObservedObject[]): this {
    for (const o of objects) this.take(applyEvent(this.graph, { type: 'observed', object: o, source, at: this.now }));
    return this;
  }

  /** The informer `source` finished a list that held exactly these objects. */
  listed(source: number, ...objects: ObservedObject[]): this {
    return this.take(applyEvent(this.graph, { type: 'listed', source, uids: new Set(objects.map((o) => o.metadata.uid)), at: this.now }));
  }

  deleted(o: ObservedObject): this {
    return this.take(applyEvent(this.graph, { type: 'deleted', object: o, at: this.now }));
  }

  virtualDelete(id: Identity): this {
    return this.take(applyEvent(this.graph, { type: 'virtual-delete', identity: id, at: this.now }));
  }

  /** Empties the queues (as if workers processed every item). */
  drain(): this {
    this.attemptToDelete = new Set();
    this.rateLimited = new Set();
    this.attemptToOrphan = new Set();
    this.absent = [];
    this.invalidNamespace = [];
    return this;
  }

  queued(): string[] {
    return [...this.attemptToDelete].sort();
  }

  dependentsOf(u: string): string[] {
    return (this.graph.get(u)?.dependents() ?? []).map((d) => d.uid).sort();
  }
}
