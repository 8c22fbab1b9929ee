/**
 * What a soft-delete decision reads of one live object: its annotations,
 * with a countdown stamp only when this operator proved it, and the floor
 * its rules may not go below (stricterRules): what its stamp seals, what its
 * manifest declared when applied (over the Bundle's defaults), and any rules
 * the caller adds (the finalizer: the manifest of the Bundle being
 * deleted). Every path that decides a soft delete reads through here, so an
 * edit by hand can put a deletion off and never bring it forward.
 *
 * The proofs on the object bind its identity, not one moment: an earlier
 * copy of its own annotations written back (an old `kubectl get -o yaml`
 * re-applied, a restore) still checks. So the Bundle's status, which only
 * the operator writes, keeps the record that decides over them: the rules
 * each listed object's manifest declares (status.declaredRules) and each
 * countdown's stamp and earliest deletion (status.pendingDeletions,
 * recorded before the stamp is written). A proven stamp the record does not
 * hold, or one earlier than the recorded one, reads as none (the countdown
 * starts again), and the recorded deadline is a floor. Pure.
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import type { PendingDeletion } from '../../api/bundle-status.js';
import { Annotations } from '../../api/names.js';
import { formatGoDuration } from '../duration.js';
import { readDeletionRules, stricterRules, type DeletionRules } from '../softdelete/rules.js';
import { declaredFloor, provenCountdown, type CountdownReading, type DeclaredIdentity, type StampSeal } from '../softdelete/stamp-seal.js';
import { DECLARED_KEYS, declaredIdentityOf, identityKey, type CountdownRecord } from './countdown-record.js';
import type { LiveObject } from './objects.js';

const stricterOf = (a: DeletionRules | undefined, b: DeletionRules | undefined): DeletionRules | undefined =>
  a === undefined ? b : stricterRules(a, b);

/**
 * The deletion annotations an object's declared-rules proof seals: the
 * manifest's own, and a policy the deletion guard protects (Orphan, Approve) it takes from the
 * Bundle's defaults, which the apply writes onto the object too. Sealed, a
 * policy taken off the object by hand is still what the chart's deletion
 * guard reads in the proof (red team 7).
 */
export function declarationToSeal(
  annotations: Readonly<Record<string, string>> | undefined,
  defaults: DeletionDefaults | undefined,
): Record<string, string> {
  const sealed: Record<string, string> = {};
  for (const [, name] of DECLARED_KEYS) {
    const value = annotations?.[name];
    if (value !== undefined) sealed[name] = value;
  }
  const fromDefaults = defaults?.deletionPolicy;
  if (sealed[Annotations.deletionPolicy] === undefined && (fromDefaults === 'Orphan' || fromDefaults === 'Approve'))
    sealed[Annotations.deletionPolicy] = fromDefaults;
  return sealed;
}

export function countdownOf(
  o: LiveObject,
  context: {
    seal: StampSeal | undefined;
    defaults: DeletionDefaults | undefined;
    extra?: DeletionRules | undefined;
    record?: CountdownRecord | undefined;
  },
): CountdownReading {
  const identity = declaredIdentityOf(o);
  const key = identityKey(identity);
  const reading = provenCountdown(o.metadata.annotations, o.metadata.uid, context.seal);
  const recorded = context.record?.pending.get(key);
  // Without a seal (a preview that cannot check proofs) a stamp is read as written, the record only bounding it below.
  const annotations = notBeforeElsewhere(
    stampTheRecordHolds(reading.annotations, recorded, context.seal !== undefined),
    context.record?.elsewhere?.get(key),
  );
  const floor = stricterOf(
    stricterOf(stricterOf(reading.floor, declaredFloorOf(o, identity, key, context)), context.extra),
    recordedFloor(recorded),
  );
  return floor === undefined ? { annotations } : { annotations, floor };
}

/**
 * The floor of what the object's manifest declared, over the Bundle's
 * defaults: the stricter of the record's entry (none: the defaults alone;
 * no record at all: nothing) and the object's own proof (a seal to check
 * it with). An old proof written back cannot bring a
 * deletion forward past the record; a proof the record lost (a pass that
 * wrote status with the object gone from the spec before it was stamped)
 * still holds it back.
 */
function declaredFloorOf(
  o: LiveObject,
  identity: DeclaredIdentity,
  key: string,
  context: { seal: StampSeal | undefined; defaults: DeletionDefaults | undefined; record?: CountdownRecord | undefined },
): DeletionRules | undefined {
  const record = context.record?.declared;
  const recorded = record === undefined ? undefined : readDeletionRules(record.get(key) ?? {}, context.defaults);
  const proven = declaredFloor(o.metadata.annotations, identity, context.defaults, context.seal);
  return stricterOf(recorded?.ok === true ? recorded.rules : undefined, proven);
}

/**
 * A proven stamp counts only with its record: the operator records each
 * countdown in status.pendingDeletions before it stamps the object
 * (pendingRecordedAhead), so a stamp the record does not hold is one the
 * record lost (another status writer cleared it: red team 9) or one written
 * back from an earlier countdown. Such a stamp, and one earlier than the
 * recorded stamp, reads as none, with the approval given for it, as an
 * unproven stamp does: the countdown starts again from now (never earlier
 * than the recorded one, whose deadline stays a floor), and the new stamp
 * written over the old one shows the deletion guard, which reads only the
 * object, that an old approval is older than the countdown. A countdown
 * stamped by a version before the write-ahead starts again once.
 */
function stampTheRecordHolds(
  annotations: Readonly<Record<string, string>> | undefined,
  recorded: Pick<PendingDeletion, 'deletionTimestamp'> | undefined,
  sealed: boolean,
): Readonly<Record<string, string>> | undefined {
  const stamp = annotations?.[Annotations.deletionTimestamp];
  if (annotations === undefined || stamp === undefined || (recorded === undefined && !sealed)) return annotations;
  if (recorded !== undefined) {
    const live = Date.parse(stamp);
    const kept = Date.parse(recorded.deletionTimestamp);
    if (Number.isFinite(kept) && Number.isFinite(live) && live >= kept) return annotations;
  }
  return withoutStamp(annotations);
}

/** A stamp earlier than a countdown another Bundle records for the object reads as none (see CountdownRecord.elsewhere). */
function notBeforeElsewhere(
  annotations: Readonly<Record<string, string>> | undefined,
  later: string | undefined,
): Readonly<Record<string, string>> | undefined {
  const stamp = annotations?.[Annotations.deletionTimestamp];
  if (annotations === undefined || stamp === undefined || later === undefined) return annotations;
  const live = Date.parse(stamp);
  if (Number.isFinite(live) && live >= Date.parse(later)) return annotations;
  return withoutStamp(annotations);
}

/** The rules a recorded countdown implies: its delay (deleteAfter - deletionTimestamp), an approval or readiness it waited for. */
function recordedFloor(
  recorded: Pick<PendingDeletion, 'deletionTimestamp' | 'deleteAfter' | 'waitingFor'> | undefined,
): DeletionRules | undefined {
  if (recorded === undefined) return undefined;
  const start = Date.parse(recorded.deletionTimestamp);
  const after = Date.parse(recorded.deleteAfter);
  if (!Number.isFinite(start) || !Number.isFinite(after)) return undefined;
  const delayMs = Math.max(0, after - start);
  return {
    policy: recorded.waitingFor === 'Approval' ? 'Approve' : 'Delete',
    policyFromDefaults: false,
    delayMs,
    delayText: formatGoDuration(delayMs),
    delayFromDefaults: false,
    deleteWhen: recorded.waitingFor === 'BundleReady' ? 'BundleReady' : undefined,
  };
}

/** The annotations with no countdown: its stamp and the approval given for it go together. */
function withoutStamp(annotations: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const { [Annotations.deletionTimestamp]: _stamp, [Annotations.deletionApproved]: _approval, ...rest } = annotations;
  return rest;
}
