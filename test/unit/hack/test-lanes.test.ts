import { assignLanes } from '../../../hack/test-lanes.js';

describe('assignLanes', () => {
  it('puts the longest files first, each on the least loaded lane, lane 0 starting with the unit tests', () => {
    const seconds = { a: 100, b: 90, c: 50, d: 40, e: 10 };
    const lanes = assignLanes(['e', 'd', 'c', 'b', 'a'], seconds, 3, 60);
    // loads: [60, 0, 0] → a → lane 1, b → lane 2, c → lane 0 (110, 100, 90), d → lane 2, e → lane 1.
    expect(lanes).toEqual([['c'], ['a', 'e'], ['b', 'd']]);
  });

  it('counts an unmeasured file as 30 s and keeps every file exactly once', () => {
    const files = Array.from({ length: 20 }, (_, i) => `f${i}`);
    const lanes = assignLanes(files, { f3: 200 }, 2, 0);
    expect(lanes.flat().sort()).toEqual([...files].sort());
    const load = (lane: string[]): number => lane.reduce((sum, f) => sum + (f === 'f3' ? 200 : 30), 0);
    expect(lanes[0]![0]).toBe('f3');
    expect(Math.abs(load(lanes[0]!) - load(lanes[1]!))).toBeLessThanOrEqual(30);
  });
});
