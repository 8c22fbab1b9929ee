/**
 * The leader election loop as scenarios: replicas share one in-memory Lease
 * store (resourceVersion conflicts like the API server's), time moves with a
 * FakeClock, and faults are injected per verb.
 */
import { FakeClock } from '../fake-clock.js';
import { LeaderElector, type LeaseStore, type StoredLease } from '../../../src/runtime/leader-election.js';
import type { LeaseSpec } from '../../../src/runtime/leader-election-decision.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import { silentLogger } from '../../../src/observability/logger.js';

class MemoryLease {
  stored: StoredLease | undefined;
  private version = 0;
  /** Verbs that fail (or hang) until cleared. */
  readonly failing = new Set<'get' | 'create' | 'update'>();
  readonly hanging = new Set<'get' | 'create' | 'update'>();
  /** Replicas that crashed: nothing they send arrives any more. */
  readonly crashed = new Set<string>();
  writes = 0;
  reads = 0;

  storeFor(identity: string): LeaseStore {
    const check = async (verb: 'get' | 'create' | 'update'): Promise<void> => {
      if (this.hanging.has(verb) || this.crashed.has(identity)) await new Promise<never>(() => undefined);
      if (this.failing.has(verb)) throw new KubeApiError(0, 'NetworkError', `${verb} failed`, verb, 'leases');
    };
    return {
      get: async () => {
        await check('get');
        this.reads++;
        return this.stored ? { spec: { ...this.stored.spec }, resourceVersion: this.stored.resourceVersion } : undefined;
      },
      create: async (spec) => {
        await check('create');
        if (this.stored) throw new KubeApiError(409, 'AlreadyExists', 'exists', 'POST', 'leases');
        return this.put(spec);
      },
      update: async (spec, resourceVersion) => {
        await check('update');
        if (!this.stored || this.stored.resourceVersion !== resourceVersion)
          throw new KubeApiError(409, 'Conflict', 'changed', 'PUT', 'leases');
        return this.put(spec);
      },
    };
  }

  holder(): string | undefined {
    return this.stored?.spec.holderIdentity;
  }

  private put(spec: LeaseSpec): string {
    this.writes++;
    this.stored = { spec: { ...spec }, resourceVersion: String(++this.version) };
    return this.stored.resourceVersion;
  }
}

interface Replica {
  elector: LeaderElector;
  events: string[];
}

const LEASE_SECONDS = 15;

function replica(identity: string, lease: MemoryLease, monotonicNow?: () => number): Replica {
  const events: string[] = [];
  const elector = new LeaderElector({
    ...(monotonicNow ? { monotonicNow } : {}),
    store: lease.storeFor(identity),
    identity,
    clock,
    logger: silentLogger(),
    leaseDurationSeconds: LEASE_SECONDS,
    onStartedLeading: () => events.push('started'),
    onStoppedLeading: (reason) => events.push(`stopped: ${reason}`),
  });
  return { elector, events };
}

let clock: FakeClock;

/** Fires what is due now and lets the store's promises settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    clock.advance(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Advances time in retry-period steps, settling in between, as real time would. */
async function advance(ms: number, stepMs = 500): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    clock.advance(Math.min(stepMs, ms - done));
    await settle();
  }
}

describe('LeaderElector', () => {
  let lease: MemoryLease;
  beforeEach(() => {
    clock = new FakeClock(Date.UTC(2026, 10, 21, 12));
    lease = new MemoryLease();
  });

  it('lets exactly one of two replicas lead, and the other stands by', async () => {
    const a = replica('a', lease);
    const b = replica('b', lease);
    a.elector.start();
    b.elector.start();
    await advance(30_000);
    expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
    const leader = a.elector.isLeader() ? a : b;
    const standby = leader === a ? b : a;
    expect(leader.events).toEqual(['started']);
    expect(standby.events).toEqual([]);
    expect(standby.elector.hasObservedLease()).toBe(true);
    expect(lease.holder()).toBe(leader === a ? 'a' : 'b');
  });

  it('renews every retry period while leading, one write and no read per renewal', async () => {
    const a = replica('a', lease);
    a.elector.start();
    await settle();
    const writesAfterAcquire = lease.writes;
    const readsAfterAcquire = lease.reads;
    await advance(10_000);
    expect(lease.writes).toBe(writesAfterAcquire + 5);
    expect(lease.reads).toBe(readsAfterAcquire);
    expect(a.events).toEqual(['started']);
  });

  it('reads the Lease again after a renewal is refused, and finds another holder there', async () => {
    const a = replica('a', lease);
    a.elector.start();
    await settle();
    // Someone else writes the Lease (an administrator hands it over): the next renewal, on what a wrote, conflicts.
    lease.stored = {
      spec: { ...lease.stored!.spec, holderIdentity: 'b', renewTime: new Date(clock.now()).toISOString() },
      resourceVersion: '999',
    };
    const reads = lease.reads;
    await advance(4_000);
    expect(lease.reads).toBeGreaterThan(reads);
    expect(a.events).toEqual(['started', 'stopped: the Lease is held by b']);
  });

  it('lets a standby take over within the lease duration when the leader dies', async () => {
    const a = replica('a', lease);
    a.elector.start();
    await settle();
    const b = replica('b', lease);
    b.elector.start();
    await advance(5_000);
    expect(b.elector.isLeader()).toBe(false);

    // A crash: nothing the leader sends arrives any more, and it releases nothing.
    const crashedAt = clock.now();
    lease.crashed.add('a');
    await advance((LEASE_SECONDS + 3) * 1000);
    expect(b.elector.isLeader()).toBe(true);
    expect(b.events).toEqual(['started']);
    expect(lease.holder()).toBe('b');
    // Not before its last renewal had a full lease duration to run out.
    const acquiredAt = Date.parse((lease.stored?.spec.acquireTime ?? '').replace(/(\.\d{3})\d*Z$/, '$1Z'));
    expect(acquiredAt - crashedAt).toBeGreaterThanOrEqual(LEASE_SECONDS * 1000 - 2_000);
    expect(lease.stored?.spec.leaseTransitions).toBe(1);
  });

  it('stops leading at the renew deadline when renewals fail, before anyone may take over', async () => {
    const a = replica('a', lease);
    a.elector.start();
    await settle();
    lease.failing.add('update');
    await advance(9_000);
    expect(a.elector.isLeader()).toBe(true);
    await advance(2_000);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toEqual(['started', 'stopped: not renewed within the renew deadline of 10000 ms']);
  });

  it('stops leading at the renew deadline even when requests hang', async () => {
    const a = replica('a', lease);
    a.elector.start();
    await settle();
    lease.hanging.add('get');
    lease.hanging.add('update');
    await advance(11_000);
    expect(a.events).toEqual(['started', 'stopped: not renewed within the renew deadline of 10000 ms']);
  });

  it('stops leading when another replica holds the Lease', async () => {
    const a = replica('a', lease);
    a.elector.start();
    await settle();
    // Someone overwrote the Lease (an operator by hand, or a split brain).
    const stored = lease.stored;
    if (!stored) throw new Error('no lease');
    lease.stored = { spec: { ...stored.spec, holderIdentity: 'intruder' }, resourceVersion: 'x' };
    // The renewal on what it wrote conflicts; the round after reads the Lease and finds the intruder.
    await advance(4_000);
    expect(a.events).toEqual(['started', 'stopped: the Lease is held by intruder']);
  });

  it('releases the Lease on stop, so a standby takes over at its next round', async () => {
    const a = replica('a', lease);
    const b = replica('b', lease);
    a.elector.start();
    await settle();
    b.elector.start();
    await advance(4_000);
    await a.elector.stop();
    expect(a.elector.state()).toBe('stopped');
    expect(lease.holder()).toBe('');
    expect(a.events).toEqual(['started']);
    await advance(2_500);
    expect(b.elector.isLeader()).toBe(true);
  });

  it('does not release a Lease it does not hold', async () => {
    const a = replica('a', lease);
    const b = replica('b', lease);
    a.elector.start();
    await settle();
    b.elector.start();
    await advance(2_000);
    const before = lease.stored;
    await b.elector.stop();
    expect(lease.stored).toBe(before);
  });

  it('rejects timings where a leader could outlive its lease', () => {
    expect(
      () =>
        new LeaderElector({
          store: lease.storeFor('a'),
          identity: 'a',
          clock,
          logger: silentLogger(),
          leaseDurationSeconds: 15,
          renewDeadlineMs: 15_000,
          onStartedLeading: () => undefined,
          onStoppedLeading: () => undefined,
        }),
    ).toThrow(/renew deadline/);
  });

  it('holdsLease: a paused leader holds it no more the moment it wakes, before any timer of its own has run', async () => {
    // The monotonic clock goes on while the process is stopped; the FakeClock's timers (the watchdog) have not fired.
    let mono = 1_000;
    const a = replica('a', lease, () => mono);
    a.elector.start();
    await settle();
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.holdsLease()).toBe(true);
    // Renewal sent at mono 1000; the renew deadline is 2/3 of 15 s.
    mono += 9_999;
    expect(a.elector.holdsLease()).toBe(true);
    mono += 2;
    expect(a.elector.isLeader()).toBe(true);
    expect(a.elector.holdsLease()).toBe(false);
  });

  it('holdsLease: a renewal counts from before it was sent, and a standby never holds it', async () => {
    let mono = 0;
    const a = replica('a', lease, () => mono);
    const b = replica('b', lease, () => mono);
    a.elector.start();
    await settle();
    b.elector.start();
    await settle();
    expect(b.elector.holdsLease()).toBe(false);
    mono = 5_000;
    await advance(2_000);
    expect(a.elector.holdsLease()).toBe(true);
    mono = 5_000 + 10_001;
    expect(a.elector.holdsLease()).toBe(false);
  });
});
