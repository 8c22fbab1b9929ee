/**
 * The I/O half of Lease leader election: reads and writes the Lease, asks
 * `decideLeaderElection` what to do, and tells the caller when it starts and
 * stops leading. client-go's tools/leaderelection semantics:
 *
 * - every write carries the resourceVersion it was decided on, so two
 *   candidates can never both acquire;
 * - a leader that has not renewed within the renew deadline (shorter than the
 *   lease duration) stops leading, even when its requests hang: a watchdog
 *   timer fires at the deadline, independent of the loop. It therefore stops
 *   writing before any standby can take over (after a full lease duration
 *   from the last renewal it observed);
 * - `stop()` releases the Lease when we hold it, so a standby takes over at
 *   once instead of after a lease duration.
 */
import { KubeApiError, errorMessage } from '../kube/errors.js';
import type { KubeClient } from '../kube/client.js';
import { resourcePath } from '../kube/requests.js';
import type { ResourceType } from '../kube/types.js';
import type { RuntimeLogger } from './log.js';
import type { Cancel, Clock } from '../kube/clock.js';
import { decideLeaderElection, observeLease, releaseLease, type LeaseObservation, type LeaseSpec } from './leader-election-decision.js';

export interface StoredLease {
  spec: LeaseSpec;
  resourceVersion: string;
}

/** The Lease object's three verbs; an in-memory store stands in for it in unit tests. */
export interface LeaseStore {
  /** Undefined when the Lease does not exist. */
  get(): Promise<StoredLease | undefined>;
  /** Fails (409 AlreadyExists) when someone created it first. Resolves with the new resourceVersion. */
  create(spec: LeaseSpec): Promise<string | undefined>;
  /** Fails (409 Conflict) when the Lease changed since `resourceVersion`. Resolves with the new resourceVersion. */
  update(spec: LeaseSpec, resourceVersion: string): Promise<string | undefined>;
}

export const LEASE_RESOURCE: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
  verbs: ['get', 'create', 'update'],
};

/** The Lease spec fields election reads; a field of the wrong type reads as absent. */
function leaseSpecOf(spec: unknown): LeaseSpec {
  const raw = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>) : {};
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const int = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return {
    holderIdentity: text(raw.holderIdentity),
    leaseDurationSeconds: int(raw.leaseDurationSeconds),
    acquireTime: text(raw.acquireTime),
    renewTime: text(raw.renewTime),
    leaseTransitions: int(raw.leaseTransitions),
  };
}

/** The Lease `namespace/name` on the API server. Writes are PUTs with resourceVersion (optimistic concurrency). */
export function kubeLeaseStore(client: KubeClient, namespace: string, name: string): LeaseStore {
  const metadata = (resourceVersion?: string) => ({ name, namespace, ...(resourceVersion ? { resourceVersion } : {}) });
  return {
    async get() {
      const lease = await client.tryGet(LEASE_RESOURCE, namespace, name);
      if (lease === undefined) return undefined;
      return { spec: leaseSpecOf(lease.spec), resourceVersion: lease.metadata.resourceVersion };
    },
    async create(spec) {
      const created = await client.create(LEASE_RESOURCE, {
        apiVersion: LEASE_RESOURCE.apiVersion,
        kind: 'Lease',
        metadata: metadata(),
        spec,
      });
      return created.metadata.resourceVersion;
    },
    async update(spec, resourceVersion) {
      const written = (await client.raw('PUT', resourcePath(LEASE_RESOURCE, namespace, name), {
        apiVersion: LEASE_RESOURCE.apiVersion,
        kind: 'Lease',
        metadata: metadata(resourceVersion),
        spec,
      })) as { metadata?: { resourceVersion?: unknown } } | undefined;
      return typeof written?.metadata?.resourceVersion === 'string' ? written.metadata.resourceVersion : undefined;
    },
  };
}

export interface LeaderElectorOptions {
  store: LeaseStore;
  identity: string;
  clock: Clock;
  logger: RuntimeLogger;
  /** What we write; a standby waits this long after the last renewal it saw. */
  leaseDurationSeconds: number;
  /** How long a leader may go without a successful renewal before it stops (default: 2/3 of the lease). */
  renewDeadlineMs?: number;
  /** Time between rounds (default: lease duration / 7.5, client-go's 2 s for 15 s). */
  retryPeriodMs?: number;
  /** Called once per term, when the Lease is ours. */
  onStartedLeading: () => void;
  /** Called once per term, when leadership is lost (not on `stop()`). */
  onStoppedLeading: (reason: string) => void;
  /**
   * Milliseconds from a clock that never steps and keeps counting while the
   * process is paused (default: performance.now, CLOCK_MONOTONIC). holdsLease
   * reads it, not `clock`: a paused process must find its term over the
   * moment it wakes, before any timer has had a chance to run.
   */
  monotonicNow?: () => number;
}

export type LeaderElectorState = 'candidate' | 'leading' | 'stopped';

export class LeaderElector {
  /** The Lease as this replica last wrote it (while leading): the next renewal's precondition. */
  private lastWritten: StoredLease | undefined;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private observation: LeaseObservation | undefined;
  private leading: { lastRenewMs: number; heldUntilMono: number } | undefined;
  private readonly monotonicNow: () => number;
  private nextRound: Cancel | undefined;
  private watchdog: Cancel | undefined;
  private round: Promise<void> | undefined;
  private stopped = false;
  private lastHolder = '';

  constructor(private readonly o: LeaderElectorOptions) {
    const leaseMs = o.leaseDurationSeconds * 1000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? Math.floor((leaseMs * 2) / 3);
    this.retryPeriodMs = o.retryPeriodMs ?? Math.max(100, Math.floor(leaseMs / 7.5));
    this.monotonicNow = o.monotonicNow ?? (() => performance.now());
    if (!(this.retryPeriodMs < this.renewDeadlineMs && this.renewDeadlineMs < leaseMs)) {
      throw new RangeError(
        `leader election needs retry period (${this.retryPeriodMs} ms) < renew deadline (${this.renewDeadlineMs} ms) < lease duration (${leaseMs} ms)`,
      );
    }
  }

  state(): LeaderElectorState {
    if (this.stopped) return 'stopped';
    return this.leading ? 'leading' : 'candidate';
  }

  isLeader(): boolean {
    return !this.stopped && this.leading !== undefined;
  }

  /**
   * Whether this replica may write now: it leads, and its last successful
   * renewal was sent less than the renew deadline ago by the monotonic clock.
   * A standby takes over a full lease duration after it saw that renewal, so
   * the gap (a third of the lease by default) is the margin for a write
   * already on its way. Checked by the clients right before each write is
   * sent (the write fence), so a leader paused past its lease (a frozen VM,
   * SIGSTOP) sends nothing when it wakes, whatever its timers have not run yet.
   */
  holdsLease(): boolean {
    return !this.stopped && this.leading !== undefined && this.monotonicNow() < this.leading.heldUntilMono;
  }

  /** Whether a round has read the Lease: the API server is reachable and we take part. */
  hasObservedLease(): boolean {
    return this.observation !== undefined;
  }

  /** Begins competing; the first round runs at once. */
  start(): void {
    this.schedule(0);
  }

  /**
   * Stops competing and, when we hold the Lease, releases it. The caller must
   * have stopped its own writes first: after the release another replica may
   * lead at once.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.nextRound?.();
    await this.round;
    this.watchdog?.();
    const wasLeading = this.leading !== undefined;
    this.leading = undefined;
    if (!wasLeading) return;
    try {
      const current = await this.o.store.get();
      const released = releaseLease(current?.spec, this.o.identity, this.o.clock.now());
      if (current && released) {
        await this.o.store.update(released, current.resourceVersion);
        this.o.logger.info({ identity: this.o.identity }, 'released the leader election Lease');
      }
    } catch (err) {
      // Not fatal: the standby takes over when the lease expires.
      this.o.logger.warn({ err: errorMessage(err) }, 'could not release the leader election Lease');
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.nextRound?.();
    this.nextRound = this.o.clock.setTimeout(() => {
      this.round = this.runRound().finally(() => {
        this.round = undefined;
      });
    }, ms);
  }

  private async runRound(): Promise<void> {
    if (this.stopped) return;
    let nextInMs = this.retryPeriodMs;
    try {
      nextInMs = await this.tryAcquireOrRenew();
    } catch (err) {
      // A failed read or write changes nothing by itself: the watchdog ends a
      // term whose renewals keep failing.
      this.o.logger.warn(
        { err: errorMessage(err), code: err instanceof KubeApiError ? err.code : undefined },
        'leader election round failed',
      );
    }
    this.schedule(nextInMs);
  }

  /**
   * One round; returns when to run the next. A leader renews on the Lease
   * as it last wrote it, with no read: one request per renewal instead of
   * client-go's two (under `--qps 5` and a 4 s Lease, the reads and writes
   * of renewals took half the process's budget). The write's
   * resourceVersion precondition still refuses it if anyone else wrote the
   * Lease since; the round after a failure reads it again.
   */
  private async tryAcquireOrRenew(): Promise<number> {
    const written = this.leading !== undefined ? this.lastWritten : undefined;
    this.lastWritten = undefined;
    const current = written ?? (await this.o.store.get());
    if (this.stopped) return this.retryPeriodMs;
    const now = this.o.clock.now();
    this.observation = observeLease(this.observation, current?.spec, now);
    const decision = decideLeaderElection({
      identity: this.o.identity,
      now,
      leaseDurationSeconds: this.o.leaseDurationSeconds,
      lease: current?.spec,
      observation: this.observation,
      leading: this.leading ? { lastRenewMs: this.leading.lastRenewMs, renewDeadlineMs: this.renewDeadlineMs } : undefined,
    });
    switch (decision.action) {
      case 'lost':
        this.lose(decision.reason);
        return this.retryPeriodMs;
      case 'wait-until':
        if (decision.holderIdentity !== this.lastHolder) {
          this.lastHolder = decision.holderIdentity;
          this.o.logger.info({ holder: decision.holderIdentity }, 'another replica leads; standing by');
        }
        // Poll at the retry period (a release shows at once), never later than the expiry.
        return Math.max(0, Math.min(this.retryPeriodMs, decision.atMs - now));
      case 'acquire':
      case 'renew': {
        // The term is counted from before the write is sent: the server may store it at any moment after.
        const sentMono = this.monotonicNow();
        const resourceVersion =
          decision.action === 'acquire' && decision.create
            ? await this.o.store.create(decision.lease)
            : await this.o.store.update(decision.lease, current?.resourceVersion ?? '');
        if (this.stopped) return this.retryPeriodMs;
        if (resourceVersion !== undefined) this.lastWritten = { spec: decision.lease, resourceVersion };
        // The renewal counts from before the request: the server may have
        // stored it at any moment after `now`.
        this.renewed(now, sentMono);
        if (decision.action === 'acquire') {
          this.o.logger.info(
            { identity: this.o.identity, transitions: decision.lease.leaseTransitions },
            'acquired the leader election Lease',
          );
          this.o.onStartedLeading();
        }
        return this.retryPeriodMs;
      }
    }
  }

  private renewed(atMs: number, sentMono: number): void {
    this.leading = { lastRenewMs: atMs, heldUntilMono: sentMono + this.renewDeadlineMs };
    this.watchdog?.();
    this.watchdog = this.o.clock.setTimeout(() => {
      if (this.leading && this.leading.lastRenewMs === atMs)
        this.lose(`not renewed within the renew deadline of ${this.renewDeadlineMs} ms`);
    }, this.renewDeadlineMs);
  }

  private lose(reason: string): void {
    if (!this.leading || this.stopped) return;
    this.leading = undefined;
    this.watchdog?.();
    this.o.logger.warn({ identity: this.o.identity, reason }, 'lost the leader election Lease');
    this.o.onStoppedLeading(reason);
  }
}
