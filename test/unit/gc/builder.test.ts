import { NodeFlags } from '../../../src/core/gc/graph-node.js';
import {
  clusterScoped,
  deleting,
  finalizers,
  foreground,
  identity,
  ns,
  obj,
  orphaning,
  owners,
  ref,
  rv,
  Scenario,
  uid,
} from './fixtures.js';

describe('graph builder', () => {
  it('adds a virtual node for an owner not seen yet, and queues it for verification', () => {
    const owner = obj('ConfigMap', 'owner');
    const dep = obj('ConfigMap', 'dep', owners(ref(owner)));
    const s = new Scenario().observe(dep);

    const virtual = s.graph.get('uid-owner');
    expect(virtual?.virtual).toBe(true);
    expect(virtual?.namespace).toBe('ns');
    expect(s.dependentsOf('uid-owner')).toEqual(['uid-dep']);
    expect(s.queued()).toEqual(['uid-owner']);
  });

  it('turns the virtual node into the observed one without re-queueing matching dependents', () => {
    const owner = obj('ConfigMap', 'owner');
    const dep = obj('ConfigMap', 'dep', owners(ref(owner)));
    const s = new Scenario().observe(dep).drain().observe(owner);

    expect(s.graph.get('uid-owner')?.observed).toBe(true);
    expect(s.dependentsOf('uid-owner')).toEqual(['uid-dep']);
    expect(s.queued()).toEqual([]);
  });

  it('deleting an owner queues its dependents and remembers the owner as absent', () => {
    const owner = obj('ConfigMap', 'owner');
    const a = obj('ConfigMap', 'a', owners(ref(owner)));
    const b = obj('ConfigMap', 'b', owners(ref(owner)));
    const s = new Scenario().observe(owner, a, b).drain().deleted(owner);

    expect(s.graph.get('uid-owner')).toBeUndefined();
    expect(s.queued()).toEqual(['uid-a', 'uid-b']);
    expect(s.absent).toEqual([identity(owner)]);
  });

  it('deleting a dependent queues an owner waiting for its dependents, not other owners', () => {
    const waiting = obj('ConfigMap', 'waiting', foreground);
    const plain = obj('ConfigMap', 'plain');
    const dep = obj('ConfigMap', 'dep', owners(ref(waiting, { blocking: true }), ref(plain)));
    const s = new Scenario().observe(waiting, plain, dep).drain().deleted(dep);

    expect(s.queued()).toEqual(['uid-waiting']);
    expect(s.dependentsOf('uid-waiting')).toEqual([]);
  });

  it('an owner entering foreground deletion queues itself and all its dependents, once', () => {
    const owner = obj('ConfigMap', 'owner');
    const a = obj('ConfigMap', 'a', owners(ref(owner, { blocking: true })));
    const b = obj('ConfigMap', 'b', owners(ref(owner)));
    const s = new Scenario().observe(owner, a, b).drain();
    s.now = 5_000;
    s.observe(obj('ConfigMap', 'owner', foreground, rv('2')));

    expect(s.queued()).toEqual(['uid-a', 'uid-b', 'uid-owner']);
    expect(s.graph.get('uid-owner')?.deletingDependents).toBe(true);
    expect(s.graph.deletingDependentsSince.get('uid-owner')).toBe(5_000);

    s.drain().observe(obj('ConfigMap', 'owner', foreground, rv('3')));
    expect(s.queued()).toEqual([]);
    expect(s.graph.deletingDependentsSince.get('uid-owner')).toBe(5_000);
  });

  it('an owner entering orphan deletion is queued for orphaning only', () => {
    const owner = obj('ConfigMap', 'owner');
    const a = obj('ConfigMap', 'a', owners(ref(owner)));
    const s = new Scenario()
      .observe(owner, a)
      .drain()
      .observe(obj('ConfigMap', 'owner', orphaning));
    expect([...s.attemptToOrphan]).toEqual(['uid-owner']);
    expect(s.queued()).toEqual([]);
  });

  it('a foreground finalizer added again after a first removal is a new transition (double deletion)', () => {
    const pod = obj('Pod', 'lucy', finalizers('x/y'));
    const s = new Scenario().observe(pod).drain();
    s.observe(obj('Pod', 'lucy', deleting, finalizers('foregroundDeletion', 'x/y')));
    expect(s.queued()).toEqual(['uid-lucy']);
    s.drain().observe(obj('Pod', 'lucy', deleting, finalizers('x/y')));
    expect(s.graph.get('uid-lucy')?.deletingDependents).toBe(false);
    expect(s.graph.get('uid-lucy')?.beingDeleted).toBe(true);
    s.drain().observe(obj('Pod', 'lucy', deleting, finalizers('foregroundDeletion', 'x/y')));
    expect(s.queued()).toEqual(['uid-lucy']);
  });

  it('removing or unblocking a blocking reference re-queues the owner it blocked', () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const a = obj('ConfigMap', 'a', owners(ref(owner, { blocking: true })));
    const b = obj('ConfigMap', 'b', owners(ref(owner, { blocking: true })));
    const s = new Scenario().observe(owner, a, b).drain();

    s.observe(obj('ConfigMap', 'a', rv('2'), owners(ref(owner))));
    expect(s.queued()).toEqual(['uid-owner']);
    expect(s.graph.blockingDependents(s.graph.get('uid-owner')!).map((n) => n.uid)).toEqual(['uid-b']);

    s.drain().observe(obj('ConfigMap', 'b', rv('2')));
    expect(s.queued()).toEqual(['uid-owner']);
    expect(s.dependentsOf('uid-owner')).toEqual(['uid-a']);
  });

  it('adding a non-blocking reference does not queue the owner', () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const a = obj('ConfigMap', 'a');
    const s = new Scenario()
      .observe(owner, a)
      .drain()
      .observe(obj('ConfigMap', 'a', rv('2'), owners(ref(owner))));
    expect(s.queued()).toEqual([]);
    expect(s.dependentsOf('uid-owner')).toEqual(['uid-a']);
  });

  describe('references that may be invalid', () => {
    it('good parent seen before a child in another namespace: warning and re-check of the child', () => {
      const parent = obj('ConfigMap', 'parent', ns('ns1'));
      const child = obj('ConfigMap', 'child', ns('ns2'), owners(ref(parent)));
      const s = new Scenario().observe(parent).drain().observe(child);
      expect(s.queued()).toEqual(['uid-child']);
      expect(s.invalidNamespace).toEqual([
        { dependent: identity(child), ownerRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: 'uid-parent' } },
      ]);
    });

    it('child seen before the good parent in another namespace: warning and re-check of the child', () => {
      const parent = obj('ConfigMap', 'parent', ns('ns1'));
      const child = obj('ConfigMap', 'child', ns('ns2'), owners(ref(parent)));
      const s = new Scenario().observe(child).drain().observe(parent);
      expect(s.queued()).toEqual(['uid-child']);
      expect(s.invalidNamespace.map((r) => r.dependent.uid)).toEqual(['uid-child']);
      expect(s.graph.get('uid-parent')?.namespace).toBe('ns1');
    });

    it('a child naming its owner with the right UID but another name is re-checked, without warning', () => {
      const parent = obj('ConfigMap', 'parent');
      const child = obj('ConfigMap', 'child', owners(ref(parent, { name: 'other-name' })));
      const s = new Scenario().observe(parent).drain().observe(child);
      expect(s.queued()).toEqual(['uid-child']);
      expect(s.invalidNamespace).toEqual([]);
    });

    it('a cluster-scoped owner may be referenced from any namespace', () => {
      const parent = obj('rbac.authorization.k8s.io/v1 ClusterRole', 'parent', clusterScoped);
      const child = obj('ConfigMap', 'child', ns('ns2'), owners(ref(parent)));
      const s = new Scenario().observe(parent).drain().observe(child);
      expect(s.queued()).toEqual([]);
    });
  });

  describe('virtual delete events', () => {
    it('removes a virtual owner verified absent and queues its dependents', () => {
      const ghost = obj('ConfigMap', 'ghost');
      const dep = obj('ConfigMap', 'dep', owners(ref(ghost)));
      const s = new Scenario().observe(dep).drain().virtualDelete(identity(ghost));
      expect(s.graph.get('uid-ghost')).toBeUndefined();
      expect(s.queued()).toEqual(['uid-dep']);
      expect(s.absent).toEqual([identity(ghost)]);
    });

    it('keeps a virtual owner that other dependents name differently, under their identity', () => {
      const ghost = obj('ConfigMap', 'ghost');
      const a = obj('ConfigMap', 'a', owners(ref(ghost)));
      const b = obj('ConfigMap', 'b', owners(ref(ghost, { kind: 'Secret', name: 'ghost-secret' })));
      const s = new Scenario().observe(a, b).drain().virtualDelete(identity(ghost));

      const node = s.graph.get('uid-ghost');
      expect(node?.virtual).toBe(true);
      expect([node?.type.kind, node?.name]).toEqual(['Secret', 'ghost-secret']);
      expect(s.queued()).toEqual(['uid-a']);
      expect([...s.rateLimited]).toEqual(['uid-ghost']);
      expect(s.absent).toEqual([identity(ghost)]);
    });

    it('does not remove an observed node on a virtual delete for other coordinates', () => {
      const owner = obj('ConfigMap', 'owner');
      const good = obj('ConfigMap', 'good', owners(ref(owner)));
      const bad = obj('ConfigMap', 'bad', owners(ref(owner, { name: 'wrong' })));
      const s = new Scenario().observe(owner, good, bad).drain();
      s.virtualDelete({ ...identity(owner), name: 'wrong' });
      expect(s.graph.get('uid-owner')?.observed).toBe(true);
      expect(s.queued()).toEqual(['uid-bad']);
    });
  });

  it('keeps node state compact: flags, interned types and namespaces, shared owner strings', () => {
    const owner = obj('ConfigMap', 'owner', uid('u-1'));
    const a = obj('ConfigMap', 'a', owners(ref(owner)));
    const b = obj('ConfigMap', 'b', owners(ref(owner)));
    const s = new Scenario().observe(owner, a, b);
    const na = s.graph.get('uid-a')!;
    const nb = s.graph.get('uid-b')!;
    expect(na.type).toBe(nb.type);
    expect(na.owners[0]!.type).toBe(na.type);
    expect(na.flags).toBe(NodeFlags.observed);
    expect(s.graph.get('u-1')!.dependentCount()).toBe(2);
  });

  it('a dependent of a dependent: removing the middle keeps the graph consistent', () => {
    const top = obj('ConfigMap', 'top');
    const mid = obj('ConfigMap', 'mid', owners(ref(top)));
    const leaf = obj('ConfigMap', 'leaf', owners(ref(mid)));
    const s = new Scenario().observe(top, mid, leaf).drain().deleted(mid);
    expect(s.dependentsOf('uid-top')).toEqual([]);
    expect(s.queued()).toEqual(['uid-leaf']);
    expect(s.graph.size).toBe(2);
  });
});
