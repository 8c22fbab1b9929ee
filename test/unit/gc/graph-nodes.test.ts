/**
 * The graph's dense node layout (core/gc/graph-node.ts) must never change what
 * a reference names: a single owner reference is kept as the owner's node
 * only while that node's coordinates are the reference's. These rows pin
 * the cases where the owner node's identity changes or it leaves the graph:
 * an owner verified by the wrong coordinates would be "absent", and its
 * dependent deleted.
 */
import { Graph } from '../../../src/core/gc/graph.js';
import { NodeFlags, OwnerRef, RefBits } from '../../../src/core/gc/graph-node.js';
import { obj, owners, ref, Scenario } from './fixtures.js';

function refsOf(s: Scenario, uid: string): { uid: string; apiVersion: string; kind: string; name: string; bits: number }[] {
  return (s.graph.get(uid)?.owners ?? []).map((r) => ({
    uid: r.uid,
    apiVersion: r.type.apiVersion,
    kind: r.type.kind,
    name: r.name,
    bits: r.bits,
  }));
}

describe('graph nodes', () => {
  it('a reference kept as its virtual owner keeps the coordinates the dependent wrote when the owner is observed under others', () => {
    const real = obj('apps/v1 Deployment', 'web');
    const dep = obj('ConfigMap', 'dep', owners(ref(real, { name: 'web-guessed', blocking: true, controller: true })));
    const s = new Scenario().observe(dep).drain();
    expect(s.graph.get('uid-web')?.name).toBe('web-guessed');

    s.observe(real);

    expect(s.graph.get('uid-web')?.name).toBe('web');
    expect(refsOf(s, 'uid-dep')).toEqual([
      {
        uid: 'uid-web',
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web-guessed',
        bits: RefBits.controller | RefBits.blockOwnerDeletion,
      },
    ]);
    // The mismatch is re-checked by a live lookup, as before.
    expect(s.queued()).toEqual(['uid-dep']);
  });

  it('a reference kept as its owner keeps its coordinates after the owner is deleted, and when the owner is served under another version', () => {
    const owner = obj('apps/v1beta1 Deployment', 'web');
    const a = obj('ConfigMap', 'a', owners(ref(owner, { blocking: true })));
    const b = obj('ConfigMap', 'b', owners(ref(owner)));
    const s = new Scenario().observe(owner, a, b).drain();

    s.observe(obj('apps/v1 Deployment', 'web', (o) => (o.metadata.resourceVersion = '2')));
    expect(refsOf(s, 'uid-a')).toEqual([
      { uid: 'uid-web', apiVersion: 'apps/v1beta1', kind: 'Deployment', name: 'web', bits: RefBits.blockOwnerDeletion },
    ]);

    s.deleted(owner);
    expect(refsOf(s, 'uid-b')).toEqual([{ uid: 'uid-web', apiVersion: 'apps/v1beta1', kind: 'Deployment', name: 'web', bits: 0 }]);
  });

  it('several references, and references naming other coordinates than the owner node, are kept as written', () => {
    const o1 = obj('ConfigMap', 'o1');
    const o2 = obj('ConfigMap', 'o2');
    const dep = obj('ConfigMap', 'dep', owners(ref(o1, { controller: true }), ref(o2, { kind: 'Secret' })));
    const s = new Scenario().observe(o1, o2, dep);
    expect(refsOf(s, 'uid-dep')).toEqual([
      { uid: 'uid-o1', apiVersion: 'v1', kind: 'ConfigMap', name: 'o1', bits: RefBits.controller },
      { uid: 'uid-o2', apiVersion: 'v1', kind: 'Secret', name: 'o2', bits: 0 },
    ]);
  });

  it('flags, reference bits and the source share one number without disturbing each other', () => {
    const graph = new Graph();
    const type = graph.internType('v1', 'ConfigMap');
    const owner = graph.newNode('o', type, 'o', 'ns', '1', NodeFlags.observed);
    const dep = graph.newNode('d', type, 'd', 'ns', '1', NodeFlags.observed | NodeFlags.tagged);
    dep.source = 5;
    graph.setOwners(dep, [new OwnerRef('o', type, 'o', RefBits.controller | RefBits.blockOwnerDeletion)]);
    owner.addDependent(dep);
    dep.flags = dep.flags | NodeFlags.bundleChain;
    expect([dep.flags, dep.source, dep.owners[0]?.bits]).toEqual([
      NodeFlags.observed | NodeFlags.tagged | NodeFlags.bundleChain,
      5,
      RefBits.controller | RefBits.blockOwnerDeletion,
    ]);
    dep.source = 1;
    expect([dep.flags, dep.source, dep.owners[0]?.controller, dep.owners[0]?.blockOwnerDeletion]).toEqual([
      NodeFlags.observed | NodeFlags.tagged | NodeFlags.bundleChain,
      1,
      true,
      true,
    ]);
  });

  it('dependents: one, a few, many and back, without duplicates', () => {
    const graph = new Graph();
    const type = graph.internType('v1', 'ConfigMap');
    const owner = graph.newNode('o', type, 'o', 'ns', '1', NodeFlags.observed);
    const deps = Array.from({ length: 40 }, (_, i) => graph.newNode(`d${i}`, type, `d${i}`, 'ns', '1', NodeFlags.observed));
    for (const d of deps) owner.addDependent(d);
    for (const d of deps) owner.addDependent(d);
    expect(owner.dependentCount()).toBe(40);
    for (const d of deps.slice(0, 37)) owner.removeDependent(d);
    expect(
      owner
        .dependents()
        .map((d) => d.uid)
        .sort(),
    ).toEqual(['d37', 'd38', 'd39']);
    owner.removeDependent(deps[37]!);
    owner.removeDependent(deps[38]!);
    expect(owner.dependents().map((d) => d.uid)).toEqual(['d39']);
    owner.removeDependent(deps[39]!);
    owner.removeDependent(deps[39]!);
    expect(owner.dependentCount()).toBe(0);
  });
});
