/**
 * Proof that the operator released an object, so that only objects it
 * released are ever swept. The former-bundle label, the countdown
 * annotations and a field manager's name can be written by anyone who may
 * patch the object; a delete decided on them alone would turn a patch right
 * into a delete right. The finalizer therefore signs every release with an
 * HMAC keyed by a Secret in the operator's own namespace (which Bundle
 * authors cannot read), bound to the object's uid and namespace, the Bundle
 * that released it, the countdown stamp and the delay. A proof copied onto
 * another object, or kept while any of those is edited, no longer checks.
 *
 * Pure: the key comes in as bytes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Annotations, Labels } from '../../api/names.js';
import { formerBundleOf } from './former-bundle.js';

/**
 * The proof format written now. v2 binds the deletionPolicy too, so that
 * taking an Approve policy off a released object does not make it deletable
 * without an approval. v3 signs the same facts and says, in the signed
 * message, that every signing of this kind has its record written before it
 * is sent (release-record.ts): a v3 proof without a record is not counted,
 * so a record deleted by hand keeps its object rather than letting an
 * earlier release written back count. v2 and v1 proofs (of earlier versions,
 * some with records, some without) still check, a v1 only on an object
 * without a deletionPolicy annotation; the sweep signs them again as v3 as
 * soon as it sees them (relisted-release.ts recordOlderRelease).
 */
export const RELEASE_PROOF_VERSION = 'v3';

/**
 * Whether a proof is of the kind whose record is always written first (v3
 * and any later version): without its record it does not count. Only v1 and
 * v2 proofs, of earlier versions, may stand without one.
 */
export function signedWithRecord(proof: string): boolean {
  return !proof.startsWith('v1:') && !proof.startsWith('v2:');
}

/** Bytes a release key must have at least. */
export const RELEASE_KEY_MIN_BYTES = 32;

/** What a release proof is bound to. */
export interface ReleaseFacts {
  uid: string;
  namespace: string;
  /** The Bundle that released the object (the former-bundle label). */
  formerBundle: string;
  /** The countdown stamp; empty when the release wrote none (an unreadable delay, which keeps the object anyway). */
  deletionTimestamp: string;
  /** The deletionDelay annotation as written. */
  deletionDelay: string;
  /** The deletionPolicy annotation as written; empty when there is none. */
  deletionPolicy: string;
}

/** Signs releases: the finalizer is handed one, built on the operator's key. */
export type ReleaseSigner = (facts: ReleaseFacts) => string;

function mac(key: Uint8Array, facts: ReleaseFacts, version: string = RELEASE_PROOF_VERSION): Buffer {
  // A JSON array is an unambiguous encoding: no field can run into the next.
  const fields = [version, facts.uid, facts.namespace, facts.formerBundle, facts.deletionTimestamp, facts.deletionDelay];
  const message = JSON.stringify(version === 'v1' ? fields : [...fields, facts.deletionPolicy]);
  return createHmac('sha256', key).update(message).digest();
}

/**
 * The annotation value proving this release: the version, `:` and the HMAC
 * in base64url. `version` other than the current one: only for tests that
 * fabricate a release an earlier version signed (nothing in src passes it).
 */
export function signRelease(key: Uint8Array, facts: ReleaseFacts, version: 'v2' | 'v3' = RELEASE_PROOF_VERSION): string {
  return `${version}:${mac(key, facts, version).toString('base64url')}`;
}

/** The signer for one key. */
export function releaseSigner(key: Uint8Array): ReleaseSigner {
  return (facts) => signRelease(key, facts);
}

export interface ReleasedMeta {
  uid?: string | undefined;
  namespace?: string | undefined;
  labels?: Readonly<Record<string, string>> | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
}

/** The facts a released object states about itself; undefined when it is not a released object at all. */
export function releaseFactsOf(meta: ReleasedMeta): ReleaseFacts | undefined {
  const formerBundle = formerBundleOf(meta);
  const deletionDelay = meta.annotations?.[Annotations.deletionDelay];
  if (formerBundle === undefined || deletionDelay === undefined || meta.uid === undefined) return undefined;
  return {
    uid: meta.uid,
    namespace: meta.namespace ?? '',
    formerBundle,
    deletionDelay,
    deletionTimestamp: meta.annotations?.[Annotations.deletionTimestamp] ?? '',
    deletionPolicy: meta.annotations?.[Annotations.deletionPolicy] ?? '',
  };
}

export type ReleaseProofCheck = { proven: true } | { proven: false; reason: string };

/** Whether the object carries a proof, made with this key, of the release it states. */
export function checkReleaseProof(key: Uint8Array, meta: ReleasedMeta): ReleaseProofCheck {
  const facts = releaseFactsOf(meta);
  if (facts === undefined)
    return { proven: false, reason: `not a released object (it needs the ${Labels.formerBundle} label and a deletionDelay)` };
  const proof = meta.annotations?.[Annotations.releaseProof];
  if (proof === undefined)
    return {
      proven: false,
      reason: `no ${Annotations.releaseProof} annotation: not released by this operator (or released before releases were signed)`,
    };
  const [version, encoded] = proof.split(':', 2);
  const readable = version === RELEASE_PROOF_VERSION || version === 'v2' || (version === 'v1' && facts.deletionPolicy === '');
  if (!readable || version === undefined || encoded === undefined)
    return { proven: false, reason: `${Annotations.releaseProof} is not a proof this operator reads (v1 to ${RELEASE_PROOF_VERSION})` };
  const given = Buffer.from(encoded, 'base64url');
  const expected = mac(key, facts, version);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      proven: false,
      reason: `${Annotations.releaseProof} does not match this object's uid, namespace, former Bundle, stamp, delay and policy`,
    };
  }
  return { proven: true };
}
