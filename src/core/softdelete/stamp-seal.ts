/**
 * A countdown stamp counts only when this operator wrote it, and only under
 * the rules it was written under. The stamp
 * (`smith.atlassian.com/deletionTimestamp`) and the deletion rules beside it
 * are annotations anyone who may patch the object can write. Trusted as they
 * stood, a stamp backdated by hand while the operator was down made an object
 * that then left its Bundle go at once, and a deletionDelay shortened by hand
 * on an object counting down (1h to 1s) or a deletionPolicy Approve
 * overwritten with Delete ended its countdown within seconds. So every stamp
 * the operator writes carries `smith.atlassian.com/stamp-proof`: an HMAC,
 * with the operator's release key, over the object's uid, the stamp and the
 * rules the countdown started under (delay, policy, gate), which the proof
 * also carries in clear. A stamp without a proof that checks is read as no
 * stamp: the countdown starts (again) from now. A proven stamp's rules are a
 * floor (stricterRules): an edit can lengthen the countdown or add a gate,
 * never shorten or loosen it. Both err one way only: a countdown ends later,
 * never earlier. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Annotations, DELETE_WHEN_GATES, DELETION_POLICIES } from '../../api/names.js';
import { rulesOfCountdown, type CountdownRules, type DeletionRules } from './rules.js';

/** v1 (before this round): uid and stamp only, no rules; still read, without a floor. */
const V1 = 'v1';
const V2 = 'v2';
const NO_GATE = '-';

export interface StampSeal {
  /** The proof to write beside a stamp on the object with this uid, for a countdown started under `rules`. */
  sign(uid: string, deletionTimestamp: string, rules: CountdownRules): string;
  /**
   * Whether `proof` is this operator's for that uid and stamp: undefined when
   * it is not; else the rules it seals (none for a v1 proof).
   */
  open(uid: string, deletionTimestamp: string, proof: string | undefined): { rules?: CountdownRules } | undefined;
}

function mac(key: Uint8Array, fields: readonly (string | number)[]): Buffer {
  // 'stamp' keeps these MACs apart from release proofs made with the same key.
  return createHmac('sha256', key).update(JSON.stringify(['stamp', ...fields])).digest();
}

function equalMac(encoded: string | undefined, expected: Buffer): boolean {
  if (encoded === undefined) return false;
  const given = Buffer.from(encoded, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const isOneOf = <T extends string>(values: readonly T[], text: string | undefined): text is T => text !== undefined && (values as readonly string[]).includes(text);

/** The sealed fields of a v2 proof, or undefined when they are not what sign writes. */
function readRules(delayText: string | undefined, policy: string | undefined, gate: string | undefined): CountdownRules | undefined {
  if (delayText === undefined || !/^\d{1,16}$/.test(delayText) || !isOneOf(DELETION_POLICIES, policy)) return undefined;
  if (gate !== NO_GATE && !isOneOf(DELETE_WHEN_GATES, gate)) return undefined;
  return { delayMs: Number(delayText), policy, ...(gate !== NO_GATE && gate !== undefined ? { deleteWhen: gate } : {}) };
}

export function stampSeal(key: Uint8Array): StampSeal {
  const v2Fields = (uid: string, stamp: string, r: CountdownRules) => [V2, uid, stamp, r.delayMs, r.policy, r.deleteWhen ?? NO_GATE];
  return {
    sign: (uid, deletionTimestamp, rules) =>
      [V2, String(rules.delayMs), rules.policy, rules.deleteWhen ?? NO_GATE, mac(key, v2Fields(uid, deletionTimestamp, rules)).toString('base64url')].join(':'),
    open: (uid, deletionTimestamp, proof) => {
      const parts = (proof ?? '').split(':');
      if (parts[0] === V1 && parts.length === 2) return equalMac(parts[1], mac(key, [V1, uid, deletionTimestamp])) ? {} : undefined;
      if (parts[0] !== V2 || parts.length !== 5) return undefined;
      const rules = readRules(parts[1], parts[2], parts[3]);
      if (rules === undefined) return undefined;
      return equalMac(parts[4], mac(key, v2Fields(uid, deletionTimestamp, rules))) ? { rules } : undefined;
    },
  };
}

/** What a countdown decision reads of an object: its annotations, and the rules its deletion may not be looser than. */
export interface CountdownReading {
  annotations: Readonly<Record<string, string>> | undefined;
  floor?: DeletionRules;
}

/**
 * The annotations a countdown decision reads, with the floor its proven
 * stamp seals: as they are when the stamp is proven (or there is none, or no
 * seal to check with), else without the stamp (and without an approval given
 * for it), so the countdown starts now.
 */
export function provenCountdown(annotations: Readonly<Record<string, string>> | undefined, uid: string | undefined, seal: StampSeal | undefined): CountdownReading {
  const stamp = annotations?.[Annotations.deletionTimestamp];
  if (annotations === undefined || stamp === undefined || seal === undefined) return { annotations };
  const opened = uid === undefined ? undefined : seal.open(uid, stamp, annotations[Annotations.stampProof]);
  if (opened !== undefined) return opened.rules === undefined ? { annotations } : { annotations, floor: rulesOfCountdown(opened.rules) };
  const { [Annotations.deletionTimestamp]: _stamp, [Annotations.deletionApproved]: _approval, ...rest } = annotations;
  return { annotations: rest };
}
