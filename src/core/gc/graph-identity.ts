/**
 * The identity of an object as a reference names it (uid, apiVersion, kind,
 * namespace, name), taken from a graph node, compared, keyed and printed.
 * Separate from graph.ts: the collector's writes and events speak in
 * identities, not nodes.
 */
import type { GraphNode, OwnerRef } from './graph-node.js';

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
