/**
 * The collector's dependents view (bundlesmith gc-graph): breadth-first,
 * each node once, virtual and being-deleted nodes marked, DOT rendering.
 */
import { dependentsView, findOwners, toDot } from '../../../src/core/gc/graph-view.js';
import { foreground, obj, owners, ref, Scenario } from './fixtures.js';

describe('dependentsView', () => {
  const d = obj('apps/v1 Deployment', 'web', foreground);
  const rs = obj('apps/v1 ReplicaSet', 'web-1', owners(ref(d, { blocking: true, controller: true })));
  const pod = obj('Pod', 'web-1-a', owners(ref(rs, { blocking: true, controller: true })));
  const ghostOwned = obj('ConfigMap', 'orphaned-by-ghost', owners({ apiVersion: 'v1', kind: 'Secret', name: 'ghost', uid: 'uid-ghost' }));
  // A dependent of both: listed once.
  const shared = obj('ConfigMap', 'shared', owners(ref(d), ref(rs)));
  const s = new Scenario().observe(d, rs, pod, ghostOwned, shared);

  it('walks the subtree once per node, with every edge and its flags', () => {
    const view = dependentsView(findOwners(s.graph, { kind: 'deployment', name: 'web', namespace: 'ns' }));
    expect(view.nodes.map((n) => `${n.kind}/${n.name}`)).toEqual(['Deployment/web', 'ConfigMap/shared', 'ReplicaSet/web-1', 'Pod/web-1-a']);
    expect(view.nodes[0]).toMatchObject({ beingDeleted: true, deletingDependents: true, virtual: false });
    expect(view.edges).toContainEqual({ owner: 'uid-web', dependent: 'uid-web-1', blockOwnerDeletion: true, controller: true });
    expect(view.edges.filter((e) => e.dependent === 'uid-shared')).toHaveLength(2);
    expect(view.truncated).toBe(false);
  });

  it('marks a virtual owner (referenced, never observed), found by uid', () => {
    const view = dependentsView(findOwners(s.graph, { kind: 'Secret', name: 'ghost', uid: 'uid-ghost' }));
    expect(view.nodes.map((n) => [n.name, n.virtual])).toEqual([
      ['ghost', true],
      ['orphaned-by-ghost', false],
    ]);
  });

  it('stops at the node limit and says so', () => {
    const view = dependentsView(findOwners(s.graph, { kind: 'Deployment', name: 'web' }), 2);
    expect(view.nodes).toHaveLength(2);
    expect(view.truncated).toBe(true);
    expect(view.edges.every((e) => view.nodes.some((n) => n.uid === e.owner) && view.nodes.some((n) => n.uid === e.dependent))).toBe(true);
  });

  it('renders DOT: dashed virtual nodes, red nodes being deleted, bold blocking edges', () => {
    const dot = toDot(dependentsView(findOwners(s.graph, { kind: 'Deployment', name: 'web' })));
    expect(dot.startsWith('digraph dependents {')).toBe(true);
    expect(dot).toContain('"uid-web" [label="Deployment\\nns/web\\n(waiting for dependents)", color=red];');
    expect(dot).toContain('"uid-web" -> "uid-web-1" [style=bold];');
    expect(dot).toContain('"uid-web" -> "uid-shared";');
    expect(toDot(dependentsView(findOwners(s.graph, { kind: 'Secret', name: 'ghost', uid: 'uid-ghost' })))).toContain('style=dashed');
  });
});
