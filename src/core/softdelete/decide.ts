/**
 * The soft-delete decision (Smith's docs/design/soft-deletes.md): what to do
 * with a live object owned by a Bundle, given whether the Bundle still lists
 * it and the object's annotations.
 *
 * Pure: `now` is passed in, nothing reads the clock. The one rule that shapes
 * every branch is that nothing is deleted on a value that could not be read:
 * an unreadable delay keeps the object (and says why), an unreadable stamp
 * restarts the countdown (which can only delete later, never earlier).
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { Annotations } from '../../api/names.js';
import { formatGoDuration } from '../duration.js';
import { LATEST_RFC3339_MS, formatRfc3339, parseRfc3339 } from '../rfc3339.js';
import { isGated, readDeletionRules, stricterRules, type CountdownRules, type DeletionRules } from './rules.js';

export interface SoftDeleteInput {
  /** Whether the Bundle's spec still lists the object. */
  inSpec: boolean;
  /** The live object's annotations. */
  annotations: Readonly<Record<string, string>> | undefined;
  /**
   * Epoch milliseconds: the time expiry is decided on. Callers pass a lower
   * bound of the API server's clock, so an object is never deleted before
   * stamp + delay by the server's time, whatever the local clock says.
   */
  now: number;
  /**
   * The time a new countdown stamp is written with (epoch ms); defaults to
   * `now`. Callers pass an upper bound of the API server's clock: a stamp
   * that is late can only make the countdown longer, never shorter.
   */
  stampAt?: number;
  /** The Bundle's spec.deletionDefaults; the object's own annotations override each setting. */
  defaults?: DeletionDefaults | undefined;
  /**
   * Rules the object's deletion may not be looser than (stricterRules): the
   * ones sealed with its countdown stamp when it began, and in the finalizer
   * the ones its manifest declares. An edit of the live object can put its
   * deletion off, never bring it forward.
   */
  floor?: DeletionRules | undefined;
  /**
   * Whether every resource of the Bundle is Ready with the spec that dropped
   * the object (core/bundle/plan-input.ts isReadyWithCurrentSpec): a deleteWhen
   * BundleReady gate opens on it. Absent means not known to be Ready, and
   * the gate stays shut.
   */
  bundleReady?: boolean;
}

/** What a due deletion waits for besides time. */
export type DeletionGate = 'Approval' | 'BundleReady';

export type SoftDeleteDecision =
  | { action: 'keep' }
  /** In spec but carries the deletionTimestamp annotation: remove it. */
  | { action: 'cancel' }
  /** Not in spec, no deletionDelay annotation: delete now. */
  | { action: 'delete' }
  /**
   * Start the countdown: write `deletionTimestamp` on the object, recheck at
   * `deleteAtMs`. `gates`: what will still hold it once the delay is over.
   */
  | { action: 'mark'; deletionTimestamp: string; deleteAfter: string; deleteAtMs: number; gates?: DeletionGate[]; sealed: CountdownRules }
  /** Countdown running: recheck at `deleteAtMs`; `gates` as for mark. */
  | { action: 'wait'; deletionTimestamp: string; deleteAfter: string; deleteAtMs: number; gates?: DeletionGate[] }
  /** deletionPolicy Orphan: released for good (kept): its references go, the user's stay; never deleted. */
  | { action: 'release' }
  /** Countdown over, but a gate is shut: an approval missing, or the Bundle not Ready. Kept; decided again when either changes. */
  | { action: 'await'; waitingFor: DeletionGate; deletionTimestamp: string; deleteAfter: string; message: string }
  /** Countdown over: delete now. */
  | { action: 'expired'; deletionTimestamp: string; deleteAfter: string }
  /** The annotations cannot be read; the object is kept. `message` names the bad value. */
  | { action: 'invalid'; message: string };

interface Countdown {
  deletionTimestamp: string;
  deleteAfter: string;
  deleteAtMs: number;
}

/**
 * The countdown from `stampMs`. Rounded up to whole milliseconds so a
 * sub-millisecond delay can never make the deletion early. Undefined when the
 * deletion instant is beyond what RFC 3339 can name.
 */
function countdownFrom(stampText: string, stampMs: number, delayMs: number): Countdown | undefined {
  const deleteAtMs = Math.ceil(stampMs + delayMs);
  if (deleteAtMs > LATEST_RFC3339_MS) return undefined;
  return { deletionTimestamp: stampText, deleteAfter: formatRfc3339(deleteAtMs), deleteAtMs };
}

/** The gates that hold a due deletion until they open, in the order they are checked. */
function gatesOf(rules: DeletionRules): DeletionGate[] {
  return [
    ...(rules.policy === 'Approve' ? (['Approval'] as const) : []),
    ...(rules.deleteWhen === 'BundleReady' ? (['BundleReady'] as const) : []),
  ];
}

const withGates = (gates: DeletionGate[]): { gates?: DeletionGate[] } => (gates.length > 0 ? { gates } : {});

/** How far ahead of the server's clock an approval may be dated and still count (an approver's clock running ahead). */
export const APPROVAL_AHEAD_MS = 60_000;

const GATE_CONDITIONS: Record<DeletionGate, string> = { Approval: 'once approved', BundleReady: "once its Bundle's resources are Ready" };

/** "after 2026-11-21T12:00:00.000Z", and what else it waits for: "..., once approved". For events, the CLI and messages. */
export function deletedAfterWords(deleteAfter: string, gates: readonly DeletionGate[] = []): string {
  return [`after ${deleteAfter}`, ...gates.map((g) => GATE_CONDITIONS[g])].join(', ');
}

/**
 * Starts (or restarts) the countdown at `now`, rounded up to the stamp's
 * millisecond precision so it never predates `now`. `sealed`: the rules it
 * starts under, which its stamp's proof will carry.
 */
function markAt(now: number, delayMs: number, rules: DeletionRules): SoftDeleteDecision {
  const stampMs = Math.ceil(now);
  const stampText = formatRfc3339(stampMs);
  const countdown = countdownFrom(stampText, stampMs, delayMs);
  if (countdown === undefined) return unreachableDeletion(stampText, delayMs);
  // Whole milliseconds, rounded up (a floor may only be later), as the proof writes it.
  const sealed: CountdownRules = {
    delayMs: Math.ceil(delayMs),
    policy: rules.policy,
    ...(rules.deleteWhen !== undefined ? { deleteWhen: rules.deleteWhen } : {}),
  };
  return { action: 'mark', ...countdown, ...withGates(gatesOf(rules)), sealed };
}

function unreachableDeletion(stampText: string, delayMs: number): SoftDeleteDecision {
  return {
    action: 'invalid',
    message: `deletion time ${stampText} + ${formatGoDuration(delayMs)} is after year 9999; the object is kept`,
  };
}

/**
 * Decides what to do about one live object.
 *
 * In spec: `keep`, or `cancel` when a countdown or an approval is on it (the
 * annotations are not validated: the object stays either way, and the
 * Bundle's apply brings it back to the desired state).
 *
 * Out of spec, on the rules of rules.ts (the object's annotations over the
 * Bundle's defaults, made no looser than `floor`):
 * - rules that cannot be read (a bad delay, policy or gate) -> `invalid`;
 * - deletionPolicy Orphan -> `release`;
 * - no delay, no gate and no stamp -> `delete`;
 * - a stamp but no delay and no gate (someone removed the delay after the
 *   countdown began) -> `invalid`: the delay the user meant is unknown;
 * - no stamp, or a stamp that is not RFC 3339 -> `mark` with `now`
 *   (restarting the countdown can only delete later); an object with a gate
 *   and no delay counts down from zero, so it is stamped first;
 * - stamp + delay still ahead -> `wait` (this also covers stamps in the
 *   future, from clock skew or hand-written: the countdown runs from the stamp);
 * - stamp + delay reached: `await` while a gate is shut (deletionPolicy
 *   Approve without an approval later than the stamp; deleteWhen
 *   BundleReady while the Bundle is not Ready), else `expired`.
 *
 * A zero delay ("0", "0s") is valid: the first pass still returns `mark`, so
 * the stamp is written and visible, and the next pass goes on from there.
 */
export function decideSoftDelete(input: SoftDeleteInput): SoftDeleteDecision {
  const annotations = input.annotations ?? {};
  const stampText = annotations[Annotations.deletionTimestamp];

  if (input.inSpec)
    return stampText === undefined && annotations[Annotations.deletionApproved] === undefined ? { action: 'keep' } : { action: 'cancel' };

  const reading = readDeletionRules(annotations, input.defaults);
  if (!reading.ok) return { action: 'invalid', message: reading.message };
  const own = reading.rules;
  const rules = stricterRules(own, input.floor);
  if (rules.policy === 'Orphan') return { action: 'release' };

  const delayMs = rules.delayMs ?? (isGated(rules) ? 0 : undefined);
  // A stamp on an object whose own rules have no delay and no gate (taken off by hand after the countdown began): what
  // the user meant is unknown, and the object is kept, even where a floor knows the delay (a floor only ever keeps
  // longer). Where the floor has a gate, the gate holds it instead (an approval is still asked for).
  const delayTakenOff = stampText !== undefined && own.delayMs === undefined && !isGated(own) && !isGated(rules);
  if (delayMs === undefined || delayTakenOff) {
    if (stampText === undefined) return { action: 'delete' };
    return {
      action: 'invalid',
      message:
        `annotation ${Annotations.deletionTimestamp} ${JSON.stringify(stampText)} is set but ` +
        `${Annotations.deletionDelay} is missing; the object is kept (delete it by hand to force deletion)`,
    };
  }

  const stampMs = stampText === undefined ? undefined : parseRfc3339(stampText);
  if (stampText === undefined || stampMs === undefined) return markAt(Math.max(input.now, input.stampAt ?? input.now), delayMs, rules);

  // The stamp is reported as written, so status shows the annotation's own value.
  const countdown = countdownFrom(stampText, stampMs, delayMs);
  if (countdown === undefined) return unreachableDeletion(stampText, delayMs);
  if (input.now < countdown.deleteAtMs) return { action: 'wait', ...countdown, ...withGates(gatesOf(rules)) };
  const times = { deletionTimestamp: countdown.deletionTimestamp, deleteAfter: countdown.deleteAfter };

  if (rules.policy === 'Approve') {
    const approvedText = annotations[Annotations.deletionApproved];
    const approvedMs = approvedText === undefined ? undefined : parseRfc3339(approvedText);
    if (approvedText !== undefined && approvedMs === undefined) {
      return {
        action: 'invalid',
        message: `annotation ${Annotations.deletionApproved} ${JSON.stringify(approvedText)} is not an RFC 3339 time; the object is kept until it is approved`,
      };
    }
    // An approval counts only for a countdown that began before it, and not when it is dated well ahead of the server's
    // clock (written ahead of a countdown that had not begun yet, say, dated 2099): an approver's clock may be a little
    // ahead, no more than APPROVAL_AHEAD_MS.
    const ahead = approvedMs !== undefined && approvedMs > input.now + APPROVAL_AHEAD_MS;
    if (approvedMs === undefined || approvedMs <= stampMs || ahead) {
      const stale =
        approvedText === undefined
          ? ''
          : ahead
            ? ` (the approval ${approvedText} is dated ahead of the server's clock and does not count)`
            : ` (the approval ${approvedText} predates the countdown and does not count)`;
      return {
        action: 'await',
        waitingFor: 'Approval',
        ...times,
        message: `due since ${countdown.deleteAfter}, waits for approval${stale}: bundlesmith approve, or annotation ${Annotations.deletionApproved} with a later time`,
      };
    }
  }
  if (rules.deleteWhen === 'BundleReady' && input.bundleReady !== true) {
    return {
      action: 'await',
      waitingFor: 'BundleReady',
      ...times,
      message: `due since ${countdown.deleteAfter}, waits for its Bundle to be Ready with the spec that dropped it`,
    };
  }
  return { action: 'expired', ...times };
}

/** What a Bundle's status reports about one object whose deletion is counting down. */
export interface PendingDeletionTimes {
  deletionTimestamp: string;
  deleteAfter: string;
  /** What the deletion waits for now; absent once it is due and open (the delete is on its way). */
  waitingFor?: 'Delay' | DeletionGate;
}

/**
 * The status entry for a decision: present for `mark` and `wait` (the object
 * is still there, counting down), `await` (due, a gate shut) and `expired`
 * (reported until the delete has gone through). Undefined for every other
 * action.
 */
export function pendingDeletionOf(decision: SoftDeleteDecision): PendingDeletionTimes | undefined {
  switch (decision.action) {
    case 'mark':
    case 'wait':
      return { deletionTimestamp: decision.deletionTimestamp, deleteAfter: decision.deleteAfter, waitingFor: 'Delay' };
    case 'await':
      return { deletionTimestamp: decision.deletionTimestamp, deleteAfter: decision.deleteAfter, waitingFor: decision.waitingFor };
    case 'expired':
      return { deletionTimestamp: decision.deletionTimestamp, deleteAfter: decision.deleteAfter };
    default:
      return undefined;
  }
}

/** Whether the decision deletes the object now. */
export function deletesNow(decision: SoftDeleteDecision): boolean {
  return decision.action === 'delete' || decision.action === 'expired';
}
