import { describe, expect, it } from '@jest/globals';
import { EventReasons } from '../../../src/api/names.js';
import { PER_OBJECT_EVENTS_UP_TO, prunePassEvents, type PrunedObject } from '../../../src/core/bundle/prune-events.js';

const deleted = (kind: string, name: string, reason: string = EventReasons.DeletedAfterDelay): PrunedObject => ({
  kind,
  name,
  event: { reason, message: `deleted ${kind} ns1/${name}` },
});

describe('prunePassEvents: one Event per object in a small pass, one summary per reason in a large one', () => {
  it(`keeps each object's own Event up to ${PER_OBJECT_EVENTS_UP_TO} of a reason`, () => {
    const done = Array.from({ length: PER_OBJECT_EVENTS_UP_TO }, (_, i) => deleted('ConfigMap', `c${i}`));
    expect(prunePassEvents(done)).toEqual(done.map((d) => d.event));
  });

  it('sums up a reason past the limit: count by kind, five names, how many more', () => {
    const done = [...Array.from({ length: 48 }, (_, i) => deleted('ConfigMap', `c${i}`)), deleted('Secret', 's0'), deleted('Secret', 's1')];
    expect(prunePassEvents(done)).toEqual([
      {
        reason: EventReasons.DeletedAfterDelay,
        message:
          "deleted 50 objects whose deletion delay ended (ConfigMap: 48, Secret: 2): e.g. ConfigMap/c0, ConfigMap/c1, ConfigMap/c2, ConfigMap/c3, ConfigMap/c4, 45 more. Each object is in the operator's log.",
      },
    ]);
  });

  it('decides per reason: a large reason summed up, a small one per object', () => {
    const done = [...Array.from({ length: 6 }, (_, i) => deleted('ConfigMap', `p${i}`, EventReasons.Pruned)), deleted('ConfigMap', 'late')];
    const events = prunePassEvents(done);
    expect(events.map((e) => e.reason)).toEqual([EventReasons.Pruned, EventReasons.DeletedAfterDelay]);
    expect(events[0]?.message).toMatch(/^deleted 6 objects no longer in the Bundle \(ConfigMap: 6\)/);
    expect(events[1]?.message).toBe('deleted ConfigMap ns1/late');
  });

  it('a summary of stamps says when they are due', () => {
    const done = Array.from({ length: 7 }, (_, i): PrunedObject => ({
      kind: 'ConfigMap',
      name: `c${i}`,
      event: { reason: EventReasons.DeletionScheduled, message: '' },
      deleteAfter: `2026-01-01T00:00:0${i % 2}.000Z`,
    }));
    expect(prunePassEvents(done)[0]?.message).toMatch(/; due after 2026-01-01T00:00:00.000Z to 2026-01-01T00:00:01.000Z\./);
  });

  it('never sums up an object marked alone (a countdown behind a gate) or a reason it has no summary for (Released)', () => {
    const released = Array.from({ length: 7 }, (_, i) => deleted('ConfigMap', `r${i}`, EventReasons.Released));
    const gated = Array.from({ length: 7 }, (_, i): PrunedObject => ({
      ...deleted('ConfigMap', `g${i}`, EventReasons.DeletionScheduled),
      alone: true,
    }));
    expect(prunePassEvents([...released, ...gated])).toHaveLength(14);
  });
});
