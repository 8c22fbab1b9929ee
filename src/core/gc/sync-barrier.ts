/**
 * When the collector's workers may run, and which decisions they may take,
 * given how much of the cluster the graph has seen.
 *
 * A graph built from informers that have not all listed is missing objects.
 * Two kinds of decision read it differently:
 * - "nothing depends on this owner any more" (removing foregroundDeletion
 *   because no blocking dependent is left, orphaning and then removing the
 *   orphan finalizer) is a statement about the whole graph: one unlisted
 *   resource can hide the dependents it is about. Taking it on a partial
 *   graph deletes an owner too early, or turns an orphan deletion into a
 *   cascade (the dependents, listed later, find their owner gone).
 * - "this dependent's owners are gone" is verified live, by UID, for each
 *   owner reference: the graph only says which objects to look at.
 *
 * So workers are held until every informer has listed (upstream's collector
 * does the same at start, and holds its workers while the informers of newly
 * discovered resources sync). An informer that cannot list (RBAC forbids it,
 * an aggregated API is down) must not stop collection for good: after
 * `holdBoundMs` of waiting, the workers run again, but the graph-wide
 * decisions stay deferred until every informer has listed.
 */

/** One informer as the barrier sees it. */
export interface InformerSyncFacts {
  /** `${group}/${version}/${plural}`, for logs. */
  resource: string;
  /** The informer's first list has been applied. */
  synced: boolean;
  /** When the collector started waiting for it (its informer started). */
  waitingSince: number;
}

export interface SyncBarrierFacts {
  /** Discovery has succeeded at least once (before it, the set of informers is unknown). */
  discovered: boolean;
  informers: readonly InformerSyncFacts[];
  now: number;
  /** How long an unsynced informer may hold the workers. */
  holdBoundMs: number;
}

export type SyncBarrier =
  /** Workers do not take items: an informer is still within its time to list. `recheckAfterMs` is when the bound passes. */
  | { phase: 'held'; waitingFor: string[]; recheckAfterMs?: number }
  /** Workers run; decisions that need the whole graph wait for `unsynced`. */
  | { phase: 'partial'; unsynced: string[] }
  /** Every informer has listed: every decision may be taken. */
  | { phase: 'complete' };

export function decideSyncBarrier(f: SyncBarrierFacts): SyncBarrier {
  if (!f.discovered) return { phase: 'held', waitingFor: ['discovery'] };
  const unsynced = f.informers.filter((i) => !i.synced);
  if (unsynced.length === 0) return { phase: 'complete' };
  const withinBound = unsynced.filter((i) => f.now - i.waitingSince < f.holdBoundMs);
  if (withinBound.length > 0) {
    const recheckAfterMs = Math.max(1, Math.min(...withinBound.map((i) => i.waitingSince + f.holdBoundMs - f.now)));
    return { phase: 'held', waitingFor: withinBound.map((i) => i.resource), recheckAfterMs };
  }
  return { phase: 'partial', unsynced: unsynced.map((i) => i.resource) };
}

/** The collector's actions, by what they rely on. */
export type GcAction =
  /** Look up a virtual node's identity on the server (live). */
  | 'verify-virtual'
  /** Delete a dependent whose owners were all verified absent or waiting, live, by UID. */
  | 'delete-dependent'
  /** Remove references to owners verified absent or waiting, live, by UID. */
  | 'remove-refs'
  /** Remove foregroundDeletion from an owner: the graph shows no blocking dependent left (or only a cycle). */
  | 'finish-foreground'
  /** Remove an owner's reference from the dependents the graph lists, then its orphan finalizer. */
  | 'orphan-dependents';

/** True for actions that are only right if the graph holds every object (see the module comment). */
export function needsCompleteGraph(action: GcAction): boolean {
  switch (action) {
    case 'finish-foreground':
    case 'orphan-dependents':
      return true;
    case 'verify-virtual':
    case 'delete-dependent':
    case 'remove-refs':
      return false;
  }
}

/** What a worker does with an action under a barrier: take it, or defer it until the graph is complete. */
export function barrierAllows(barrier: SyncBarrier, action: GcAction): boolean {
  switch (barrier.phase) {
    case 'held':
      return false;
    case 'partial':
      return !needsCompleteGraph(action);
    case 'complete':
      return true;
  }
}

/** Orders barriers from most closed (held) to most open (complete). */
export function barrierRank(barrier: SyncBarrier): number {
  return barrier.phase === 'held' ? 0 : barrier.phase === 'partial' ? 1 : 2;
}

/** The barrier in words, for the log line when it changes. */
export function describeBarrier(barrier: SyncBarrier): string {
  switch (barrier.phase) {
    case 'held':
      return `held until ${barrier.waitingFor.join(', ')} listed`;
    case 'partial':
      return `running; foreground and orphan completions wait for ${barrier.unsynced.join(', ')} to list`;
    case 'complete':
      return 'running on a complete graph';
  }
}
