/**
 * Scenario tests of the engine, in the shape of upstream's
 * TestConflictingData: objects exist on a (fake) server, the informers'
 * events are fed to the graph writer, one queue item is processed at a
 * time, and the graph, the queues, the API calls and the events are checked.
 */
import { FakeClock } from '../fake-clock.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { KubeObject } from '../../../src/kube/types.js';
import type { WorkQueue } from '../../../src/runtime/workqueue.js';
import { GcEngine, type GcEngineOptions } from '../../../src/controllers/gc/engine.js';
import type { ObservedObject } from '../../../src/core/gc/graph-change.js';
import { FakeApi } from './fake-api.js';
import { clusterScoped, deleting, finalizers, foreground, ns, obj, orphaning, owners, ref } from './fixtures.js';

/** A fake server plus an engine whose "informers" are `reflect()`: every change on the server since the last call. */
class Cluster {
  readonly api = new FakeApi();
  readonly clock = new FakeClock(Date.UTC(2026, 0, 1));
  readonly engine: GcEngine;
  private seen = new Map<string, KubeObject>();

  constructor(options: Partial<GcEngineOptions> = {}) {
    this.engine = new GcEngine(this.api, this.api, { mode: 'cluster', clock: this.clock, cycleTimeoutPerDependentMs: 1_000, ...options });
  }

  create(...objects: ObservedObject[]): this {
    for (const o of objects) this.api.put(o);
    return this.reflect();
  }

  /** Kinds whose "informer" has not listed yet: reflect() does not show them. */
  readonly unlisted = new Set<string>();

  /** Feeds the writer what informers would have seen, then lets it apply it. */
  reflect(): this {
    const now = new Map<string, KubeObject>();
    for (const o of this.api.objects.values()) if (!this.unlisted.has(o.kind)) now.set(o.metadata.uid, o);
    for (const [uid, o] of now) {
      const before = this.seen.get(uid);
      if (!before || before.metadata.resourceVersion !== o.metadata.resourceVersion) this.engine.observed(structuredClone(o));
    }
    for (const [uid, o] of this.seen) if (!now.has(uid)) this.engine.deleted(o);
    this.seen = new Map([...now].map(([u, o]) => [u, structuredClone(o)]));
    this.engine.drainChanges();
    return this;
  }

  /** Keys waiting in a queue (taken out: the test processes them explicitly). */
  async take(queue: WorkQueue<string> = this.engine.attemptToDelete): Promise<string[]> {
    const keys: string[] = [];
    while (queue.len() > 0) {
      const k = await queue.get();
      if (k === undefined) break;
      keys.push(k);
      queue.done(k);
    }
    return keys.sort();
  }

  /** Processes everything queued for attempt-to-delete, reflecting the server after each item, until quiet. */
  async settle(maxRounds = 20): Promise<void> {
    for (let i = 0; i < maxRounds; i++) {
      const del = await this.take();
      const orph = await this.take(this.engine.attemptToOrphan);
      if (del.length === 0 && orph.length === 0 && this.engine.pendingChanges() === 0) return;
      for (const uid of del) {
        await this.engine.processAttemptToDelete(uid);
        this.reflect();
      }
      for (const uid of orph) {
        await this.engine.processAttemptToOrphan(uid);
        this.reflect();
      }
      this.reflect();
    }
    throw new Error('did not settle');
  }

  names(): string[] {
    return [...this.api.objects.values()].map((o) => o.metadata.name).sort();
  }
}

describe('GcEngine scenarios', () => {
  it('background cascade: one DELETE per dependent, no GET of dependents or of the known-deleted owner', async () => {
    const owner = obj('ConfigMap', 'owner');
    const deps = ['a', 'b', 'c'].map((n) => obj('ConfigMap', n, owners(ref(owner))));
    const c = new Cluster().create(owner, ...deps);
    expect(await c.take()).toEqual([]);

    c.api.objects.delete([...c.api.objects.entries()].find(([, o]) => o.metadata.name === 'owner')![0]);
    c.reflect();
    expect(await c.take()).toEqual(['uid-a', 'uid-b', 'uid-c']);
    for (const uid of ['uid-a', 'uid-b', 'uid-c']) expect(await c.engine.processAttemptToDelete(uid)).toBe('forget');

    expect(c.api.log().filter((l) => !l.startsWith('event'))).toEqual([
      'delete ConfigMap ns/a Background',
      'delete ConfigMap ns/b Background',
      'delete ConfigMap ns/c Background',
    ]);
    await c.engine.flushEvents();
    // One Event for the cascade, on its owner (issue 13.2): not one per object.
    expect(c.api.events.map((e) => [e.reason, e.regarding.name, e.namespace])).toEqual([['GarbageCollected', 'owner', 'ns']]);
    expect(c.api.events[0]?.message).toContain('Deleted 3 dependents (ConfigMap: 3)');
    expect(c.api.events[0]?.message).toContain('e.g. ConfigMap/a, ConfigMap/b, ConfigMap/c');
    expect(c.api.events[0]?.message).toContain('Owner chain: ConfigMap owner (gone)');

    // A later collection in the same cascade updates that Event as a series.
    c.create(obj('ConfigMap', 'd', owners(ref(owner))));
    await c.settle();
    await c.engine.flushEvents();
    expect(c.api.events).toHaveLength(1);
    expect(c.api.seriesUpdates.map((u) => [u.name, u.count])).toEqual([['event-1', 4]]);
    expect(c.api.seriesUpdates[0]?.note).toContain('Deleted 4 dependents (ConfigMap: 4)');
  });

  it('a dependent created with an owner that never existed: the virtual owner is verified, then the dependent collected', async () => {
    const ghost = obj('ConfigMap', 'ghost');
    const c = new Cluster().create(obj('ConfigMap', 'dep', owners(ref(ghost))));
    expect(await c.take()).toEqual(['uid-ghost']);

    expect(await c.engine.processAttemptToDelete('uid-ghost')).toBe('forget');
    expect(c.api.log()).toEqual(['get ConfigMap ns/ghost']);
    c.engine.drainChanges();
    expect(c.engine.graph.get('uid-ghost')).toBeUndefined();
    expect(await c.take()).toEqual(['uid-dep']);

    await c.engine.processAttemptToDelete('uid-dep');
    // The absence verified for the virtual node is not asked again.
    expect(c.api.log().filter((l) => !l.startsWith('event'))).toEqual(['get ConfigMap ns/ghost', 'delete ConfigMap ns/dep Background']);
  });

  it('a solid owner keeps the dependent, which only loses its dangling reference', async () => {
    const solid = obj('ConfigMap', 'solid');
    const gone = obj('ConfigMap', 'gone');
    const c = new Cluster().create(solid, obj('ConfigMap', 'dep', owners(ref(gone), ref(solid))));
    await c.settle();
    expect(c.names()).toEqual(['dep', 'solid']);
    expect(c.api.find('ConfigMap', 'dep')?.metadata.ownerReferences?.map((r) => r.name)).toEqual(['solid']);
    expect(c.api.log()).toContain('patch ConfigMap ns/dep');
  });

  it('a DELETE that fails its resourceVersion precondition re-reads once and decides again (a new solid owner keeps it)', async () => {
    const gone = obj('ConfigMap', 'gone');
    const late = obj('ConfigMap', 'late');
    const c = new Cluster().create(late, obj('ConfigMap', 'dep', owners(ref(gone))));
    await c.engine.processAttemptToDelete('uid-gone');
    c.engine.drainChanges();
    // Meanwhile (not yet seen by the informer) the dependent gains an owner.
    const dep = c.api.find('ConfigMap', 'dep')!;
    dep.metadata.ownerReferences = [
      ...(dep.metadata.ownerReferences ?? []),
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'late', uid: 'uid-late' },
    ];
    dep.metadata.resourceVersion = '999';

    expect(await c.engine.processAttemptToDelete('uid-dep')).toBe('forget');
    expect(c.api.log()).toEqual([
      'get ConfigMap ns/gone',
      'delete ConfigMap ns/dep Background',
      'get ConfigMap ns/dep',
      'get ConfigMap ns/late',
      'patch ConfigMap ns/dep',
    ]);
    expect(c.names()).toEqual(['dep', 'late']);
  });

  it('foreground: the owner stays until its blocking dependents are gone; a non-blocking one does not hold it', async () => {
    const owner = obj('ConfigMap', 'owner');
    const c = new Cluster().create(
      owner,
      obj('ConfigMap', 'blocking', owners(ref(owner, { blocking: true }))),
      obj('ConfigMap', 'free', owners(ref(owner))),
    );
    await c.api.delete(await c.api.resolve('v1', 'ConfigMap').then((r) => r!), 'ns', 'owner', {
      uid: 'uid-owner',
      propagationPolicy: 'Foreground',
    });
    c.api.calls.length = 0;
    c.reflect();
    expect(await c.take()).toEqual(['uid-blocking', 'uid-free', 'uid-owner']);

    // The owner first: it waits, and queues its blocking dependent.
    expect(await c.engine.processAttemptToDelete('uid-owner')).toBe('forget');
    expect(await c.take()).toEqual(['uid-blocking']);
    // The dependents go (the owner is verified once for both).
    await c.engine.processAttemptToDelete('uid-blocking');
    await c.engine.processAttemptToDelete('uid-free');
    expect(c.api.log().filter((l) => !l.startsWith('event'))).toEqual([
      'get ConfigMap ns/owner',
      'delete ConfigMap ns/blocking Background',
      'delete ConfigMap ns/free Background',
    ]);
    c.reflect();
    expect(await c.take()).toEqual(['uid-owner']);
    await c.engine.processAttemptToDelete('uid-owner');
    c.reflect();
    expect(c.names()).toEqual([]);
  });

  it('foreground: a dependent with dependents of its own goes in the foreground too, the cascade completes', async () => {
    const top = obj('ConfigMap', 'top', foreground);
    const mid = obj('ConfigMap', 'mid', owners(ref(top, { blocking: true })));
    const leaf = obj('ConfigMap', 'leaf', owners(ref(mid, { blocking: true })));
    const c = new Cluster().create(top, mid, leaf);
    await c.settle();
    expect(c.names()).toEqual([]);
    expect(c.api.log()).toContain('delete ConfigMap ns/mid Foreground');
  });

  it('a blocking dependent with another finalizer holds the owner until that finalizer goes', async () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const c = new Cluster().create(owner, obj('ConfigMap', 'dep', finalizers('x/y'), owners(ref(owner, { blocking: true }))));
    await c.settle();
    expect(c.names()).toEqual(['dep', 'owner']);
    const dep = c.api.find('ConfigMap', 'dep')!;
    expect(dep.metadata.deletionTimestamp).toBeDefined();
    dep.metadata.finalizers = [];
    c.api.objects.delete([...c.api.objects.entries()].find(([, o]) => o === dep)![0]);
    c.reflect();
    await c.settle();
    expect(c.names()).toEqual([]);
  });

  it('a three-object cycle under foreground deletion is fully deleted (upstream unblocking)', async () => {
    const a = obj('ConfigMap', 'a', owners({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'uid-c', blockOwnerDeletion: true }));
    const b = obj('ConfigMap', 'b', owners(ref(a, { blocking: true })));
    const cc = obj('ConfigMap', 'c', owners(ref(b, { blocking: true })));
    const c = new Cluster().create(a, b, cc);
    await c.api.delete((await c.api.resolve('v1', 'ConfigMap'))!, 'ns', 'a', { uid: 'uid-a', propagationPolicy: 'Foreground' });
    c.reflect();
    await c.settle();
    expect(c.names()).toEqual([]);
  });

  it('a cycle of objects all already in foreground deletion is broken after the timeout, with an event', async () => {
    const a = obj(
      'ConfigMap',
      'a',
      foreground,
      owners({ apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: 'uid-b', blockOwnerDeletion: true }),
    );
    const b = obj('ConfigMap', 'b', foreground, owners(ref(a, { blocking: true })));
    const c = new Cluster().create(a, b);
    const first = await c.take();
    expect(first).toEqual(['uid-a', 'uid-b']);
    expect(await c.engine.processAttemptToDelete('uid-a')).toEqual({ requeueAfterMs: 1_000 });
    expect(c.api.log()).toEqual([]);
    c.clock.advance(1_000);
    expect(await c.engine.processAttemptToDelete('uid-a')).toBe('forget');
    c.reflect();
    await c.settle();
    expect(c.names()).toEqual([]);
    await c.engine.flushEvents();
    const broken = c.api.events.filter((e) => e.reason === 'ForegroundCycleBroken');
    expect(broken.map((e) => [e.type, e.regarding.name])).toEqual([['Warning', 'a']]);
    expect(broken[0]?.message).toContain('Removed finalizer foregroundDeletion');
  });

  it('orphan: the owner is removed from every dependent, then its finalizer; dependents survive', async () => {
    const owner = obj('ConfigMap', 'owner', orphaning);
    const keep = obj('ConfigMap', 'keep');
    const c = new Cluster().create(
      owner,
      keep,
      obj('ConfigMap', 'a', owners(ref(owner))),
      obj('ConfigMap', 'b', owners(ref(keep), ref(owner))),
    );
    expect(await c.take(c.engine.attemptToOrphan)).toEqual(['uid-owner']);
    expect(await c.engine.processAttemptToOrphan('uid-owner')).toBe('forget');
    c.reflect();
    expect(c.names()).toEqual(['a', 'b', 'keep']);
    expect(c.api.find('ConfigMap', 'a')?.metadata.ownerReferences).toEqual([]);
    expect(c.api.find('ConfigMap', 'b')?.metadata.ownerReferences?.map((r) => r.name)).toEqual(['keep']);
  });

  it('orphan: a dependent with a gone owner is attempted first, while the orphaning owner is solid, and kept (fuzz seed 20315)', async () => {
    const owner = obj('ConfigMap', 'owner', orphaning);
    const gone = obj('ConfigMap', 'gone');
    const dep = obj('ConfigMap', 'dep', finalizers('x/hold'), owners(ref(owner, { blocking: true }), ref(gone)));
    const c = new Cluster().create(owner, dep);
    // The other owner is not there (deleted while the collector was down): its reference dangles.
    expect(await c.take(c.engine.attemptToOrphan)).toEqual(['uid-owner']);
    expect(await c.engine.processAttemptToOrphan('uid-owner')).toBe('forget');
    c.reflect();
    await c.settle();
    const kept = c.api.find('ConfigMap', 'dep');
    expect(kept?.metadata.deletionTimestamp).toBeUndefined();
    expect(kept?.metadata.ownerReferences).toEqual([]);
  });

  it('many dependents of one waiting owner share one owner lookup', async () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const deps = Array.from({ length: 20 }, (_, i) => obj('ConfigMap', `d${i}`, owners(ref(owner, { blocking: true }))));
    const c = new Cluster().create(owner, ...deps);
    expect(await c.take()).toEqual(['uid-owner']);
    // The waiting owner queues its blocking dependents.
    await c.engine.processAttemptToDelete('uid-owner');
    const keys = await c.take();
    expect(keys).toHaveLength(20);
    await Promise.all(keys.map((k) => c.engine.processAttemptToDelete(k)));
    expect(c.api.log().filter((l) => l.startsWith('get'))).toEqual(['get ConfigMap ns/owner']);
    expect(c.api.log().filter((l) => l.startsWith('delete'))).toHaveLength(20);
  });

  it.each<[string, ObservedObject[], string, string[]]>([
    [
      'a namespaced owner of a cluster-scoped dependent: never collected, no call',
      [
        obj(
          'rbac.authorization.k8s.io/v1 ClusterRole',
          'cr',
          clusterScoped,
          owners({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'uid-x' }),
        ),
      ],
      'uid-cr',
      [],
    ],
    [
      'a cluster-scoped owner that is missing: collected',
      [
        obj(
          'ConfigMap',
          'dep',
          owners({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'missing', uid: 'uid-missing' }),
        ),
      ],
      'uid-dep',
      ['get ClusterRole missing', 'delete ConfigMap ns/dep Background'],
    ],
    [
      'an owner of a kind the server does not serve: kept',
      [obj('ConfigMap', 'dep', owners({ apiVersion: 'example.com/v1', kind: 'Unknown', name: 'u', uid: 'uid-u' }))],
      'uid-dep',
      [],
    ],
  ])('%s', async (_name, objects, uid, calls) => {
    const c = new Cluster().create(...objects);
    await c.take();
    await c.engine.processAttemptToDelete(uid);
    expect(c.api.log().filter((l) => !l.startsWith('event'))).toEqual(calls);
  });

  it('an owner found in another namespace: warning event on the dependent, which is collected', async () => {
    const parent = obj('ConfigMap', 'parent', ns('other'));
    const c = new Cluster().create(parent, obj('ConfigMap', 'child', owners(ref(parent))));
    await c.settle();
    expect(c.names()).toEqual(['parent']);
    await c.engine.flushEvents();
    expect(c.api.events.map((e) => [e.type, e.reason, e.regarding.name, e.regarding.namespace])).toEqual([
      ['Warning', 'OwnerRefInvalidNamespace', 'child', 'ns'],
      ['Normal', 'GarbageCollected', 'parent', 'ns'],
    ]);
  });

  it('restricted to some namespaces: objects elsewhere are not touched', async () => {
    const gone = obj('ConfigMap', 'gone', ns('elsewhere'));
    const c = new Cluster({ restrictTo: { namespaces: ['ns'] } }).create(obj('ConfigMap', 'dep', ns('elsewhere'), owners(ref(gone))));
    await c.settle();
    expect(c.names()).toEqual(['dep']);
    expect(c.api.log().filter((l) => l.startsWith('delete') || l.startsWith('patch'))).toEqual([]);
  });

  it('--gc=bundles collects what a Bundle owned, not the rest', async () => {
    const bundle = obj('smith.atlassian.com/v1 Bundle', 'b');
    const other = obj('apps/v1 Deployment', 'other');
    const c = new Cluster({ mode: 'bundles' }).create(
      obj('ConfigMap', 'owned', owners(ref(bundle))),
      obj('ConfigMap', 'stray', owners(ref(other))),
    );
    await c.settle();
    expect(c.names()).toEqual(['stray']);
  });

  it('a failed DELETE is retried by the queue (the error propagates to runWorkers)', async () => {
    const c = new Cluster().create(obj('ConfigMap', 'dep', owners(ref(obj('ConfigMap', 'gone')))));
    await c.settle();
    expect(c.names()).toEqual([]);
    const c2 = new Cluster().create(obj('ConfigMap', 'dep', owners(ref(obj('ConfigMap', 'gone')))));
    await c2.engine.processAttemptToDelete('uid-gone');
    c2.engine.drainChanges();
    c2.api.failNext('delete', new KubeApiError(500, 'InternalError', 'boom', 'DELETE', 'x'));
    await expect(c2.engine.processAttemptToDelete('uid-dep')).rejects.toThrow('boom');
  });

  it('a being-deleted item without foreground finalizer is left to finish', async () => {
    const c = new Cluster().create(obj('ConfigMap', 'dep', deleting, finalizers('x/y'), owners(ref(obj('ConfigMap', 'gone')))));
    await c.settle();
    expect(c.api.log().filter((l) => l.startsWith('delete'))).toEqual([]);
  });

  // ---- issue 9 ------------------------------------------------------------

  it('a held barrier: workers take no item until it opens, and it opens only after the writer applied what came before', async () => {
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'held', waitingFor: ['v1/configmaps'] });
    c.create(obj('ConfigMap', 'dep', owners(ref(obj('ConfigMap', 'gone')))));
    expect(await c.take()).toEqual(['uid-gone']);
    let done = false;
    const processing = c.engine.processAttemptToDelete('uid-gone').then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    expect(c.api.log()).toEqual([]);
    // Opening goes through the writer, behind the informers' events.
    c.engine.setSyncBarrier({ phase: 'complete' });
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    expect(c.engine.syncBarrier().phase).toBe('held');
    c.engine.drainChanges();
    expect(await processing).toBe('forget');
    expect(c.api.log()).toEqual(['get ConfigMap ns/gone']);
  });

  it('closing the barrier is immediate (new resources discovered: workers wait for their lists)', () => {
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'held', waitingFor: ['x'] });
    expect(c.engine.syncBarrier().phase).toBe('held');
    c.engine.setSyncBarrier({ phase: 'partial', unsynced: ['x'] });
    expect(c.engine.syncBarrier().phase).toBe('held');
    c.engine.drainChanges();
    expect(c.engine.syncBarrier().phase).toBe('partial');
  });

  it('an opening still queued behind informer events does not undo a later closing', () => {
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'partial', unsynced: ['x'] });
    c.engine.drainChanges();
    c.engine.setSyncBarrier({ phase: 'complete' });
    // A new resource is discovered before the writer ran.
    c.engine.setSyncBarrier({ phase: 'held', waitingFor: ['y'] });
    c.engine.drainChanges();
    expect(c.engine.syncBarrier()).toEqual({ phase: 'held', waitingFor: ['y'] });
  });

  it('collector down: a foreground owner whose dependents are not listed yet is not finished on a partial graph', async () => {
    const secret = obj('Secret', 'owner', foreground);
    const held = obj('ConfigMap', 'held', finalizers('x/hold'), owners(ref(secret, { blocking: true })));
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'partial', unsynced: ['v1/configmaps'] });
    c.unlisted.add('ConfigMap');
    c.create(secret, held);
    expect(await c.take()).toEqual(['uid-owner']);
    expect(await c.engine.processAttemptToDelete('uid-owner')).toBe('forget');
    // No blocking dependent in the graph, but the graph is partial: deferred, nothing written.
    expect(c.api.log()).toEqual([]);
    expect(c.engine.deferredItems().attemptToDelete).toEqual(['uid-owner']);
    // The ConfigMaps list; the barrier opens: the owner is decided again, and now waits.
    c.unlisted.delete('ConfigMap');
    c.reflect();
    c.engine.setSyncBarrier({ phase: 'complete' });
    c.engine.drainChanges();
    expect(c.engine.deferredItems().attemptToDelete).toEqual([]);
    await c.settle();
    expect(c.names()).toEqual(['held', 'owner']);
    expect(c.api.find('Secret', 'owner')?.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect(c.api.find('ConfigMap', 'held')?.metadata.deletionTimestamp).toBeDefined();
  });

  it('collector down: an orphan deletion is not completed before every dependent is listed (no cascade)', async () => {
    const owner = obj('ConfigMap', 'owner', orphaning);
    const dep = obj('Secret', 'dep', owners(ref(owner, { blocking: true })));
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'partial', unsynced: ['v1/secrets'] });
    c.unlisted.add('Secret');
    c.create(owner, dep);
    expect(await c.take(c.engine.attemptToOrphan)).toEqual(['uid-owner']);
    expect(await c.engine.processAttemptToOrphan('uid-owner')).toBe('forget');
    expect(c.api.log()).toEqual([]);
    expect(c.engine.deferredItems().attemptToOrphan).toEqual(['uid-owner']);
    c.unlisted.delete('Secret');
    c.reflect();
    c.engine.setSyncBarrier({ phase: 'complete' });
    c.engine.drainChanges();
    await c.settle();
    expect(c.names()).toEqual(['dep']);
    expect(c.api.find('Secret', 'dep')?.metadata.ownerReferences).toEqual([]);
    expect(c.api.find('Secret', 'dep')?.metadata.deletionTimestamp).toBeUndefined();
  });

  it('on a partial graph, a dependent of a waiting owner goes in the foreground (what it owns may not be listed yet)', async () => {
    const owner = obj('ConfigMap', 'owner', foreground);
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'partial', unsynced: ['v1/secrets'] });
    c.unlisted.add('Secret');
    const dep = obj('ConfigMap', 'dep', owners(ref(owner, { blocking: true })));
    c.create(owner, dep, obj('Secret', 'grandchild', owners(ref(dep, { blocking: true }))));
    await c.settle();
    expect(c.api.log().filter((l) => l.startsWith('delete'))).toEqual(['delete ConfigMap ns/dep Foreground']);
    // Nobody's foreground deletion is completed on the partial graph.
    expect(c.names()).toEqual(['dep', 'grandchild', 'owner']);
    c.unlisted.delete('Secret');
    c.reflect();
    c.engine.setSyncBarrier({ phase: 'complete' });
    c.engine.drainChanges();
    await c.settle();
    expect(c.names()).toEqual([]);
  });

  it('start-up: every dependent of an owner already in foreground deletion is attempted once the graph is complete, in whatever order the lists came', async () => {
    for (const ownerFirst of [true, false]) {
      const owner = obj(
        'rbac.authorization.k8s.io/v1 ClusterRole',
        'owner',
        clusterScoped,
        foreground,
        finalizers('foregroundDeletion', 'x/hold'),
      );
      const loose = obj('rbac.authorization.k8s.io/v1 ClusterRole', 'loose', clusterScoped, owners(ref(owner)));
      const c = new Cluster();
      c.engine.setSyncBarrier({ phase: 'held', waitingFor: ['rbac.authorization.k8s.io/v1/clusterroles'] });
      // Added before its owner, the transition queues it; added after, nothing does.
      c.create(...(ownerFirst ? [owner, loose] : [loose, owner]));
      expect(await c.take()).toEqual(ownerFirst ? ['uid-owner'] : ['uid-loose', 'uid-owner']);
      c.engine.setSyncBarrier({ phase: 'complete' });
      c.engine.drainChanges();
      expect(await c.take()).toEqual(['uid-loose', 'uid-owner']);
      for (const uid of ['uid-loose', 'uid-owner']) await c.engine.processAttemptToDelete(uid);
      c.reflect();
      await c.settle();
      // The non-blocking dependent goes (its only owner waits on its dependents); the owner stays, held by its other finalizer.
      expect(c.names()).toEqual(['owner']);
    }
  });

  it('start-up sweep happens once: a dependent that names a waiting owner later, while running, is left alone (as upstream)', async () => {
    const owner = obj('ConfigMap', 'owner', foreground, finalizers('foregroundDeletion', 'x/hold'));
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'held', waitingFor: ['v1/configmaps'] });
    c.create(owner);
    c.engine.setSyncBarrier({ phase: 'complete' });
    c.engine.drainChanges();
    await c.settle();
    // A new resource is discovered and listed: the barrier closes and opens again.
    c.engine.setSyncBarrier({ phase: 'held', waitingFor: ['v1/secrets'] });
    c.create(obj('Secret', 'late', owners(ref(owner))));
    c.engine.setSyncBarrier({ phase: 'complete' });
    c.engine.drainChanges();
    expect(await c.take()).toEqual([]);
    expect(c.names()).toEqual(['late', 'owner']);
  });

  it('a partial graph still collects a dependent whose owner is verified absent (live, by UID)', async () => {
    const c = new Cluster();
    c.engine.setSyncBarrier({ phase: 'partial', unsynced: ['v1/secrets'] });
    c.unlisted.add('Secret');
    c.create(obj('ConfigMap', 'dep', owners(ref(obj('ConfigMap', 'gone')))));
    await c.settle();
    expect(c.names()).toEqual([]);
  });

  it('a cluster-scoped object owned by a namespaced kind, seen before its "owner": kept, nothing recorded, the real owner keeps its dependents', async () => {
    const owner = obj('ConfigMap', 'someone');
    const role = obj('rbac.authorization.k8s.io/v1 ClusterRole', 'role', clusterScoped, owners(ref(owner)));
    const c = new Cluster();
    c.unlisted.add('ConfigMap');
    c.api.put(owner);
    c.create(role);
    // A virtual owner guessed without a namespace.
    expect(c.engine.graph.get('uid-someone')?.namespace).toBe('');
    expect(await c.take()).toEqual(['uid-someone']);
    expect(await c.engine.processAttemptToDelete('uid-someone')).toBe('forget');
    expect(await c.engine.processAttemptToDelete('uid-role')).toBe('forget');
    c.engine.drainChanges();
    expect(c.api.log()).toEqual([]);
    expect(c.engine.verifier.absent.size).toBe(0);
    // Then the ConfigMaps list, with a real dependent of the owner.
    c.create(obj('ConfigMap', 'real-dep', owners(ref(owner))));
    c.unlisted.delete('ConfigMap');
    c.reflect();
    await c.settle();
    expect(c.names()).toEqual(['real-dep', 'role', 'someone']);
    expect(c.api.log().filter((l) => l.startsWith('delete') || l.startsWith('patch'))).toEqual([]);
  });

  it('an absence recorded under namespace "" is not read for a namespaced owner kind', async () => {
    const owner = obj('ConfigMap', 'someone');
    const c = new Cluster().create(
      owner,
      obj('ConfigMap', 'dep', owners(ref(owner))),
      obj('rbac.authorization.k8s.io/v1 ClusterRole', 'role', clusterScoped, owners(ref(owner))),
    );
    c.engine.verifier.markAbsent({ uid: 'uid-someone', apiVersion: 'v1', kind: 'ConfigMap', name: 'someone', namespace: '' });
    await c.engine.processAttemptToDelete('uid-dep');
    await c.engine.processAttemptToDelete('uid-role');
    await c.settle();
    expect(c.names()).toEqual(['dep', 'role', 'someone']);
    expect(c.api.log().filter((l) => l.startsWith('delete') || l.startsWith('patch'))).toEqual([]);
  });

  it('--gc=bundles collects grandchildren once the middle of a Bundle chain is gone; other chains stay out of scope', async () => {
    const bundle = obj('smith.atlassian.com/v1 Bundle', 'b');
    const deploy = obj('apps/v1 Deployment', 'deploy', owners(ref(bundle, { controller: true, blocking: true })));
    const rs = obj('apps/v1 ReplicaSet', 'rs', owners(ref(deploy, { controller: true, blocking: true })));
    const pod = obj('Pod', 'pod', owners(ref(rs, { controller: true, blocking: true })));
    const other = obj('apps/v1 Deployment', 'other');
    const otherRs = obj('apps/v1 ReplicaSet', 'other-rs', owners(ref(other, { controller: true })));
    const otherPod = obj('Pod', 'other-pod', owners(ref(otherRs, { controller: true })));
    const c = new Cluster({ mode: 'bundles' }).create(bundle, deploy, rs, pod, other, otherRs, otherPod);
    await c.settle();
    for (const name of ['deploy', 'other']) {
      const key = [...c.api.objects.entries()].find(([, o]) => o.metadata.name === name)![0];
      c.api.objects.delete(key);
    }
    c.reflect();
    await c.settle();
    expect(c.names()).toEqual(['b', 'other-pod', 'other-rs']);
  });
});
