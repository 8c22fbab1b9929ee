/**
 * The record of a release's latest signing. A release proof
 * (provenance.ts) binds the object's uid, namespace, former Bundle, stamp,
 * delay and policy, and nothing in it says which signing is the latest: an
 * earlier release written back onto the object (a backup restored, a tool
 * replaying what it saw) checks as well as the current one, and would end
 * the current countdown early, or under looser rules (red teams 27 and 29).
 * So every signing is recorded, before the patch that carries it is sent,
 * where only the operator writes (controllers/softdelete/release-records.ts),
 * and the sweeper counts a release only when the object's proof is the
 * recorded one. The record also says when a release is over for the
 * countdown it carries, or for good:
 *  - signed: the latest signing is `proof`; its stamp counts;
 *  - cancelled: a live Bundle listed the object while it carried `proof`; the
 *    release goes on, but its stamp does not count (the sweep starts a new
 *    countdown when no Bundle lists it), also where the write that takes the
 *    stamp off was refused;
 *  - ended: a Bundle took hold of the object (or tried to): no release of it
 *    is the operator's until a new one is signed.
 *
 * Pure.
 */
import { Annotations, Labels } from '../../api/names.js';
import { jsonPointerSegment, type JsonPatchOperation } from '../bundle/objects.js';
import { signedWithRecord } from './provenance.js';

export type ReleaseRecordState = 'signed' | 'cancelled' | 'ended';

export interface ReleaseRecord {
  state: ReleaseRecordState;
  /** The release proof the record is about ('' for ended). */
  proof: string;
}

const PROOF_PATH = `/metadata/annotations/${jsonPointerSegment(Annotations.releaseProof)}`;

/** The release proof a patch writes (it signs a release); undefined when it signs none. */
export function signedProofOf(patch: readonly JsonPatchOperation[]): string | undefined {
  const op = patch.find((p) => p.path === PROOF_PATH && (p.op === 'add' || p.op === 'replace'));
  return op !== undefined && 'value' in op && typeof op.value === 'string' ? op.value : undefined;
}

/** A record's data as stored; an unreadable one is `ended` (the strictest reading: nothing counts). */
export function parseReleaseRecord(data: unknown): ReleaseRecord {
  const fields = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const { state, proof } = fields;
  if ((state === 'signed' || state === 'cancelled') && typeof proof === 'string' && proof !== '') return { state, proof };
  return { state: 'ended', proof: '' };
}

/** The uid of the object a record is about (its data's `uid`); undefined for a record without one. */
export function recordedUidOf(data: unknown): string | undefined {
  const uid = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).uid : undefined;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

type Meta = { annotations?: Readonly<Record<string, string>> | undefined };

/**
 * Whether the object carries the release the record names (signed or
 * cancelled with this proof): only then may the sweep sign it again (a
 * cancel, a new countdown), since the facts it signs again are then the
 * recorded signing's own. No record: a v2 or v1 proof (an earlier version's,
 * signed before records or its record lost) is judged by its proof alone
 * until the sweep signs it again; a v3 one lost its record (deleted by
 * hand), and is not counted.
 */
export function carriesRecordedRelease(meta: Meta, record: ReleaseRecord | undefined): boolean {
  const proof = meta.annotations?.[Annotations.releaseProof];
  if (record === undefined) return proof === undefined || !signedWithRecord(proof);
  return record.state !== 'ended' && proof !== undefined && proof === record.proof;
}

/**
 * The object as the sweeper reads it against the record of its release:
 * undefined when it does not carry the recorded release (an earlier release
 * written back, or one that ended): kept, never swept. A cancelled release
 * reads without its stamp and any approval given for it, so the sweep
 * starts a new countdown, written on the object.
 */
export function readWithRecord<M extends Meta>(meta: M, record: ReleaseRecord | undefined): M | undefined {
  if (!carriesRecordedRelease(meta, record)) return undefined;
  if (record?.state !== 'cancelled') return meta;
  const { [Annotations.deletionTimestamp]: _cancelled, [Annotations.deletionApproved]: _approval, ...annotations } = meta.annotations ?? {};
  return { ...meta, annotations };
}

/** A proof an earlier version signed, well formed (v1 or v2, the HMAC-SHA256 in base64url): what a listing records cancelled. */
const EARLIER_PROOF = /^v[12]:[A-Za-z0-9_-]{43}$/;

/**
 * The record a listing writes: the recorded signing is cancelled, whatever
 * the object shows now (its stamp taken off, another release written back:
 * red team 30). Without a record: a well-formed proof an earlier version
 * signed (v2 or v1) is recorded cancelled whether it checks now or not (its
 * stamp or another fact taken off while listed and written back after the
 * drop makes it check again: red team 38); anything else (no proof, a v3
 * proof without its record, text that is no proof) is recorded ended, so no
 * earlier version's proof written back after the drop counts (red team 39),
 * and no text of the object's is copied into the operator's namespace. An
 * ended or cancelled record stays as it is.
 */
export function cancelledByListing(meta: Meta, record: ReleaseRecord | undefined): ReleaseRecord | undefined {
  if (record !== undefined) return record.state === 'signed' ? { state: 'cancelled', proof: record.proof } : undefined;
  const proof = meta.annotations?.[Annotations.releaseProof];
  return proof !== undefined && EARLIER_PROOF.test(proof) ? { state: 'cancelled', proof } : { state: 'ended', proof: '' };
}

/** Whether a Bundle taking hold of the object ends a release of it: it carries a release's marks. */
export function carriesReleaseMarks(meta: Meta & { labels?: Readonly<Record<string, string>> | undefined }): boolean {
  return (
    meta.annotations?.[Annotations.releaseProof] !== undefined ||
    meta.annotations?.[Annotations.formerBundle] !== undefined ||
    meta.labels?.[Labels.formerBundle] !== undefined
  );
}

/**
 * The record the sweep writes as it signs an earlier version's release (v2
 * or v1 proof `carried`) again as it stands, as `resigned` (v3, the same
 * facts): where there is no record, or the record names the carried proof
 * signed, the new signing ('write'); where it names `resigned` signed
 * already (an earlier try whose patch did not land: the proof over the same
 * facts is the same), nothing to write, the patch is sent again
 * ('recorded'); anything else ('leave': a cancelled or ended record, or
 * another signing) decides, and nothing is sent (a cancel is never signed
 * over: red team 33).
 */
export function asItStandsRecord(current: ReleaseRecord | undefined, carried: string, resigned: string): 'write' | 'recorded' | 'leave' {
  if (current === undefined) return 'write';
  if (current.state !== 'signed') return 'leave';
  if (current.proof === resigned) return 'recorded';
  return current.proof === carried ? 'write' : 'leave';
}

/** A record write this process decided and could not make: the record as read then (`from`) and as decided (`to`). */
export interface UnwrittenRecord {
  from: ReleaseRecord | undefined;
  to: ReleaseRecord;
}

/**
 * Whether a record write that could not be made still counts in this
 * process: one that makes the record stricter (a listing's cancel, an end),
 * never a signing (its patch is then not sent).
 */
export function countsUnwritten(to: ReleaseRecord): boolean {
  return to.state !== 'signed';
}

/**
 * The record as this process decides on it: a cancel or an end it could
 * not write (an admission policy or RBAC refused it, a request failed)
 * counts as written while the record is still as read when it was decided,
 * so the stamp a listing cancelled, or a release that ended, does not count
 * (red teams 36 and 38). Anything written since decides.
 */
export function withUnwritten(record: ReleaseRecord | undefined, unwritten: UnwrittenRecord | undefined): ReleaseRecord | undefined {
  return unwritten !== undefined && sameRecord(record, unwritten.from) ? unwritten.to : record;
}

/** A decision on a record: what to write over it, or undefined to leave it. */
export type RecordDecision = (current: ReleaseRecord | undefined) => ReleaseRecord | undefined;

/**
 * Cancels and ends decided while the record could not be read (its GET
 * refused by RBAC, a failed request: red team 40), applied in the order
 * they were decided once the record is read: where they make it stricter,
 * they count as unwritten from the record read then (withUnwritten), as a
 * refused write does. A cancel decided so may name a signing made after the
 * listing: that only starts its countdown again, it never ends one early.
 */
export function unreadDecided(record: ReleaseRecord | undefined, decisions: Iterable<RecordDecision>): UnwrittenRecord | undefined {
  let to = record;
  for (const decide of decisions) to = decide(to) ?? to;
  return to !== undefined && countsUnwritten(to) && !sameRecord(to, record) ? { from: record, to } : undefined;
}

/** Whether two records (or their absence) say the same. */
export function sameRecord(a: ReleaseRecord | undefined, b: ReleaseRecord | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.state === b.state && a.proof === b.proof;
}

/** The object a record names (`data.object`: "apiVersion kind namespace/name"). */
export function parseRecordedObject(data: unknown): { apiVersion: string; kind: string; namespace: string; name: string } | undefined {
  const text = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).object : undefined;
  if (typeof text !== 'string') return undefined;
  const [apiVersion, kind, at, ...rest] = text.split(' ');
  const [namespace, name, ...more] = (at ?? '').split('/');
  if (apiVersion === undefined || kind === undefined || namespace === undefined || name === undefined) return undefined;
  if (rest.length > 0 || more.length > 0 || name === '') return undefined;
  return { apiVersion, kind, namespace, name };
}

/** The released object a record is about (named in the record, for a person reading it). */
export interface RecordedObject {
  uid: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** The released object a record names, for an object as read (undefined without a uid: no record can name it). */
export function recordedObjectOf(
  type: { apiVersion: string; kind: string },
  o: { metadata: { uid?: string | undefined; namespace?: string | undefined; name: string } },
): RecordedObject | undefined {
  const uid = o.metadata.uid;
  return uid === undefined || uid === '' ? undefined : recordedObject(type, { ...o.metadata, uid });
}

/** The released object a record names: its kind as served (`type`), its uid, namespace and name. */
export function recordedObject(
  type: { apiVersion: string; kind: string },
  meta: { uid: string; namespace?: string | undefined; name: string },
): RecordedObject {
  return { uid: meta.uid, apiVersion: type.apiVersion, kind: type.kind, namespace: meta.namespace ?? '', name: meta.name };
}
