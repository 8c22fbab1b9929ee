/**
 * The record of a release's latest signing. A release proof
 * (provenance.ts) binds the object's uid, namespace, former Bundle, stamp,
 * delay and policy, and nothing in it says which signing is the latest: an
 * earlier (stamp, proof) pair written back onto the object (a backup
 * restored, a tool replaying what it saw) checks as well as the current one,
 * and would end the current countdown early (red team 27). So every signing
 * is recorded, before the patch that carries it is sent, where only the
 * operator writes (controllers/softdelete/release-records.ts), and the
 * sweeper counts an object's stamp only when it is the recorded one.
 *
 * The same record keeps a listing's cancel: a countdown a live Bundle's
 * listing cancelled is recorded as no stamp, so that the stamp it leaves on
 * the object (when the write that takes it off is refused) never counts
 * again, after a restart too.
 *
 * Pure.
 */
import { Annotations } from '../../api/names.js';
import { jsonPointerSegment, type JsonPatchOperation } from '../bundle/objects.js';

const STAMP_PATH = `/metadata/annotations/${jsonPointerSegment(Annotations.deletionTimestamp)}`;
const PROOF_PATH = `/metadata/annotations/${jsonPointerSegment(Annotations.releaseProof)}`;

/**
 * The stamp a patch signs a release over: the value it writes as the
 * deletionTimestamp, '' when it writes none (a cancel, a release without a
 * countdown); undefined when the patch signs no release. Every patch that
 * signs one states its stamp (core/bundle/release.ts), so the patch alone
 * says what to record.
 */
export function signedStampOf(patch: readonly JsonPatchOperation[]): string | undefined {
  if (!patch.some((op) => op.path === PROOF_PATH && op.op !== 'remove' && op.op !== 'test')) return undefined;
  const stamp = patch.find((op) => op.path === STAMP_PATH && (op.op === 'add' || op.op === 'replace'));
  return stamp !== undefined && 'value' in stamp && typeof stamp.value === 'string' ? stamp.value : '';
}

/**
 * The object as the sweeper reads it against the record of its release
 * (undefined: none, a release signed before releases were recorded; the
 * object is read as it is). A stamp other than the recorded one reads as
 * none, and so does any approval given for it: the sweeper then starts a
 * new countdown, written on the object, and never deletes on a countdown
 * the object does not show.
 */
export function readWithRecord<M extends { annotations?: Readonly<Record<string, string>> | undefined }>(
  meta: M,
  recordedStamp: string | undefined,
): M {
  const stamp = meta.annotations?.[Annotations.deletionTimestamp];
  if (recordedStamp === undefined || stamp === undefined || stamp === recordedStamp) return meta;
  const {
    [Annotations.deletionTimestamp]: _superseded,
    [Annotations.deletionApproved]: _approval,
    ...annotations
  } = meta.annotations ?? {};
  return { ...meta, annotations };
}

/** The stamp a record's data names; '' where it names none readable (the strictest reading: no countdown counts). */
export function recordedStampOf(data: unknown): string {
  const stamp = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).stamp : undefined;
  return typeof stamp === 'string' ? stamp : '';
}

/** The uid of the object a record is about (its data's `uid`); undefined for a record without one. */
export function recordedUidOf(data: unknown): string | undefined {
  const uid = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).uid : undefined;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}
