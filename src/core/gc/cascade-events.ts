/**
 * One GarbageCollected Event per owner cascade instead of one per deleted
 * object (issue 13.2): the collections of a cascade are summed per owner
 * (count by kind, a few names) and said in one Event on the owner, written
 * once and then updated as a series while the cascade runs. Every object
 * still goes to the structured log and the deletes-by-kind metric. Pure:
 * the engine records collections and asks, when its timer fires, what to
 * write.
 */
import { EventReasons } from '../../api/names.js';
import type { DeletionPropagation } from '../../api/names.js';

/** The owner a collection is summed under: the first owner reference that let the object go. */
export interface CascadeOwner {
  uid: string;
  apiVersion: string;
  kind: string;
  name: string;
  /** The collected dependents' namespace (where a namespaced owner is); "" for cluster-scoped dependents. */
  namespace: string;
}

interface Cascade {
  owner: CascadeOwner;
  propagation: DeletionPropagation;
  /** How the owner chain read at the latest collection (describeOwnerChain's text). */
  ownerChain: string;
  byKind: Map<string, number>;
  samples: string[];
  total: number;
  /** Collections since the Event last said how many. */
  unsaid: number;
  /** The Event already written for this cascade, once there is one. */
  eventName?: string;
  lastCollectedAt: number;
}

/** What the engine writes: a new Event, or the next count of an existing one (series). */
export type CascadeEventWrite =
  | { kind: 'create'; owner: CascadeOwner; reason: string; action: string; message: string }
  | { kind: 'update'; owner: CascadeOwner; eventName: string; count: number; message: string; lastObservedAt: number };

export const SAMPLE_NAMES = 5;

export function cascadeMessage(
  c: { propagation: DeletionPropagation; total: number; byKind: ReadonlyMap<string, number>; samples: readonly string[] },
  ownerChain: string,
): string {
  const kinds = [...c.byKind]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${kind}: ${n}`)
    .join(', ');
  const more = c.total > c.samples.length ? `, ${c.total - c.samples.length} more` : '';
  return `Deleted ${c.total} dependent${c.total === 1 ? '' : 's'} (${kinds}) by the garbage collector (propagation ${c.propagation}): no owner keeps them. e.g. ${c.samples.join(', ')}${more}. Owner chain: ${ownerChain}`;
}

/**
 * The collections of every running cascade, keyed by owner uid. A cascade
 * quiet for `idleMs` is forgotten after its last count was said: a later
 * collection under the same owner starts a new Event.
 */
export class CascadeEvents {
  private readonly cascades = new Map<string, Cascade>();

  constructor(private readonly idleMs: number) {}

  record(
    owner: CascadeOwner,
    propagation: DeletionPropagation,
    dependent: { kind: string; name: string },
    at: number,
    ownerChain: string,
  ): void {
    let c = this.cascades.get(owner.uid);
    if (!c) {
      c = { owner, propagation, ownerChain, byKind: new Map(), samples: [], total: 0, unsaid: 0, lastCollectedAt: at };
      this.cascades.set(owner.uid, c);
    }
    c.ownerChain = ownerChain;
    c.byKind.set(dependent.kind, (c.byKind.get(dependent.kind) ?? 0) + 1);
    if (c.samples.length < SAMPLE_NAMES) c.samples.push(`${dependent.kind}/${dependent.name}`);
    c.total++;
    c.unsaid++;
    c.lastCollectedAt = at;
  }

  /** What to write now. Marks what it returns as said. */
  due(at: number): CascadeEventWrite[] {
    const writes: CascadeEventWrite[] = [];
    for (const [uid, c] of this.cascades) {
      if (c.unsaid > 0) {
        const message = cascadeMessage(c, c.ownerChain);
        writes.push(
          c.eventName === undefined
            ? { kind: 'create', owner: c.owner, reason: EventReasons.GarbageCollected, action: 'Delete', message }
            : { kind: 'update', owner: c.owner, eventName: c.eventName, count: c.total, message, lastObservedAt: c.lastCollectedAt },
        );
        c.unsaid = 0;
      } else if (at - c.lastCollectedAt >= this.idleMs) {
        this.cascades.delete(uid);
      }
    }
    return writes;
  }

  /** The Event a create wrote, so later counts update it. */
  created(ownerUid: string, eventName: string): void {
    const c = this.cascades.get(ownerUid);
    if (c) c.eventName = eventName;
  }

  /** A write failed: the count is said again next time (a failed create is tried again as a create). */
  failed(write: CascadeEventWrite): void {
    const c = this.cascades.get(write.owner.uid);
    if (!c) return;
    c.unsaid = Math.max(c.unsaid, 1);
    if (write.kind === 'create') delete c.eventName;
  }

  pending(): number {
    let n = 0;
    for (const c of this.cascades.values()) n += c.unsaid;
    return n;
  }
}
