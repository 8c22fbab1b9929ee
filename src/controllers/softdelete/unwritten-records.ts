/**
 * What this process decided about release records and could not write: a
 * cancel or an end the server refused to write (red teams 36 and 38), and
 * cancels and ends decided while the record could not even be read (red
 * team 40). Both count in this process all the same (the pure rules are in
 * core/softdelete/release-record.ts: withUnwritten, unreadDecided) until a
 * write lands; a restart forgets them (docs/safety.md).
 */
import {
  sameRecord,
  unreadDecided,
  withUnwritten,
  type RecordDecision,
  type RecordedObject,
  type ReleaseRecord,
  type UnwrittenRecord,
} from '../../core/softdelete/release-record.js';

/** Which caller decided an unread decision: a later one of the same kind replaces it (a listing cancel per sweep pass). */
export type UnreadDecisionKind = 'listing-cancel' | 'end' | 'end-if-recorded';

export class UnwrittenRecords {
  /** By object uid: decided on a record as read (`from`), not written. */
  private readonly unwritten = new Map<string, UnwrittenRecord & { object: RecordedObject }>();
  /** By object uid: decided without the record, in the order decided. */
  private readonly unread = new Map<string, { object: RecordedObject; decisions: Map<UnreadDecisionKind, RecordDecision> }>();

  /** A write of `to` over `from` failed: it counts while the record stays `from`. */
  holdUnwritten(object: RecordedObject, from: ReleaseRecord | undefined, to: ReleaseRecord): void {
    this.unwritten.set(object.uid, { from, to, object });
  }

  /** The record could not be read to decide on: the decision is applied to the record as next read (decidedOn). */
  holdUnread(object: RecordedObject, kind: UnreadDecisionKind, decide: RecordDecision): void {
    const held = this.unread.get(object.uid) ?? { object, decisions: new Map<UnreadDecisionKind, RecordDecision>() };
    // Moved to the end: the order is the order of the latest decisions.
    held.decisions.delete(kind);
    held.decisions.set(kind, decide);
    this.unread.set(object.uid, held);
  }

  /**
   * The record as read, as this process decides on it: decisions held
   * unread become unwritten over it; an unwritten one counts while the
   * record is as it was read then, and is dropped once it changed.
   */
  decidedOn(uid: string, record: ReleaseRecord | undefined): ReleaseRecord | undefined {
    const unread = this.unread.get(uid);
    if (unread !== undefined) {
      this.unread.delete(uid);
      const decided = unreadDecided(withUnwritten(record, this.unwritten.get(uid)), unread.decisions.values());
      if (decided !== undefined) this.unwritten.set(uid, { from: record, to: decided.to, object: unread.object });
    }
    const unwritten = this.unwritten.get(uid);
    if (unwritten !== undefined && !sameRecord(record, unwritten.from)) this.unwritten.delete(uid);
    return withUnwritten(record, this.unwritten.get(uid));
  }

  /** Whether decisions are held unread for the object (a signing reads the record first: they concern the release before it). */
  holdsUnread(uid: string): boolean {
    return this.unread.has(uid);
  }

  /** The unwritten record of the object, if any (to write before anything else is written for it). */
  unwrittenFor(uid: string): (UnwrittenRecord & { object: RecordedObject }) | undefined {
    return this.unwritten.get(uid);
  }

  /** The object of whatever is held for the uid (to read or write it again). */
  objectFor(uid: string): RecordedObject | undefined {
    return this.unwritten.get(uid)?.object ?? this.unread.get(uid)?.object;
  }

  /** Uids with anything held, unwritten or unread. */
  uids(): string[] {
    return [...new Set([...this.unwritten.keys(), ...this.unread.keys()])];
  }

  /** A write landed, decided on everything held: nothing is held any more. */
  written(uid: string): void {
    this.unwritten.delete(uid);
  }

  /** The object is gone: everything held for it goes. */
  forget(uid: string): void {
    this.unwritten.delete(uid);
    this.unread.delete(uid);
  }
}
