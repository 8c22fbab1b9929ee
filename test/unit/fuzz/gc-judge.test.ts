/**
 * The GC fuzzer's judge (test/fuzz/gc/judge.ts) on hand-written end states:
 * each tolerance, where it applies and where it must not.
 */
import type { KubeObject } from '../../../src/kube/types.js';
import {
  dependentsOfOrphanAndUnsolidOwners,
  nonBlockingDependentsOfForegroundOwners,
  snapshotKey,
  type Snapshot,
} from '../../fuzz/gc/executor.js';
import { judge, type ClusterEnd } from '../../fuzz/gc/judge.js';
import { KINDS, namespaceName, objectName, type KindName, type Plan, type PlanObject } from '../../fuzz/gc/plan.js';

const SEED = 7;
const NEVER_UID = '00000000-0000-4000-8000-00000000beef';

interface Spec {
  /** Owner references: a logical id, or a raw UID (never existed). */
  refs?: { owner: string; block?: boolean; rawUid?: boolean }[];
  deleting?: boolean;
  finalizers?: string[];
}

function plan(objects: PlanObject[]): Plan {
  return { seed: SEED, objects, steps: [] };
}

const cm = (id: string, ns: 'a' | 'b' = 'a'): PlanObject => ({ id, kind: 'ConfigMap', ns, hold: false });
const role = (id: string): PlanObject => ({ id, kind: 'ClusterRole', hold: false });

/** One cluster's end: `present` maps logical ids to their state (UIDs are `${cluster}-${id}`). */
function cluster(
  p: Plan,
  name: string,
  present: Record<string, Spec>,
  atStart: string[] = [],
  ownersAtStart: string[] = [],
  orphanRaceAtStart: string[] = [],
): ClusterEnd {
  const uidOf = (id: string) => `${name}-${id}`;
  const snapshot: Snapshot = new Map();
  for (const [id, spec] of Object.entries(present)) {
    const o = p.objects.find((x) => x.id === id);
    if (!o) throw new Error(id);
    const namespace = o.ns ? namespaceName(SEED, o.ns) : undefined;
    const live: KubeObject = {
      apiVersion: KINDS[o.kind].apiVersion,
      kind: o.kind,
      metadata: {
        name: objectName(SEED, o),
        ...(namespace ? { namespace } : {}),
        uid: uidOf(id),
        resourceVersion: '1',
        ...(spec.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
        ...(spec.finalizers ? { finalizers: spec.finalizers } : {}),
        ownerReferences: (spec.refs ?? []).map((r) => {
          const owner = p.objects.find((x) => x.id === r.owner);
          const kind: KindName = owner?.kind ?? 'ConfigMap';
          return {
            apiVersion: KINDS[kind].apiVersion,
            kind,
            name: owner ? objectName(SEED, owner) : r.owner,
            uid: r.rawUid ? r.owner : uidOf(r.owner),
            ...(r.block !== undefined ? { blockOwnerDeletion: r.block } : {}),
          };
        }),
      },
    };
    snapshot.set(snapshotKey(o.kind, namespace, live.metadata.name), live);
  }
  // Every object of the plan was created once in this cluster (absent ones are gone).
  const uids = new Map(p.objects.map((o) => [o.id, [uidOf(o.id)]]));
  return {
    snapshot,
    uids,
    notes: [],
    foregroundDependentsAtStart: new Set(atStart.map(uidOf)),
    foregroundOwnersAtStart: new Set(ownersAtStart.map(uidOf)),
    orphanRaceDependentsAtStart: new Set(orphanRaceAtStart.map(uidOf)),
  };
}

const WAITING: Spec = { deleting: true, finalizers: ['foregroundDeletion', 'x/hold'] };

describe('gc judge: the start-up class (a non-blocking dependent of an owner already waiting in foreground deletion at a collector start)', () => {
  const p = plan([role('o4'), role('o7'), cm('o8'), cm('o9')]);

  it('seed 313 shape: ours collected the dependent, the reference did not attempt it: tolerated, and so is the object it alone kept', () => {
    const ours = cluster(p, 'ours', { o4: WAITING });
    const reference = cluster(
      p,
      'ref',
      { o4: WAITING, o7: { refs: [{ owner: 'o4', block: false }] }, o8: { refs: [{ owner: 'o7', block: true }] } },
      ['o7'],
    );
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated).toHaveLength(2);
    expect(verdict.tolerated[1]).toContain('follows from o7');
  });

  it('ours deleting it (held by another finalizer) is the same class (seed 213 shape)', () => {
    const ours = cluster(p, 'ours', { o4: WAITING, o7: { deleting: true, finalizers: ['x/hold'], refs: [{ owner: 'o4' }] } });
    const reference = cluster(p, 'ref', { o4: WAITING, o7: { finalizers: ['x/hold'], refs: [{ owner: 'o4' }] } }, ['o7']);
    expect(judge(p, ours, reference).divergences).toEqual([]);
  });

  it('not a dependent of a waiting owner at a start: a wrongful delete', () => {
    const ours = cluster(p, 'ours', { o4: WAITING });
    const reference = cluster(p, 'ref', { o4: WAITING, o7: { refs: [{ owner: 'o4', block: false }] } });
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o7', true]]);
  });

  it('with another owner solid in the reference: a wrongful delete', () => {
    const ours = cluster(p, 'ours', { o4: WAITING, o9: {} });
    const reference = cluster(p, 'ref', { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } }, ['o7']);
    expect(judge(p, ours, reference).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o7', true]]);
  });

  it('with its owner not being deleted in ours: a wrongful delete (whatever the owner itself shows)', () => {
    const ours = cluster(p, 'ours', { o4: {} });
    const reference = cluster(p, 'ref', { o4: WAITING, o7: { refs: [{ owner: 'o4', block: false }] } }, ['o7']);
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences.find((d) => d.id === 'o7')?.wrongfulDelete).toBe(true);
  });

  it('an owner gone in the reference is not a waiting one: a wrongful delete', () => {
    const ours = cluster(p, 'ours', {});
    const reference = cluster(p, 'ref', { o7: { refs: [{ owner: 'o4', block: false }] } }, ['o7']);
    expect(judge(p, ours, reference).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o7', true]]);
  });

  it('what follows must follow only from the class: another solid owner in the reference makes it a wrongful delete', () => {
    const ours = cluster(p, 'ours', { o4: WAITING, o9: {} });
    const reference = cluster(
      p,
      'ref',
      { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o4', block: false }] }, o8: { refs: [{ owner: 'o7', block: true }, { owner: 'o9' }] } },
      ['o7'],
    );
    expect(judge(p, ours, reference).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o8', true]]);
  });

  it('the reverse (ours kept it, the reference collected it) is a divergence: ours attempts every such dependent', () => {
    const ours = cluster(p, 'ours', { o4: WAITING, o7: { refs: [{ owner: 'o4', block: false }] } }, ['o7']);
    const reference = cluster(p, 'ref', { o4: WAITING }, ['o7']);
    expect(judge(p, ours, reference).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o7', false]]);
  });

  it('kept by both (a solid owner): ours removed only its non-blocking reference to the waiting owner: tolerated', () => {
    const ours = cluster(p, 'ours', { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o9' }] } });
    const reference = cluster(p, 'ref', { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } }, ['o7']);
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated).toHaveLength(1);
  });

  it('seed 6000 shape: kept by both; the owner waited at the start and the reference has finished its wait since (another finalizer keeps it): tolerated', () => {
    const finished: Spec = { deleting: true, finalizers: ['x/hold'] };
    const ours = cluster(p, 'ours', { o4: finished, o9: {}, o7: { refs: [{ owner: 'o9' }] } });
    const reference = cluster(
      p,
      'ref',
      { o4: finished, o9: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } },
      ['o7'],
      ['o4'],
    );
    expect(judge(p, ours, reference).divergences).toEqual([]);
    // Not recorded as waiting at a start: a divergence.
    const unrecorded = cluster(p, 'ref', { o4: finished, o9: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } }, ['o7']);
    expect(judge(p, ours, unrecorded).divergences.map((d) => d.id)).toEqual(['o7']);
  });

  it('kept by both: a removed reference to a solid owner, a blocking one, or no start record: divergences', () => {
    const cases: [Record<string, Spec>, Record<string, Spec>, string[]][] = [
      [
        { o4: {}, o9: {}, o7: { refs: [{ owner: 'o9' }] } },
        { o4: {}, o9: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } },
        ['o7'],
      ],
      [
        { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o9' }] } },
        { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o4', block: true }, { owner: 'o9' }] } },
        ['o7'],
      ],
      [
        { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o9' }] } },
        { o4: WAITING, o9: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } },
        [],
      ],
      // Ours has a reference the reference lacks.
      [
        { o4: WAITING, o9: {}, o8: {}, o7: { refs: [{ owner: 'o9' }, { owner: 'o8' }] } },
        { o4: WAITING, o9: {}, o8: {}, o7: { refs: [{ owner: 'o4', block: false }, { owner: 'o9' }] } },
        ['o7'],
      ],
    ];
    for (const [o, r, atStart] of cases) {
      expect(judge(p, cluster(p, 'ours', o), cluster(p, 'ref', r, atStart)).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([
        ['o7', false],
      ]);
    }
  });

  it("seeds 11425, 15336 shape: the reference finished the owner's wait (another finalizer keeps it) and kept the dependent; ours collected it: tolerated", () => {
    const finished: Spec = { deleting: true, finalizers: ['x/hold'] };
    const ours = cluster(p, 'ours', { o4: finished });
    const reference = cluster(p, 'ref', { o4: finished, o7: { refs: [{ owner: 'o4', block: false }] } }, ['o7'], ['o4']);
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated[0]).toContain('the reference finished the wait of its owner');
  });

  it('a finished wait is tolerated only for the dependent itself, recorded at the start, of an owner recorded waiting there: otherwise a wrongful delete', () => {
    const finished: Spec = { deleting: true, finalizers: ['x/hold'] };
    const ours = cluster(p, 'ours', { o4: finished });
    // Not a dependent of a waiting owner at the start.
    expect(
      judge(p, ours, cluster(p, 'ref', { o4: finished, o7: { refs: [{ owner: 'o4', block: false }] } }, [], ['o4'])).divergences.map(
        (d) => [d.id, d.wrongfulDelete],
      ),
    ).toEqual([['o7', true]]);
    // The owner did not wait at a start (it was deleted without foregroundDeletion, or later).
    expect(
      judge(p, ours, cluster(p, 'ref', { o4: finished, o7: { refs: [{ owner: 'o4', block: false }] } }, ['o7'])).divergences.map((d) => [
        d.id,
        d.wrongfulDelete,
      ]),
    ).toEqual([['o7', true]]);
    // The owner is not being deleted in the reference any more: solid.
    expect(
      judge(
        p,
        cluster(p, 'ours', { o4: {} }),
        cluster(p, 'ref', { o4: {}, o7: { refs: [{ owner: 'o4', block: false }] } }, ['o7'], ['o4']),
      ).divergences.map((d) => [d.id, d.wrongfulDelete]),
    ).toContainEqual(['o7', true]);
    // What the dependent kept in the reference does not follow from a finished wait.
    const withChild = cluster(
      p,
      'ref',
      {
        o4: finished,
        o7: { refs: [{ owner: 'o4', block: false }] },
        o8: {
          refs: [
            { owner: 'o7', block: true },
            { owner: 'o4', block: false },
          ],
        },
      },
      ['o7'],
      ['o4'],
    );
    expect(judge(p, ours, withChild).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o8', true]]);
  });

  it('the executor records only non-blocking dependents of waiting owners (blocking ones upstream re-queues itself)', () => {
    const snap = cluster(p, 'x', {
      o4: WAITING,
      o7: { refs: [{ owner: 'o4', block: false }] },
      o8: { refs: [{ owner: 'o4', block: true }] },
      o9: { refs: [{ owner: 'o4' }] },
    }).snapshot;
    expect(nonBlockingDependentsOfForegroundOwners(snap).sort()).toEqual(['x-o7', 'x-o9']);
  });
});

describe('gc judge: objects both are deleting, differing in references', () => {
  const p = plan([cm('o1', 'b'), cm('o2'), cm('o3'), cm('o5')]);
  const held = (refs: Spec['refs']): Spec => ({ deleting: true, finalizers: ['x/hold'], refs });

  it('seed 190 shape: ours lacks a blocking reference to a namespaced owner in another namespace: tolerated', () => {
    const ours = cluster(p, 'ours', { o1: {}, o3: held([{ owner: 'o2' }]) });
    const reference = cluster(p, 'ref', { o1: {}, o3: held([{ owner: 'o1', block: true }, { owner: 'o2' }]) });
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated).toHaveLength(1);
  });

  it('ours lacks blocking references to an owner that never existed or is gone: tolerated', () => {
    const ours = cluster(p, 'ours', { o3: held([]) });
    const reference = cluster(p, 'ref', {
      o3: held([
        { owner: NEVER_UID, rawUid: true, block: true },
        { owner: 'o2', block: true },
      ]),
    });
    expect(judge(p, ours, reference).divergences).toEqual([]);
  });

  it('ours lacks a blocking reference to an existing owner in the same namespace: a divergence', () => {
    const ours = cluster(p, 'ours', { o5: {}, o3: held([]) });
    const reference = cluster(p, 'ref', { o5: {}, o3: held([{ owner: 'o5', block: true }]) });
    expect(judge(p, ours, reference).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o3', false]]);
  });

  it('ours has a blocking reference the reference lacks: tolerated (ours holds back more)', () => {
    const ours = cluster(p, 'ours', { o5: {}, o3: held([{ owner: 'o5', block: true }]) });
    const reference = cluster(p, 'ref', { o5: {}, o3: held([]) });
    expect(judge(p, ours, reference).divergences).toEqual([]);
  });

  it('different finalizers: a divergence even when only unresolvable references differ', () => {
    const ours = cluster(p, 'ours', { o1: {}, o3: { deleting: true, finalizers: ['x/other'], refs: [] } });
    const reference = cluster(p, 'ref', { o1: {}, o3: held([{ owner: 'o1', block: true }]) });
    expect(judge(p, ours, reference).divergences.map((d) => d.id)).toEqual(['o3']);
  });
});

describe('gc judge: a foreground owner ours finished, the reference still waiting', () => {
  const p = plan([cm('owner', 'a'), cm('across', 'b'), cm('same', 'a')]);

  it('seed 483 shape: the reference waits only for a dependent naming it from another namespace: tolerated', () => {
    const ours = cluster(p, 'ours', { across: { deleting: true, finalizers: ['x/hold'] } });
    const reference = cluster(p, 'ref', {
      owner: WAITING,
      across: { deleting: true, finalizers: ['x/hold'], refs: [{ owner: 'owner', block: true }] },
    });
    const { divergences, tolerated } = judge(p, ours, reference);
    expect(divergences.filter((d) => d.id === 'owner')).toEqual([]);
    expect(tolerated.some((t) => t.includes('dependents naming it from another namespace'))).toBe(true);
  });

  it('a blocking dependent in its own namespace still makes it a divergence', () => {
    const ours = cluster(p, 'ours', { same: { deleting: true, finalizers: ['x/hold'] } });
    const reference = cluster(p, 'ref', {
      owner: WAITING,
      same: { deleting: true, finalizers: ['x/hold'], refs: [{ owner: 'owner', block: true }] },
    });
    expect(judge(p, ours, reference).divergences.map((d) => d.id)).toContain('owner');
  });

  it('ours still holding a blocking dependent of it is a wrongful delete, whatever the namespaces', () => {
    const ours = cluster(p, 'ours', { across: { deleting: true, finalizers: ['x/hold'], refs: [{ owner: 'owner', block: true }] } });
    const reference = cluster(p, 'ref', {
      owner: WAITING,
      across: { deleting: true, finalizers: ['x/hold'], refs: [{ owner: 'owner', block: true }] },
    });
    expect(judge(p, ours, reference).divergences.find((d) => d.id === 'owner')?.wrongfulDelete).toBe(true);
  });
});

describe('gc judge: an owner orphaning and one waiting in foreground deletion at a collector start (seed 15352)', () => {
  const p = plan([cm('o7'), cm('o8'), cm('o9'), cm('o10')]);
  const ORPHANING: Spec = { deleting: true, finalizers: ['orphan'] };

  it('ours kept the dependent with no reference left, the reference collected it: tolerated (a leak of order)', () => {
    const ours = cluster(p, 'ours', { o10: {} }, [], [], ['o10']);
    const reference = cluster(p, 'ref', {});
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated[0]).toContain('no reference left');
  });

  it('a reference left, being deleted, or no start record: divergences', () => {
    const reference = cluster(p, 'ref', {});
    const cases: [Record<string, Spec>, string[]][] = [
      [{ o9: {}, o10: { refs: [{ owner: 'o9' }] } }, ['o10']],
      [{ o10: { refs: [{ owner: 'o8', block: true }] } }, ['o10']],
      [{ o10: {} }, []],
    ];
    for (const [o, atStart] of cases) {
      expect(judge(p, cluster(p, 'ours', o, [], [], atStart), reference).divergences.map((d) => d.id)).toContain('o10');
    }
    // Ours deleting it where the reference kept it is not this class.
    const kept = cluster(p, 'ref', { o10: {} });
    expect(judge(p, cluster(p, 'ours', {}, [], [], ['o10']), kept).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([
      ['o10', true],
    ]);
  });

  it('seed 20104 shape: what only a kept leak still owns is kept too: tolerated; owned by an object not so kept, a divergence', () => {
    const reference = cluster(p, 'ref', {});
    const follows = judge(p, cluster(p, 'ours', { o9: {}, o10: { refs: [{ owner: 'o9' }] } }, [], [], ['o9']), reference);
    expect(follows.divergences).toEqual([]);
    expect(follows.tolerated).toHaveLength(2);
    // o9 not recorded at the start: neither is tolerated.
    const notRecorded = judge(p, cluster(p, 'ours', { o9: {}, o10: { refs: [{ owner: 'o9' }] } }, [], [], []), reference);
    expect(notRecorded.divergences.map((d) => d.id).sort()).toEqual(['o10', 'o9']);
    // A second owner that is no leak (o8 kept by the reference too) keeps it in both collectors' orders: no tolerance.
    const solid = judge(
      p,
      cluster(p, 'ours', { o8: {}, o9: {}, o10: { refs: [{ owner: 'o9' }, { owner: 'o8' }] } }, [], [], ['o9']),
      cluster(p, 'ref', { o8: {} }),
    );
    expect(solid.divergences.map((d) => d.id)).toEqual(['o10']);
  });

  it('the executor records objects referring to an orphaning owner and to one gone (seed 20104)', () => {
    const snap = cluster(p, 'x', {
      o7: ORPHANING,
      o9: { refs: [{ owner: 'o7' }, { owner: 'gone-uid', rawUid: true }] },
      o10: { refs: [{ owner: 'o7' }, { owner: 'o9' }] },
    }).snapshot;
    expect(dependentsOfOrphanAndUnsolidOwners(snap)).toEqual(['x-o9']);
  });

  it('the executor records objects referring to both an orphaning and a waiting owner, and only those', () => {
    const snap = cluster(p, 'x', {
      o7: ORPHANING,
      o8: WAITING,
      o9: { refs: [{ owner: 'o7' }] },
      o10: { refs: [{ owner: 'o8', block: true }, { owner: 'o7' }] },
    }).snapshot;
    expect(dependentsOfOrphanAndUnsolidOwners(snap)).toEqual(['x-o10']);
  });
});

describe('gc judge: kube-controller-manager stuck at a version no longer served (kubernetes/kubernetes#102641, seed 19916)', () => {
  const gadget = (id: string): PlanObject => ({ id, kind: 'Gadget', ns: 'b', hold: false });
  const p: Plan = {
    ...plan([cm('o13', 'b'), cm('o14', 'b'), gadget('o16')]),
    gadget: { kind: 'Gadget', plural: 'gadgets', versioned: true },
  };
  const ours = cluster(p, 'ours', {});
  const reference = cluster(p, 'ref', { o16: { refs: [{ owner: 'o13', block: true }] } });

  it('every owner gone in the reference, the old version unserved: ours collecting it is tolerated', () => {
    const verdict = judge(p, ours, reference, { oldVersionUnserved: true });
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated[0]).toContain('kubernetes/kubernetes#102641');
  });

  it('before the old version stopped being served, with an owner alive, or of a kind never upgraded: a wrongful delete', () => {
    expect(judge(p, ours, reference).divergences.map((d) => [d.id, d.wrongfulDelete])).toEqual([['o16', true]]);
    const alive = cluster(p, 'ref', { o13: {}, o16: { refs: [{ owner: 'o13', block: true }] } });
    expect(judge(p, cluster(p, 'ours', { o13: {} }), alive, { oldVersionUnserved: true }).divergences.map((d) => d.id)).toEqual(['o16']);
    // Gone in the reference but alive in ours: ours' delete is wrongful.
    const wrongful = judge(p, cluster(p, 'ours', { o13: {} }), reference, { oldVersionUnserved: true }).divergences.filter(
      (d) => d.wrongfulDelete,
    );
    expect(wrongful.map((d) => d.id)).toEqual(['o16']);
    const never: Plan = { ...p, gadget: { kind: 'Gadget', plural: 'gadgets' } };
    expect(
      judge(never, ours, cluster(never, 'ref', { o16: { refs: [{ owner: 'o13' }] } }), { oldVersionUnserved: true }).divergences,
    ).toHaveLength(1);
  });
});

describe('gc judge: a cluster-scoped object naming a namespaced owner, collected by the reference after a dependent was observed first (seeds 21300, 21909)', () => {
  // o11: a ConfigMap in a; o13: a ClusterRole naming it (invalid); o14: a ConfigMap in b owned by o13; o15: another ClusterRole.
  const p = plan([cm('o11'), role('o13'), cm('o14', 'b'), role('o15'), cm('o16')]);
  const reference = cluster(p, 'ref', { o11: {} });

  it('ours left it alone, and its dependent in another namespace: tolerated (watch order, in kube-controller-manager too)', () => {
    const ours = cluster(p, 'ours', { o11: {}, o13: { refs: [{ owner: 'o11' }] }, o14: { refs: [{ owner: 'o13', block: true }] } });
    const verdict = judge(p, ours, reference);
    expect(verdict.divergences).toEqual([]);
    expect(verdict.tolerated).toHaveLength(2);
    expect(verdict.tolerated[0]).toContain('naming a namespaced owner');
  });

  it('no dependent outside the owner’s namespace, a cluster-scoped owner still there, or ours deleting it: divergences', () => {
    const alone = cluster(p, 'ours', { o11: {}, o13: { refs: [{ owner: 'o11' }] } });
    expect(judge(p, alone, reference).divergences.map((d) => d.id)).toEqual(['o13']);
    // A dependent in the owner's own namespace: kube-controller-manager finds the owner there, and keeps it.
    const sameNamespace = cluster(p, 'ours', { o11: {}, o13: { refs: [{ owner: 'o11' }] }, o16: { refs: [{ owner: 'o13' }] } });
    expect(
      judge(p, sameNamespace, reference)
        .divergences.map((d) => d.id)
        .sort(),
    ).toEqual(['o13', 'o16']);
    // A solid cluster-scoped owner: kube-controller-manager removes the invalid reference and keeps it.
    const solid = cluster(p, 'ours', {
      o11: {},
      o15: {},
      o13: { refs: [{ owner: 'o11' }, { owner: 'o15' }] },
      o14: { refs: [{ owner: 'o13' }] },
    });
    expect(judge(p, solid, cluster(p, 'ref', { o11: {}, o15: {} })).divergences.map((d) => d.id)).toContain('o13');
    // The reference kept the cluster-scoped object but collected its dependent: the dependent follows from no leak.
    const keptHead = judge(
      p,
      cluster(p, 'ours', { o11: {}, o13: { refs: [{ owner: 'o11' }] }, o14: { refs: [{ owner: 'o13', block: true }] } }),
      cluster(p, 'ref', { o11: {}, o13: { refs: [{ owner: 'o11' }] } }),
    );
    expect(keptHead.divergences.map((d) => d.id)).toEqual(['o14']);
    // A namespaced object is not this class.
    const namespaced = cluster(p, 'ours', { o11: {}, o14: { refs: [{ owner: 'o11' }] } });
    expect(judge(p, namespaced, reference).divergences.map((d) => d.id)).toEqual(['o14']);
  });
});
