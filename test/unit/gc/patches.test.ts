/** The collector's JSON patches: every change is pinned by a `test` of what it was computed from. */
import { describe, expect, it } from '@jest/globals';
import { removeFinalizerPatch, removeRefsPatch, unblockRefsPatch } from '../../../src/core/gc/patches.js';

const refs = (...uids: string[]) => uids.map((uid) => ({ uid }));

describe('removeRefsPatch', () => {
  it.each([
    ['no reference matches: empty patch', refs('a', 'b'), ['x'], []],
    [
      'one in the middle, on this object only',
      refs('a', 'b', 'c'),
      ['b'],
      [
        { op: 'test', path: '/metadata/uid', value: 'obj' },
        { op: 'test', path: '/metadata/ownerReferences/1/uid', value: 'b' },
        { op: 'remove', path: '/metadata/ownerReferences/1' },
      ],
    ],
    [
      'several: highest index first, so earlier indices stay valid',
      refs('a', 'b', 'c'),
      ['a', 'c'],
      [
        { op: 'test', path: '/metadata/uid', value: 'obj' },
        { op: 'test', path: '/metadata/ownerReferences/2/uid', value: 'c' },
        { op: 'remove', path: '/metadata/ownerReferences/2' },
        { op: 'test', path: '/metadata/ownerReferences/0/uid', value: 'a' },
        { op: 'remove', path: '/metadata/ownerReferences/0' },
      ],
    ],
    [
      'two references to one owner: both go',
      refs('a', 'a'),
      ['a'],
      [
        { op: 'test', path: '/metadata/uid', value: 'obj' },
        { op: 'test', path: '/metadata/ownerReferences/1/uid', value: 'a' },
        { op: 'remove', path: '/metadata/ownerReferences/1' },
        { op: 'test', path: '/metadata/ownerReferences/0/uid', value: 'a' },
        { op: 'remove', path: '/metadata/ownerReferences/0' },
      ],
    ],
  ])('%s', (_name, given, uids, expected) => {
    expect(removeRefsPatch('obj', given, new Set(uids))).toEqual(expected);
  });
});

describe('unblockRefsPatch', () => {
  it.each([
    ['nothing blocks: empty patch', [{ uid: 'a' }, { uid: 'b', blockOwnerDeletion: false }], []],
    [
      'only the blocking ones, each guarded by its UID, on this object only',
      [{ uid: 'a', blockOwnerDeletion: true }, { uid: 'b' }, { uid: 'c', blockOwnerDeletion: true }],
      [
        { op: 'test', path: '/metadata/uid', value: 'obj' },
        { op: 'test', path: '/metadata/ownerReferences/0/uid', value: 'a' },
        { op: 'add', path: '/metadata/ownerReferences/0/blockOwnerDeletion', value: false },
        { op: 'test', path: '/metadata/ownerReferences/2/uid', value: 'c' },
        { op: 'add', path: '/metadata/ownerReferences/2/blockOwnerDeletion', value: false },
      ],
    ],
  ])('%s', (_name, given, expected) => {
    expect(unblockRefsPatch('obj', given)).toEqual(expected);
  });
});

describe('removeFinalizerPatch', () => {
  it.each([
    ['the finalizer is not there: nothing to send', ['a'], 'orphan', undefined],
    [
      'pins the UID and the whole list it was read in',
      ['a', 'orphan', 'b'],
      'orphan',
      [
        { op: 'test', path: '/metadata/uid', value: 'uid-1' },
        { op: 'test', path: '/metadata/finalizers', value: ['a', 'orphan', 'b'] },
        { op: 'replace', path: '/metadata/finalizers', value: ['a', 'b'] },
      ],
    ],
    [
      'the last one: an empty list',
      ['foregroundDeletion'],
      'foregroundDeletion',
      [
        { op: 'test', path: '/metadata/uid', value: 'uid-1' },
        { op: 'test', path: '/metadata/finalizers', value: ['foregroundDeletion'] },
        { op: 'replace', path: '/metadata/finalizers', value: [] },
      ],
    ],
  ])('%s', (_name, finalizers, finalizer, expected) => {
    expect(removeFinalizerPatch('uid-1', finalizers, finalizer)).toEqual(expected);
  });
});
