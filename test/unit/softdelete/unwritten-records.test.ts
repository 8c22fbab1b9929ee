/**
 * What the process holds of the release records it could not write or read
 * (controllers/softdelete/unwritten-records.ts): the overlay the sweep and
 * every write decide on.
 */
import type { ReleaseRecord } from '../../../src/core/softdelete/release-record.js';
import { UnwrittenRecords } from '../../../src/controllers/softdelete/unwritten-records.js';

const object = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'cm', uid: 'u1' };
const signed = (proof: string): ReleaseRecord => ({ state: 'signed', proof });
const cancelled = (proof: string): ReleaseRecord => ({ state: 'cancelled', proof });
const ended: ReleaseRecord = { state: 'ended', proof: '' };
const cancel = (r: ReleaseRecord | undefined): ReleaseRecord | undefined => (r?.state === 'signed' ? cancelled(r.proof) : undefined);

describe('UnwrittenRecords', () => {
  test('a cancel decided unread applies to the record as next read, and counts while the record stays so', () => {
    const held = new UnwrittenRecords();
    expect(held.holdsUnread('u1')).toBe(false);
    held.holdUnread(object, 'listing-cancel', cancel);
    expect(held.uids()).toEqual(['u1']);
    expect(held.holdsUnread('u1')).toBe(true);
    expect(held.decidedOn('u1', signed('P1'))).toEqual(cancelled('P1'));
    expect(held.unwrittenFor('u1')?.to).toEqual(cancelled('P1'));
    expect(held.holdsUnread('u1')).toBe(false);
    // Read again, unchanged: still cancelled here.
    expect(held.decidedOn('u1', signed('P1'))).toEqual(cancelled('P1'));
    // Written since by someone (a new signing): that decides, and nothing is held.
    expect(held.decidedOn('u1', signed('P2'))).toEqual(signed('P2'));
    expect(held.uids()).toEqual([]);
  });

  test('a later decision of the same kind replaces the earlier; kinds apply in the order of their latest decision', () => {
    const held = new UnwrittenRecords();
    held.holdUnread(object, 'end', () => ended);
    held.holdUnread(object, 'listing-cancel', cancel);
    held.holdUnread(object, 'listing-cancel', cancel);
    expect(held.decidedOn('u1', signed('P1'))).toEqual(ended);
  });

  test('an unread end over an unwritten cancel holds the end, from the record as read', () => {
    const held = new UnwrittenRecords();
    held.holdUnwritten(object, signed('P1'), cancelled('P1'));
    held.holdUnread(object, 'end', () => ended);
    expect(held.decidedOn('u1', signed('P1'))).toEqual(ended);
    expect(held.unwrittenFor('u1')).toEqual({ from: signed('P1'), to: ended, object });
  });

  test('a write that landed drops the unwritten record, not a decision held unread since; forget drops both', () => {
    const held = new UnwrittenRecords();
    held.holdUnwritten(object, signed('P1'), cancelled('P1'));
    held.holdUnread(object, 'end', () => ended);
    held.written('u1');
    expect(held.unwrittenFor('u1')).toBeUndefined();
    expect(held.objectFor('u1')).toEqual(object);
    held.forget('u1');
    expect(held.uids()).toEqual([]);
    expect(held.decidedOn('u1', signed('P1'))).toEqual(signed('P1'));
  });
});
