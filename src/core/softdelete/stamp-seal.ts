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
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { isOneOf, readDeletionRules, rulesOfCountdown, type CountdownRules, type DeletionRules } from './rules.js';

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
  /** The declared-rules proof for an applied object (sealDeclaredRules). */
  sealDeclared(identity: DeclaredIdentity, annotations: Readonly<Record<string, string>> | undefined): string | undefined;
  /** The deletion annotations a declared-rules proof seals (openDeclaredRules). */
  openDeclared(identity: DeclaredIdentity, proof: string | undefined): Record<string, string>;
}

/** The one HMAC of this module: `purpose` ('stamp', 'declared') keeps each kind of proof apart from the others and from release proofs made with the same key. */
function mac(key: Uint8Array, purpose: 'stamp' | 'declared', fields: readonly (string | number)[]): Buffer {
  return createHmac('sha256', key)
    .update(JSON.stringify([purpose, ...fields]))
    .digest();
}

function equalMac(encoded: string | undefined, expected: Buffer): boolean {
  if (encoded === undefined) return false;
  const given = Buffer.from(encoded, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

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
      [
        V2,
        String(rules.delayMs),
        rules.policy,
        rules.deleteWhen ?? NO_GATE,
        mac(key, 'stamp', v2Fields(uid, deletionTimestamp, rules)).toString('base64url'),
      ].join(':'),
    open: (uid, deletionTimestamp, proof) => {
      const parts = (proof ?? '').split(':');
      if (parts[0] === V1 && parts.length === 2)
        return equalMac(parts[1], mac(key, 'stamp', [V1, uid, deletionTimestamp])) ? {} : undefined;
      if (parts[0] !== V2 || parts.length !== 5) return undefined;
      const rules = readRules(parts[1], parts[2], parts[3]);
      if (rules === undefined) return undefined;
      return equalMac(parts[4], mac(key, 'stamp', v2Fields(uid, deletionTimestamp, rules))) ? { rules } : undefined;
    },
    sealDeclared: (identity, annotations) => sealDeclaredRules(key, identity, annotations),
    openDeclared: (identity, proof) => openDeclaredRules(key, identity, proof),
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
export function provenCountdown(
  annotations: Readonly<Record<string, string>> | undefined,
  uid: string | undefined,
  seal: StampSeal | undefined,
): CountdownReading {
  const stamp = annotations?.[Annotations.deletionTimestamp];
  if (annotations === undefined || stamp === undefined || seal === undefined) return { annotations };
  const opened = uid === undefined ? undefined : seal.open(uid, stamp, annotations[Annotations.stampProof]);
  if (opened !== undefined) return opened.rules === undefined ? { annotations } : { annotations, floor: rulesOfCountdown(opened.rules) };
  const { [Annotations.deletionTimestamp]: _stamp, [Annotations.deletionApproved]: _approval, ...rest } = annotations;
  return { annotations: rest };
}

/**
 * The floor an applied object's declared-rules proof gives: the deletion
 * annotations it seals, read over the Bundle's defaults (which alone are the
 * floor when the proof is missing or does not check). Undefined without a
 * seal, or when what it seals cannot be read (never the case for a proof
 * this operator wrote: it applies only readable rules).
 */
export function declaredFloor(
  annotations: Readonly<Record<string, string>> | undefined,
  identity: DeclaredIdentity,
  defaults: DeletionDefaults | undefined,
  seal: StampSeal | undefined,
): DeletionRules | undefined {
  if (seal === undefined) return undefined;
  const reading = readDeletionRules(seal.openDeclared(identity, annotations?.[Annotations.declaredRules]), defaults);
  return reading.ok ? reading.rules : undefined;
}

/** The deletion annotations a manifest may set, in the order a declared-rules proof carries them. */
const DECLARED_RULE_ANNOTATIONS = [Annotations.deletionDelay, Annotations.deletionPolicy, Annotations.deleteWhen] as const;
const DECLARED_VERSION = 'd1';

/** An object's identity for its declared-rules proof: group and kind (not the version: a CRD may serve it at another), namespace, name. */
export interface DeclaredIdentity {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * The rules a manifest declares, sealed onto the applied object: its
 * deletion annotations (absent ones included, as '-'), each URI-encoded, then
 * an HMAC over them and the object's identity. Undefined when the manifest
 * declares none (nothing to seal; the Bundle's defaults are the floor then).
 */
function sealDeclaredRules(
  key: Uint8Array,
  identity: DeclaredIdentity,
  annotations: Readonly<Record<string, string>> | undefined,
): string | undefined {
  const values = DECLARED_RULE_ANNOTATIONS.map((name) => annotations?.[name]);
  if (values.every((v) => v === undefined)) return undefined;
  const fields = values.map((v) => (v === undefined ? NO_GATE : encodeURIComponent(v)));
  return [DECLARED_VERSION, ...fields, declaredMac(key, identity, fields).toString('base64url')].join(':');
}

/**
 * Whether `proof` is a declared-rules proof of exactly these annotations'
 * rules, read in clear and not checked (no key): what `bundlesmith diff`
 * needs to build the manifest the operator would apply, proof included,
 * when the rules have not changed.
 */
export function declaresSameRules(proof: string | undefined, annotations: Readonly<Record<string, string>> | undefined): boolean {
  const parts = (proof ?? '').split(':');
  if (parts[0] !== DECLARED_VERSION || parts.length !== DECLARED_RULE_ANNOTATIONS.length + 2) return false;
  return DECLARED_RULE_ANNOTATIONS.every((name, i) => {
    const value = annotations?.[name];
    return parts[i + 1] === (value === undefined ? NO_GATE : encodeURIComponent(value));
  });
}

function declaredMac(key: Uint8Array, identity: DeclaredIdentity, fields: readonly string[]): Buffer {
  return mac(key, 'declared', [DECLARED_VERSION, identity.group, identity.kind, identity.namespace, identity.name, ...fields]);
}

/**
 * The deletion annotations a declared-rules proof seals for this object:
 * empty when there is no proof or it does not check (a manifest that
 * declares nothing, an object applied before proofs, a proof edited or
 * copied by hand), so the floor is then the Bundle's defaults alone.
 */
function openDeclaredRules(key: Uint8Array, identity: DeclaredIdentity, proof: string | undefined): Record<string, string> {
  const parts = (proof ?? '').split(':');
  if (parts[0] !== DECLARED_VERSION || parts.length !== DECLARED_RULE_ANNOTATIONS.length + 2) return {};
  const fields = parts.slice(1, -1);
  if (!equalMac(parts.at(-1), declaredMac(key, identity, fields))) return {};
  const declared: Record<string, string> = {};
  DECLARED_RULE_ANNOTATIONS.forEach((name, i) => {
    const field = fields[i];
    if (field !== undefined && field !== NO_GATE) declared[name] = decodeURIComponent(field);
  });
  return declared;
}
