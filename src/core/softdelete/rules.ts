/**
 * How one object may leave the cluster: its deletion rules, read from its
 * own annotations over the Bundle's spec.deletionDefaults. The one reader of
 * the deletionDelay, deletionPolicy and deleteWhen settings, so that the
 * controller, the finalizer, the sweeper and the CLI all see the same rules.
 *
 * A value that cannot be read is never guessed at: the rules come back
 * unreadable and the caller keeps the object.
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { Annotations, DELETE_WHEN_GATES, DELETION_POLICIES, type DeleteWhenGate, type DeletionPolicy } from '../../api/names.js';
import { formatGoDuration, parseGoDuration } from '../duration.js';

export interface DeletionRules {
  policy: DeletionPolicy;
  /** The delay, in ms; undefined when neither the object nor the defaults give one. */
  delayMs: number | undefined;
  /** The delay as written (annotation or default), for the release proof and messages. */
  delayText: string | undefined;
  /** Whether the delay came from spec.deletionDefaults (the finalizer writes it onto a released object). */
  delayFromDefaults: boolean;
  /** Whether the policy came from spec.deletionDefaults. */
  policyFromDefaults: boolean;
  deleteWhen: DeleteWhenGate | undefined;
}

export type DeletionRulesReading = { ok: true; rules: DeletionRules } | { ok: false; message: string };

export type DeletionDelayReading = { ok: true; ms: number } | { ok: false; message: string };

/** Reads a Go duration that names a deletion delay; `source` names where it was written, for the message. */
export function readDelayText(text: string, source: string): DeletionDelayReading {
  if (text === '') return { ok: false, message: `${source} is empty; expected a Go duration such as "24h"` };
  const parsed = parseGoDuration(text);
  if (!parsed.ok) return { ok: false, message: `${source} ${JSON.stringify(text)} is not a Go duration: ${parsed.error}` };
  if (parsed.ms < 0) return { ok: false, message: `${source} ${JSON.stringify(text)} is negative` };
  return { ok: true, ms: parsed.ms };
}

/** Whether `text` is one of `values` (an annotation's value among the names the API accepts). */
export function isOneOf<T extends string>(values: readonly T[], text: string | undefined): text is T {
  return text !== undefined && (values as readonly string[]).includes(text);
}

/**
 * The object's rules: each setting from its own annotation when it has one,
 * else from the Bundle's defaults (absent once the Bundle is gone: a released
 * object carries what it needs), else Delete, no delay, no gate.
 */
export function readDeletionRules(
  annotations: Readonly<Record<string, string>> | undefined,
  defaults: DeletionDefaults | undefined,
): DeletionRulesReading {
  const own = annotations ?? {};
  const policyText = own[Annotations.deletionPolicy];
  if (policyText !== undefined && !isOneOf(DELETION_POLICIES, policyText)) {
    return {
      ok: false,
      message: `annotation ${Annotations.deletionPolicy} ${JSON.stringify(policyText)} is not one of ${DELETION_POLICIES.join(', ')}`,
    };
  }
  const whenText = own[Annotations.deleteWhen];
  if (whenText !== undefined && !isOneOf(DELETE_WHEN_GATES, whenText)) {
    return {
      ok: false,
      message: `annotation ${Annotations.deleteWhen} ${JSON.stringify(whenText)} is not one of ${DELETE_WHEN_GATES.join(', ')}`,
    };
  }
  const ownDelay = own[Annotations.deletionDelay];
  const delayText = ownDelay ?? defaults?.deletionDelay;
  let delayMs: number | undefined;
  if (delayText !== undefined) {
    const delay = readDelayText(
      delayText,
      ownDelay !== undefined ? `annotation ${Annotations.deletionDelay}` : 'spec.deletionDefaults.deletionDelay',
    );
    if (!delay.ok) return { ok: false, message: delay.message };
    delayMs = delay.ms;
  }
  const deleteWhen = whenText ?? defaults?.deleteWhen;
  return {
    ok: true,
    rules: {
      policy: policyText ?? defaults?.deletionPolicy ?? 'Delete',
      delayMs,
      delayText,
      delayFromDefaults: ownDelay === undefined && delayText !== undefined,
      policyFromDefaults: policyText === undefined && defaults?.deletionPolicy !== undefined,
      deleteWhen,
    },
  };
}

/**
 * What the planner says of a listed object whose rules cannot be read (a
 * terminal error on its resource); `bundlesmith validate` says the same.
 */
export function unreadableRulesMessage(message: string): string {
  return `${message}; the object is not applied, and nothing of this Bundle is pruned until it is fixed`;
}

/**
 * Whether an object's deletion waits on something besides time (an approval,
 * the Bundle's readiness): such an object is always stamped first, a zero
 * delay standing in when it has none, so the status and `pending` show
 * where it stands and an approval has a stamp to be later than.
 */
export function isGated(rules: DeletionRules): boolean {
  return rules.policy === 'Approve' || rules.deleteWhen !== undefined;
}

/**
 * The rules a countdown starts under, sealed into its stamp's proof
 * (stamp-seal.ts) so that a later edit of the live object cannot loosen
 * them.
 */
export interface CountdownRules {
  delayMs: number;
  policy: DeletionPolicy;
  deleteWhen?: DeleteWhenGate;
}

/** A countdown's sealed rules as a reading of rules, to be a floor (stricterRules). */
export function rulesOfCountdown(c: CountdownRules): DeletionRules {
  return {
    policy: c.policy,
    delayMs: c.delayMs,
    delayText: formatGoDuration(c.delayMs),
    delayFromDefaults: false,
    policyFromDefaults: false,
    deleteWhen: c.deleteWhen,
  };
}

const POLICY_STRICTNESS: Record<DeletionPolicy, number> = { Delete: 0, Approve: 1, Orphan: 2 };

/**
 * The stricter of two readings of one object's rules: Orphan over Approve
 * over Delete, the longer delay, a gate when either has one. Where the rules
 * can be read from more than one place (the live object and its manifest in
 * the finalizer; the live object and what was sealed with its countdown
 * stamp), the deletion follows the one that keeps the object longer, so an
 * edit by hand can put a deletion off, never bring it forward.
 */
export function stricterRules(a: DeletionRules, b: DeletionRules | undefined): DeletionRules {
  if (b === undefined) return a;
  const policyFrom = POLICY_STRICTNESS[b.policy] > POLICY_STRICTNESS[a.policy] ? b : a;
  const delayFrom = (b.delayMs ?? -1) > (a.delayMs ?? -1) ? b : a;
  const deleteWhen = a.deleteWhen ?? b.deleteWhen;
  return {
    policy: policyFrom.policy,
    policyFromDefaults: policyFrom.policyFromDefaults,
    delayMs: delayFrom.delayMs,
    delayText: delayFrom.delayText,
    delayFromDefaults: delayFrom.delayFromDefaults,
    deleteWhen,
  };
}
