/** One GarbageCollected Event per owner cascade (issue 13.2): summed, then updated as a series. */
import { CascadeEvents, SAMPLE_NAMES, type CascadeOwner } from '../../../src/core/gc/cascade-events.js';

const owner = (uid: string): CascadeOwner => ({ uid, apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `rs-${uid}`, namespace: 'ns' });
const CHAIN = 'ReplicaSet rs-a (gone)';

describe('CascadeEvents', () => {
  it('sums a cascade into one Event on its owner: count by kind, a few names, the owner chain', () => {
    const c = new CascadeEvents(30_000);
    for (let i = 0; i < 8; i++)
      c.record(owner('a'), 'Background', { kind: i % 2 === 0 ? 'Pod' : 'ConfigMap', name: `d-${i}` }, 1000 + i, CHAIN);
    const [write, ...rest] = c.due(2000);
    expect(rest).toEqual([]);
    expect(write).toMatchObject({ kind: 'create', owner: owner('a'), reason: 'GarbageCollected', action: 'Delete' });
    expect(write?.message).toBe(
      `Deleted 8 dependents (ConfigMap: 4, Pod: 4) by the garbage collector (propagation Background): no owner keeps them. e.g. Pod/d-0, ConfigMap/d-1, Pod/d-2, ConfigMap/d-3, Pod/d-4, 3 more. Owner chain: ReplicaSet rs-a (gone)`,
    );
    expect(SAMPLE_NAMES).toBe(5);
  });

  it('later collections update the same Event as a series, with the running total; nothing new, nothing written', () => {
    const c = new CascadeEvents(30_000);
    c.record(owner('a'), 'Foreground', { kind: 'Pod', name: 'p1' }, 1000, CHAIN);
    expect(c.due(1500)).toHaveLength(1);
    c.created('a', 'rs-a.17f');
    expect(c.due(2000)).toEqual([]);
    c.record(owner('a'), 'Foreground', { kind: 'Pod', name: 'p2' }, 2500, CHAIN);
    c.record(owner('a'), 'Foreground', { kind: 'Pod', name: 'p3' }, 2600, CHAIN);
    const [update, ...more] = c.due(3000);
    expect(more).toEqual([]);
    expect(update).toMatchObject({ kind: 'update', owner: owner('a'), eventName: 'rs-a.17f', count: 3, lastObservedAt: 2600 });
    expect(update?.message).toContain('Deleted 3 dependents (Pod: 3)');
  });

  it('one Event per owner; a cascade quiet for idleMs is forgotten, and a later one starts a new Event', () => {
    const c = new CascadeEvents(10_000);
    c.record(owner('a'), 'Background', { kind: 'Pod', name: 'p' }, 0, CHAIN);
    c.record(owner('b'), 'Background', { kind: 'Pod', name: 'q' }, 0, CHAIN);
    expect(
      c
        .due(100)
        .map((w) => w.owner.uid)
        .sort(),
    ).toEqual(['a', 'b']);
    c.created('a', 'ev-a');
    expect(c.due(10_000)).toEqual([]);
    c.record(owner('a'), 'Background', { kind: 'Pod', name: 'again' }, 20_000, CHAIN);
    const [again] = c.due(20_100);
    expect(again?.kind).toBe('create');
    expect(again?.message).toContain('Deleted 1 dependent (Pod: 1)');
  });

  it('a failed write is tried again: a failed create as a create, a failed update as an update', () => {
    const c = new CascadeEvents(30_000);
    c.record(owner('a'), 'Background', { kind: 'Pod', name: 'p' }, 0, CHAIN);
    const [create] = c.due(10);
    if (!create) throw new Error('no write');
    c.failed(create);
    expect(c.due(20)).toMatchObject([{ kind: 'create' }]);
    c.created('a', 'ev');
    c.record(owner('a'), 'Background', { kind: 'Pod', name: 'p2' }, 30, CHAIN);
    const [update] = c.due(40);
    if (!update) throw new Error('no write');
    c.failed(update);
    expect(c.due(50)).toMatchObject([{ kind: 'update', eventName: 'ev', count: 2 }]);
    expect(c.pending()).toBe(0);
  });
});
