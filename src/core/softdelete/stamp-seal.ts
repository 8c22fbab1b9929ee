/**
 * A countdown stamp counts only when this operator wrote it. The stamp
 * (`smith.atlassian.com/deletionTimestamp`) is an annotation anyone who may
 * patch the object can write; trusted as it stood, a stamp backdated by hand
 * while the operator was down made an object that then left its Bundle (or
 * whose Bundle was deleted) go at once, its deletionDelay skipped. So every
 * stamp the operator writes carries `smith.atlassian.com/stamp-proof`, an
 * HMAC over the object's uid and the stamp with the operator's release key,
 * and a stamp without a proof that checks is read as no stamp: the countdown
 * starts (again) from now. That errs one way only: a countdown written by
 * Smith, by a version before proofs, or by hand, starts over, never ends
 * early. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Annotations } from '../../api/names.js';

const STAMP_PROOF_VERSION = 'v1';

export interface StampSeal {
  /** The proof to write beside a stamp on the object with this uid. */
  sign(uid: string, deletionTimestamp: string): string;
  /** Whether `proof` is this operator's for that uid and stamp. */
  verify(uid: string, deletionTimestamp: string, proof: string | undefined): boolean;
}

function mac(key: Uint8Array, uid: string, deletionTimestamp: string): Buffer {
  // 'stamp' keeps these MACs apart from release proofs made with the same key.
  return createHmac('sha256', key).update(JSON.stringify(['stamp', STAMP_PROOF_VERSION, uid, deletionTimestamp])).digest();
}

export function stampSeal(key: Uint8Array): StampSeal {
  return {
    sign: (uid, deletionTimestamp) => `${STAMP_PROOF_VERSION}:${mac(key, uid, deletionTimestamp).toString('base64url')}`,
    verify: (uid, deletionTimestamp, proof) => {
      const [version, encoded] = (proof ?? '').split(':', 2);
      if (version !== STAMP_PROOF_VERSION || encoded === undefined) return false;
      const given = Buffer.from(encoded, 'base64url');
      const expected = mac(key, uid, deletionTimestamp);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/**
 * The annotations a countdown decision reads: as they are when the stamp is
 * proven (or there is none, or no seal to check with), else without the
 * stamp (and without an approval given for it), so the countdown starts now.
 */
export function withProvenStamp(annotations: Readonly<Record<string, string>> | undefined, uid: string | undefined, seal: StampSeal | undefined): Readonly<Record<string, string>> | undefined {
  const stamp = annotations?.[Annotations.deletionTimestamp];
  if (annotations === undefined || stamp === undefined || seal === undefined) return annotations;
  if (uid !== undefined && seal.verify(uid, stamp, annotations[Annotations.stampProof])) return annotations;
  const { [Annotations.deletionTimestamp]: _stamp, [Annotations.deletionApproved]: _approval, ...rest } = annotations;
  return rest;
}
