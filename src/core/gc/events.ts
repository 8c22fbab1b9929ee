/**
 * What the collector says in its events: one place for the reasons, actions
 * and texts, so that the engine only decides when to say them (the
 * GarbageCollected summary of a cascade is cascade-events.ts's).
 */
import { EventReasons } from '../../api/names.js';
import type { InvalidNamespaceReport } from './graph-change.js';
import type { Graph } from './graph.js';

export interface GcEventText {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  message: string;
}

export interface CycleBrokenFacts {
  finalizer: string;
  waitedMs: number;
  timeoutMs: number;
  transitiveDependents: number;
  /** "Kind name" of each remaining blocking dependent (or its UID when the graph no longer has it). */
  blockers: readonly string[];
}

/** The blockers as CycleBrokenFacts names them: "Kind name", or the UID of one the graph no longer has. */
export function blockerNames(graph: Graph, uids: readonly string[]): string[] {
  return uids.map((uid) => {
    const n = graph.get(uid);
    return n ? `${n.type.kind} ${n.name}` : uid;
  });
}

/** The collector removed foregroundDeletion from an owner whose blocking dependents wait on a cycle through it. */
export function foregroundCycleBrokenEvent(f: CycleBrokenFacts): GcEventText {
  return {
    type: 'Warning',
    reason: EventReasons.ForegroundCycleBroken,
    action: 'RemoveFinalizer',
    message:
      `Removed finalizer ${f.finalizer} after waiting ${Math.round(f.waitedMs / 1000)} s (timeout ${Math.round(f.timeoutMs / 1000)} s for ${f.transitiveDependents} dependents): ` +
      `its remaining blocking dependents (${f.blockers.join(', ')}) all wait in foreground deletion on a cycle that includes it`,
  };
}

/** A namespaced dependent names an owner that does not exist in its namespace (the text upstream's collector uses, in substance). */
export function ownerRefInvalidNamespaceEvent(report: InvalidNamespaceReport): GcEventText {
  const r = report.ownerRef;
  const ns = report.dependent.namespace;
  return {
    type: 'Warning',
    reason: EventReasons.OwnerRefInvalidNamespace,
    action: 'VerifyOwnerReference',
    message: `ownerRef [${r.apiVersion}/${r.kind}, namespace: ${ns}, name: ${r.name}, uid: ${r.uid}] does not exist in namespace "${ns}"`,
  };
}
