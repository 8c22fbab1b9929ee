import { classifyReferences, type OwnerState, type OwnerStateKind } from '../../../src/core/gc/classify.js';
import {
  decideAttemptToDelete,
  decideAttemptToOrphan,
  decideCycleBreak,
  decideDeletingDependents,
  deletingDependentsFacts,
  describeOwnerChain,
  itemFacts,
  planAttemptToDelete,
  type ItemFacts,
} from '../../../src/core/gc/decide.js';
import { Graph } from '../../../src/core/gc/graph.js';
import { OwnerRef, RefBits } from '../../../src/core/gc/graph-node.js';
import { LruSet } from '../../../src/core/gc/lru.js';
import { reachesBundle } from '../../../src/core/gc/scope.js';
import { deleting, finalizers, foreground, obj, orphaning, owners, ref, rv, Scenario } from './fixtures.js';

const graph = new Graph();
const r = (name: string, bits = 0): OwnerRef => new OwnerRef(`uid-${name}`, graph.internType('v1', 'ConfigMap'), name, bits);
const state = (name: string, s: OwnerStateKind): OwnerState => ({ ref: r(name), state: s });
const plain: ItemFacts = { orphanFinalizer: false, foregroundFinalizer: false, hasDependents: false, dependentDeletingDependents: false };

describe('classifyReferences', () => {
  it.each<[string, OwnerStateKind[], { solid: number; dangling: number; waiting: number; undecidable?: string }]>([
    ['all present', ['present', 'present'], { solid: 2, dangling: 0, waiting: 0 }],
    [
      'absent, mismatch and wrong namespace all dangle',
      ['absent', 'coordinates-mismatch', 'wrong-namespace'],
      { solid: 0, dangling: 3, waiting: 0 },
    ],
    ['waiting owner', ['present-deleting-dependents', 'absent'], { solid: 0, dangling: 1, waiting: 1 }],
    ['unknown kind makes it undecidable', ['absent', 'unknown-kind'], { solid: 0, dangling: 0, waiting: 0, undecidable: 'unknown-kind' }],
    [
      'namespaced owner of cluster-scoped wins over a failed lookup',
      ['lookup-failed', 'namespaced-owner-of-cluster-scoped'],
      { solid: 0, dangling: 0, waiting: 0, undecidable: 'namespaced-owner-of-cluster-scoped' },
    ],
  ])('%s', (_name, kinds, want) => {
    const c = classifyReferences(kinds.map((k, i) => state(`o${i}`, k)));
    expect({
      solid: c.solid.length,
      dangling: c.dangling.length,
      waiting: c.waiting.length,
      ...(c.undecidable ? { undecidable: c.undecidable.state } : {}),
    }).toEqual(want);
  });
});

describe('decideAttemptToDelete', () => {
  it.each<[string, ItemFacts, OwnerStateKind[], string]>([
    ['solid owner only: keep', plain, ['present'], 'keep'],
    ['solid and dangling: remove the dangling reference', plain, ['present', 'absent'], 'remove-refs uid-o1'],
    ['solid and waiting: remove the waiting reference', plain, ['present', 'present-deleting-dependents'], 'remove-refs uid-o1'],
    ['all dangling: background delete', plain, ['absent', 'coordinates-mismatch'], 'delete Background'],
    ['all dangling, item has the orphan finalizer: orphan delete', { ...plain, orphanFinalizer: true }, ['absent'], 'delete Orphan'],
    [
      'all dangling, item has the foreground finalizer: foreground delete',
      { ...plain, foregroundFinalizer: true },
      ['absent'],
      'delete Foreground',
    ],
    ['waiting owner, item without dependents: background delete', plain, ['present-deleting-dependents'], 'delete Background'],
    [
      'waiting owner, item with dependents: foreground delete',
      { ...plain, hasDependents: true },
      ['present-deleting-dependents'],
      'delete Foreground',
    ],
    [
      'waiting owner, a dependent also waits: unblock, then foreground',
      { ...plain, hasDependents: true, dependentDeletingDependents: true },
      ['present-deleting-dependents'],
      'delete Foreground unblock',
    ],
    ['unknown owner kind: requeue', plain, ['absent', 'unknown-kind'], 'requeue'],
    ['namespaced owner of cluster-scoped item: forget', plain, ['namespaced-owner-of-cluster-scoped'], 'forget'],
  ])('%s', (_name, item, kinds, want) => {
    const d = decideAttemptToDelete(item, classifyReferences(kinds.map((k, i) => state(`o${i}`, k))));
    const got =
      d.kind === 'remove-refs'
        ? `remove-refs ${d.uids.join(',')}`
        : d.kind === 'delete'
          ? `delete ${d.propagation}${d.unblockRefsFirst ? ' unblock' : ''}`
          : d.kind;
    expect(got).toBe(want);
  });
});

describe('planAttemptToDelete', () => {
  it('skips what is being deleted without waiting, verifies virtual nodes, and routes waiting owners', () => {
    const owner = obj('ConfigMap', 'owner');
    const s = new Scenario().observe(
      obj('ConfigMap', 'gone', deleting, finalizers('x/y')),
      obj('ConfigMap', 'dep', owners(ref(owner))),
      obj('ConfigMap', 'waiting', foreground),
      obj('ConfigMap', 'root'),
    );
    expect(planAttemptToDelete(s.graph.get('uid-gone')).kind).toBe('skip');
    expect(planAttemptToDelete(s.graph.get('uid-owner')).kind).toBe('verify-virtual');
    expect(planAttemptToDelete(s.graph.get('uid-waiting')).kind).toBe('deleting-dependents');
    expect(planAttemptToDelete(s.graph.get('uid-root'))).toEqual({ kind: 'skip', reason: 'no-owners' });
    expect(planAttemptToDelete(s.graph.get('uid-dep')).kind).toBe('classify-owners');
    expect(planAttemptToDelete(undefined).kind).toBe('skip');
  });
});

describe('foreground deletion', () => {
  it('removes the finalizer once no blocking dependent is left; non-blocking ones do not hold it', () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const s = new Scenario().observe(owner, obj('ConfigMap', 'free', owners(ref(owner))));
    const d = decideDeletingDependents(deletingDependentsFacts(s.graph, s.graph.get('uid-owner')!, 0, 1000));
    expect(d).toEqual({ kind: 'remove-finalizer', finalizer: 'foregroundDeletion', reason: 'no-blocking-dependents' });
  });

  it('queues blockers that are not yet on their way out', () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const s = new Scenario().observe(
      owner,
      obj('ConfigMap', 'a', owners(ref(owner, { blocking: true }))),
      obj('ConfigMap', 'b', foreground, owners(ref(owner, { blocking: true }))),
    );
    expect(decideDeletingDependents(deletingDependentsFacts(s.graph, s.graph.get('uid-owner')!, 0, 1000))).toEqual({
      kind: 'wait',
      enqueue: ['uid-a'],
    });
  });

  it('waits without a timer when every blocker waits but there is no cycle (a deep cascade in progress)', () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const mid = obj('ConfigMap', 'mid', foreground, owners(ref(owner, { blocking: true })));
    const s = new Scenario().observe(owner, mid, obj('ConfigMap', 'leaf', owners(ref(mid, { blocking: true }))));
    expect(decideDeletingDependents(deletingDependentsFacts(s.graph, s.graph.get('uid-owner')!, 1e9, 1))).toEqual({
      kind: 'wait',
      enqueue: [],
    });
  });

  it('breaks a two-object foreground cycle only after a timeout proportional to the dependents', () => {
    const a = obj(
      'ConfigMap',
      'a',
      foreground,
      owners({ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: 'uid-b', blockOwnerDeletion: true }),
    );
    const b = obj('ConfigMap', 'b', foreground, owners(ref(a, { blocking: true })));
    const s = new Scenario();
    s.now = 1_000;
    s.observe(a, b);
    const early = decideDeletingDependents(deletingDependentsFacts(s.graph, s.graph.get('uid-a')!, 1_500, 1_000));
    // a's dependents, transitively: b only (a itself is not counted again): timeout 1 s.
    expect(early).toEqual({ kind: 'wait', enqueue: [], recheckAfterMs: 500 });
    const late = decideDeletingDependents(deletingDependentsFacts(s.graph, s.graph.get('uid-a')!, 3_000, 1_000));
    expect(late).toMatchObject({
      kind: 'remove-finalizer',
      reason: 'cycle-timeout',
      blockers: ['uid-b'],
      waitedMs: 2_000,
      timeoutMs: 1_000,
    });
  });

  it.each([
    [0, 1, 100, 'wait'],
    [99, 1, 100, 'wait'],
    [100, 1, 100, 'break'],
    [250, 3, 100, 'wait'],
    [300, 3, 100, 'break'],
    [100, 0, 100, 'break'],
  ])('cycle break after %i ms with %i dependents at %i ms each: %s', (waited, deps, per, want) => {
    expect(decideCycleBreak(waited, deps, per).kind).toBe(want);
  });
});

describe('itemFacts', () => {
  it('sees a dependent waiting in foreground deletion (upstream cycle guard)', () => {
    const top = obj('ConfigMap', 'top', foreground);
    const item = obj('ConfigMap', 'item', owners(ref(top, { blocking: true })), finalizers('orphan'));
    const s = new Scenario().observe(top, item, obj('ConfigMap', 'dep', foreground, owners(ref(item, { blocking: true }))));
    expect(itemFacts(s.graph, s.graph.get('uid-item')!)).toEqual({
      orphanFinalizer: true,
      foregroundFinalizer: false,
      hasDependents: true,
      dependentDeletingDependents: true,
    });
  });
});

describe('decideAttemptToOrphan', () => {
  it('orphans every dependent of an owner with the orphan finalizer', () => {
    const owner = obj('ConfigMap', 'owner', orphaning);
    const s = new Scenario().observe(owner, obj('ConfigMap', 'a', owners(ref(owner))), obj('ConfigMap', 'b', owners(ref(owner))));
    const d = decideAttemptToOrphan(s.graph.get('uid-owner'));
    expect(d.kind === 'orphan' ? [...d.dependents].sort() : d).toEqual(['uid-a', 'uid-b']);
  });

  it('forgets owners that no longer wait to orphan', () => {
    const s = new Scenario().observe(obj('ConfigMap', 'owner', deleting, finalizers('x/y')));
    expect(decideAttemptToOrphan(s.graph.get('uid-owner')).kind).toBe('forget');
    expect(decideAttemptToOrphan(undefined).kind).toBe('forget');
  });
});

describe('reachesBundle (--gc=bundles)', () => {
  const bundle = obj('smith.atlassian.com/v1 Bundle', 'b');
  const deploy = obj('apps/v1 Deployment', 'd', owners(ref(bundle, { controller: true })));
  const rs = obj('apps/v1 ReplicaSet', 'rs', owners(ref(deploy)));
  const pod = obj('Pod', 'p', owners(ref(rs)));
  const stray = obj('Pod', 'stray', owners(ref(obj('apps/v1 ReplicaSet', 'other'))));

  it.each([
    ['the Bundle itself', 'uid-b', true],
    ['a direct dependent', 'uid-d', true],
    ['a dependent three levels down', 'uid-p', true],
    ['an unrelated object', 'uid-stray', false],
  ])('%s: %s', (_name, u, want) => {
    const s = new Scenario().observe(bundle, deploy, rs, pod, stray);
    expect(reachesBundle(s.graph, s.graph.get(u)!)).toBe(want);
  });

  it('still reaches a deleted Bundle through the reference, and stops on cycles', () => {
    const s = new Scenario().observe(deploy, rs, pod).deleted(bundle);
    expect(reachesBundle(s.graph, s.graph.get('uid-p')!)).toBe(true);
    const a = obj('ConfigMap', 'a', owners({ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: 'uid-cb' }));
    const b = obj('ConfigMap', 'b', owners(ref(a)));
    const c = new Scenario().observe(a, { ...b, metadata: { ...b.metadata, uid: 'uid-cb' } });
    expect(reachesBundle(c.graph, c.graph.get('uid-a')!)).toBe(false);
  });
});

describe('describeOwnerChain', () => {
  it('names each cause and its owners upwards', () => {
    const bundle = obj('smith.atlassian.com/v1 Bundle', 'b');
    const deploy = obj('apps/v1 Deployment', 'd', owners(ref(bundle)));
    const s = new Scenario()
      .observe(bundle, deploy, obj('apps/v1 ReplicaSet', 'rs', owners(ref(deploy))))
      .deleted(obj('apps/v1 Deployment', 'd', rv('9'), owners(ref(bundle))));
    const chain = describeOwnerChain(s.graph, s.graph.get('uid-rs')!.owners);
    expect(chain).toBe('Deployment d (gone)');
    const s2 = new Scenario().observe(obj('smith.atlassian.com/v1 Bundle', 'b', foreground), deploy);
    expect(
      describeOwnerChain(s2.graph, [new OwnerRef('uid-d', s2.graph.internType('apps/v1', 'Deployment'), 'd', RefBits.blockOwnerDeletion)]),
    ).toBe('Deployment d (present) <- Bundle b (deleting dependents)');
  });
});

describe('LruSet', () => {
  it('evicts the least recently used key past its capacity', () => {
    const lru = new LruSet<string>(2);
    lru.add('a');
    lru.add('b');
    expect(lru.has('a')).toBe(true);
    lru.add('c');
    expect([lru.has('a'), lru.has('b'), lru.has('c'), lru.size]).toEqual([true, false, true, 2]);
  });
});
