import type { Condition } from '../../../src/api/bundle-status.js';
import { condition, mergeConditions } from '../../../src/core/bundle/conditions.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T01:00:00Z';

describe('condition', () => {
  it.each<[Condition, Condition]>([
    [condition('Ready', true, 'R', 'm'), { type: 'Ready', status: 'True', reason: 'R', message: 'm' }],
    [condition('Ready', false), { type: 'Ready', status: 'False' }],
    [condition('Ready', 'Unknown', 'R', ''), { type: 'Ready', status: 'Unknown', reason: 'R' }],
  ])('%j', (built, expected) => {
    expect(built).toEqual(expected);
  });
});

describe('mergeConditions', () => {
  it.each<[string, Condition[] | undefined, Condition[], Condition[]]>([
    [
      'no previous: every condition transitions now',
      undefined,
      [condition('Ready', true)],
      [{ type: 'Ready', status: 'True', lastTransitionTime: T1 }],
    ],
    [
      'same status keeps the time',
      [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
      [condition('Ready', true)],
      [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
    ],
    [
      'same status, new reason and message: time kept, text updated',
      [{ type: 'Ready', status: 'False', reason: 'A', message: 'a', lastTransitionTime: T0 }],
      [condition('Ready', false, 'B', 'b')],
      [{ type: 'Ready', status: 'False', reason: 'B', message: 'b', lastTransitionTime: T0 }],
    ],
    [
      'status changed: time now',
      [{ type: 'Ready', status: 'False', lastTransitionTime: T0 }],
      [condition('Ready', true)],
      [{ type: 'Ready', status: 'True', lastTransitionTime: T1 }],
    ],
    [
      'previous without a time: time now',
      [{ type: 'Ready', status: 'True' }],
      [condition('Ready', true)],
      [{ type: 'Ready', status: 'True', lastTransitionTime: T1 }],
    ],
    [
      'conditions gone from next are dropped; order follows next',
      [
        { type: 'Old', status: 'True', lastTransitionTime: T0 },
        { type: 'B', status: 'True', lastTransitionTime: T0 },
      ],
      [condition('A', true), condition('B', true)],
      [
        { type: 'A', status: 'True', lastTransitionTime: T1 },
        { type: 'B', status: 'True', lastTransitionTime: T0 },
      ],
    ],
  ])('%s', (_name, previous, next, expected) => {
    expect(mergeConditions(previous, next, T1)).toEqual(expected);
  });
});
