/**
 * How owner references compare, for the graph builder (builder.ts): a
 * node's old references against its new ones, which dependents name an
 * owner's identity exactly, and the other identities they give it. Pure
 * reads: nothing here mutates the graph.
 */
import type { GraphNode, OwnerRef } from './graph-node.js';
import { identityKey, refMatchesCoordinates, type Identity } from './graph-identity.js';

export interface RefsDiff {
  added: OwnerRef[];
  removed: OwnerRef[];
  changed: [OwnerRef, OwnerRef][];
}

function sameRef(a: OwnerRef, b: OwnerRef): boolean {
  return a.uid === b.uid && a.name === b.name && a.type === b.type && a.bits === b.bits;
}

export function referencesDiff(oldRefs: readonly OwnerRef[], newRefs: readonly OwnerRef[]): RefsDiff {
  const oldByUid = new Map<string, OwnerRef>();
  for (const r of oldRefs) oldByUid.set(r.uid, r);
  const diff: RefsDiff = { added: [], removed: [], changed: [] };
  for (const r of newRefs) {
    const old = oldByUid.get(r.uid);
    if (!old) diff.added.push(r);
    else {
      if (!sameRef(old, r)) diff.changed.push([old, r]);
      oldByUid.delete(r.uid);
    }
  }
  diff.removed.push(...oldByUid.values());
  return diff;
}

/**
 * Splits dependents into those whose reference to the owner's UID matches
 * the identity and those that do not (a dependent can be in both).
 */
export function partitionDependents(
  dependents: readonly GraphNode[],
  owner: Identity,
): { matching: GraphNode[]; nonmatching: GraphNode[] } {
  const matching: GraphNode[] = [];
  const nonmatching: GraphNode[] = [];
  const ownerNamespaced = owner.namespace !== '';
  for (const dep of dependents) {
    let match = false;
    let mismatch = false;
    if (ownerNamespaced && owner.namespace !== dep.namespace) mismatch = true;
    else
      for (const ref of dep.owners) {
        if (ref.uid !== owner.uid) continue;
        if (refMatchesCoordinates(ref, owner)) match = true;
        else mismatch = true;
      }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return { matching, nonmatching };
}

function identityLess(a: Identity, b: Identity): boolean {
  if (a.kind !== b.kind) return a.kind < b.kind;
  if (a.apiVersion !== b.apiVersion) return a.apiVersion < b.apiVersion;
  if (a.namespace !== b.namespace) return a.namespace < b.namespace;
  if (a.name !== b.name) return a.name < b.name;
  return a.uid < b.uid;
}

/**
 * Another identity the dependents give this UID: the first after the absent
 * one in a fixed order (so repeated verifications cycle through all of
 * them), else the first.
 */
export function alternateOwnerIdentity(dependents: readonly GraphNode[], absent: Identity): Identity | undefined {
  const absentClusterScoped = absent.namespace === '';
  const seen = new Set<string>([identityKey(absent)]);
  let first: Identity | undefined;
  let firstFollowing: Identity | undefined;
  for (const dep of dependents) {
    for (const ref of dep.owners) {
      if (ref.uid !== absent.uid) continue;
      if (refMatchesCoordinates(ref, absent) && (absentClusterScoped || absent.namespace === dep.namespace)) continue;
      const candidate: Identity = {
        uid: ref.uid,
        apiVersion: ref.type.apiVersion,
        kind: ref.type.kind,
        name: ref.name,
        namespace: dep.namespace,
      };
      // The absent identity proved this apiVersion/kind cluster-scoped.
      if (absentClusterScoped && candidate.apiVersion === absent.apiVersion && candidate.kind === absent.kind) candidate.namespace = '';
      const key = identityKey(candidate);
      if (seen.has(key)) continue;
      seen.add(key);
      if (!first || identityLess(candidate, first)) first = candidate;
      if (identityLess(absent, candidate) && (!firstFollowing || identityLess(candidate, firstFollowing))) firstFollowing = candidate;
    }
  }
  return firstFollowing ?? first;
}
