/**
 * The pure half of Lease-based leader election (coordination.k8s.io/v1),
 * following client-go's tools/leaderelection tryAcquireOrRenew and release.
 * The I/O loop reads the Lease, calls `observeLease` and
 * `decideLeaderElection`, and writes the returned spec with the Lease's
 * resourceVersion so that two candidates can never both succeed.
 *
 * Expiry is judged as client-go judges it: from the moment *this* replica
 * saw the Lease change (its own clock), never from the renewTime another
 * replica wrote with a clock that may be skewed. A holder is thus given a
 * full lease duration after its last visible renewal, whatever the clocks say.
 */
import { DateTime } from 'luxon';

/** The fields of a Lease's spec that leader election reads and writes. */
export interface LeaseSpec {
  holderIdentity?: string | undefined;
  leaseDurationSeconds?: number | undefined;
  /** MicroTime: RFC 3339 with microseconds, "2026-11-21T12:00:00.000000Z". */
  acquireTime?: string | undefined;
  /** MicroTime. */
  renewTime?: string | undefined;
  leaseTransitions?: number | undefined;
}

/** When this replica first saw the Lease in its current state. */
export interface LeaseObservation {
  /** The observed spec, as a comparable string. */
  record: string;
  /** Epoch ms, this replica's clock. */
  atMs: number;
}

export interface LeaderElectionInput {
  identity: string;
  now: number;
  /** Duration this replica writes when it acquires or renews. */
  leaseDurationSeconds: number;
  /** The current Lease spec; undefined when the Lease does not exist yet. */
  lease: LeaseSpec | undefined;
  /** From `observeLease` for this same `lease`; undefined counts as "first seen now". */
  observation: LeaseObservation | undefined;
  /**
   * Present while this replica believes it leads: when it last renewed
   * successfully, and how long it may go without renewing before it must
   * stop (client-go's RenewDeadline, shorter than the lease duration).
   */
  leading?: { lastRenewMs: number; renewDeadlineMs: number } | undefined;
}

export type LeaderElectionDecision =
  /** Take the lease: create it (`create`) or update it with this spec. */
  | { action: 'acquire'; lease: LeaseSpec; create: boolean }
  /** Already the holder: update it with this spec. */
  | { action: 'renew'; lease: LeaseSpec }
  /** Someone else holds a valid lease: try again at `atMs`. */
  | { action: 'wait-until'; atMs: number; holderIdentity: string }
  /** This replica led but must stop now; it may compete again on the next round. */
  | { action: 'lost'; reason: string };

/**
 * Epoch milliseconds as a Kubernetes MicroTime, "2026-11-21T12:00:00.000000Z";
 * the microsecond digits come from the fraction of a millisecond.
 */
export function formatMicroTime(ms: number): string {
  const wholeMs = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - wholeMs) * 1000));
  const time = DateTime.fromMillis(wholeMs, { zone: 'utc' });
  if (!time.isValid) throw new RangeError(`cannot format ${ms} as a MicroTime`);
  return `${time.toFormat("yyyy-LL-dd'T'HH:mm:ss.SSS")}${String(micros).padStart(3, '0')}Z`;
}

/** The Lease spec as a comparable string, fields in a fixed order. */
function recordOf(lease: LeaseSpec | undefined): string {
  if (lease === undefined) return '';
  return JSON.stringify([lease.holderIdentity, lease.leaseDurationSeconds, lease.acquireTime, lease.renewTime, lease.leaseTransitions]);
}

/**
 * Updates the observation after reading the Lease: unchanged when the Lease
 * is as last seen (so its holder's time keeps running out), restarted at
 * `now` when anything in it changed (the holder renewed, or someone else took it).
 */
export function observeLease(previous: LeaseObservation | undefined, lease: LeaseSpec | undefined, now: number): LeaseObservation {
  const record = recordOf(lease);
  return previous !== undefined && previous.record === record ? previous : { record, atMs: now };
}

/**
 * The duration to judge a Lease by: its own, when it is a positive integer;
 * otherwise ours, so an unreadable value makes us wait rather than take over.
 */
function effectiveDurationSeconds(lease: LeaseSpec, fallbackSeconds: number): number {
  const own = lease.leaseDurationSeconds;
  return own !== undefined && Number.isInteger(own) && own > 0 ? own : fallbackSeconds;
}

function transitionsOf(lease: LeaseSpec): number {
  const transitions = lease.leaseTransitions;
  return transitions !== undefined && Number.isInteger(transitions) && transitions >= 0 ? transitions : 0;
}

/**
 * One round of leader election:
 * - leading, and the last renewal is older than the renew deadline -> `lost`;
 * - leading, and the Lease names someone else -> `lost`;
 * - no Lease -> `acquire` (create, 0 transitions);
 * - the Lease names us -> `renew` (acquireTime and transitions kept);
 * - the Lease names someone else and their time is not up -> `wait-until`
 *   the moment it will be (observed + their lease duration);
 * - the Lease is free (empty holder) or expired -> `acquire` (transitions + 1).
 */
export function decideLeaderElection(input: LeaderElectionInput): LeaderElectionDecision {
  const { identity, now, lease, leading } = input;
  if (!(Number.isInteger(input.leaseDurationSeconds) && input.leaseDurationSeconds > 0)) {
    throw new RangeError(`leaseDurationSeconds must be a positive integer, got ${input.leaseDurationSeconds}`);
  }
  if (identity === '') throw new RangeError('leader election needs a non-empty identity');

  if (leading !== undefined && now - leading.lastRenewMs > leading.renewDeadlineMs) {
    return {
      action: 'lost',
      reason: `not renewed for ${now - leading.lastRenewMs} ms, past the renew deadline of ${leading.renewDeadlineMs} ms`,
    };
  }

  const nowMicro = formatMicroTime(now);
  if (lease === undefined) {
    // A leader whose Lease was deleted lost it; by the next round it may create it anew.
    if (leading !== undefined) return { action: 'lost', reason: 'the Lease was deleted' };
    return {
      action: 'acquire',
      create: true,
      lease: {
        holderIdentity: identity,
        leaseDurationSeconds: input.leaseDurationSeconds,
        acquireTime: nowMicro,
        renewTime: nowMicro,
        leaseTransitions: 0,
      },
    };
  }

  const holder = lease.holderIdentity ?? '';
  if (holder === identity) {
    return {
      action: 'renew',
      lease: {
        holderIdentity: identity,
        leaseDurationSeconds: input.leaseDurationSeconds,
        acquireTime: lease.acquireTime ?? nowMicro,
        renewTime: nowMicro,
        leaseTransitions: transitionsOf(lease),
      },
    };
  }

  if (leading !== undefined) {
    return { action: 'lost', reason: holder === '' ? 'the Lease was released' : `the Lease is held by ${holder}` };
  }

  if (holder !== '') {
    const observedAtMs = input.observation?.record === recordOf(lease) ? input.observation.atMs : now;
    const expiresAtMs = observedAtMs + effectiveDurationSeconds(lease, input.leaseDurationSeconds) * 1000;
    if (now < expiresAtMs) return { action: 'wait-until', atMs: expiresAtMs, holderIdentity: holder };
  }

  return {
    action: 'acquire',
    create: false,
    lease: {
      holderIdentity: identity,
      leaseDurationSeconds: input.leaseDurationSeconds,
      acquireTime: nowMicro,
      renewTime: nowMicro,
      leaseTransitions: transitionsOf(lease) + 1,
    },
  };
}

/**
 * The spec that gives the Lease up on a clean shutdown, so another replica
 * takes over at once instead of after a lease duration (client-go's
 * ReleaseOnCancel). Undefined when we do not hold it: never release another's lease.
 */
export function releaseLease(lease: LeaseSpec | undefined, identity: string, now: number): LeaseSpec | undefined {
  if (lease === undefined || identity === '' || lease.holderIdentity !== identity) return undefined;
  const nowMicro = formatMicroTime(now);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: nowMicro,
    renewTime: nowMicro,
    leaseTransitions: transitionsOf(lease),
  };
}
