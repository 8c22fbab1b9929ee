/**
 * The Events a Bundle's prune phase writes (issue 13.2). A pass that
 * deletes or stamps a few objects says each in an Event of its own, as
 * before; a pass that deletes or stamps many says them in one Event per
 * reason (count by kind, a few names), so that a large Bundle's pass does
 * not double its writes with Events. Every object still goes to the
 * structured log and the deletes metric (act.ts). Pure.
 */
import { EventReasons } from '../../api/names.js';
import type { PlannedEvent } from './prune.js';

/** Up to this many objects of one reason in a pass, each gets its own Event. */
export const PER_OBJECT_EVENTS_UP_TO = 5;
/** Names a summary Event gives as examples. */
export const SUMMARY_SAMPLE_NAMES = 5;

/** One object the pass deleted, stamped or released, with the Event it would have had alone. */
export interface PrunedObject {
  kind: string;
  name: string;
  event: PlannedEvent;
  /** A stamp's deadline (DeletionScheduled), for the summary. */
  deleteAfter?: string;
  /** Always its own Event (a countdown behind a gate: its wording says what it waits for). */
  alone?: boolean;
}

/** Reasons a pass may sum up; any other reason (Released) always gets one Event per object. */
const SUMMARIES: Record<string, (n: number) => string> = {
  [EventReasons.Pruned]: (n) => `deleted ${n} objects no longer in the Bundle`,
  [EventReasons.DeletedAfterDelay]: (n) => `deleted ${n} objects whose deletion delay ended`,
  [EventReasons.DeletionScheduled]: (n) => `started the deletion countdown of ${n} objects no longer in the Bundle`,
};

/**
 * The Events for what one pass did, per reason in the order first met:
 * the objects' own Events when there are at most PER_OBJECT_EVENTS_UP_TO
 * of that reason (or the reason is not summed up), one summary otherwise.
 * Objects marked `alone` come first, each with its own Event.
 */
export function prunePassEvents(done: readonly PrunedObject[]): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  const byReason = new Map<string, PrunedObject[]>();
  for (const d of done) {
    if (d.alone === true) {
      events.push(d.event);
      continue;
    }
    const group = byReason.get(d.event.reason);
    if (group) group.push(d);
    else byReason.set(d.event.reason, [d]);
  }
  for (const [reason, group] of byReason) {
    const summary = SUMMARIES[reason];
    if (summary === undefined || group.length <= PER_OBJECT_EVENTS_UP_TO) {
      events.push(...group.map((d) => d.event));
      continue;
    }
    events.push({ reason, message: summaryMessage(summary(group.length), group) });
  }
  return events;
}

function summaryMessage(head: string, group: readonly PrunedObject[]): string {
  const byKind = new Map<string, number>();
  for (const d of group) byKind.set(d.kind, (byKind.get(d.kind) ?? 0) + 1);
  const kinds = [...byKind]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${kind}: ${n}`)
    .join(', ');
  const samples = group.slice(0, SUMMARY_SAMPLE_NAMES).map((d) => `${d.kind}/${d.name}`);
  const more = group.length > samples.length ? `, ${group.length - samples.length} more` : '';
  const deadlines = group.flatMap((d) => (d.deleteAfter !== undefined ? [d.deleteAfter] : [])).sort();
  const first = deadlines[0];
  const last = deadlines[deadlines.length - 1];
  const when = first === undefined ? '' : first === last ? `; due after ${first}` : `; due after ${first} to ${last ?? first}`;
  return `${head} (${kinds}): e.g. ${samples.join(', ')}${more}${when}. Each object is in the operator's log.`;
}
