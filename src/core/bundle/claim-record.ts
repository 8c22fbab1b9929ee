/**
 * The records of a Bundle's claims, and when a reference to a Bundle on an
 * object is that Bundle's claim (the operator's, withdrawn and stripped on
 * release) rather than the user's (kept, as kube-controller-manager keeps
 * it). Two records, written so that neither another tool's edit of the
 * object nor an earlier copy written back can turn one into the other:
 *  - the object's claimReferences annotation, written in the claim's own
 *    patch; ordinary metadata that any writer of the object may blank (red
 *    team 16) or write back from an earlier copy (red team 18);
 *  - the claiming Bundle's status.claims, which only the operator writes
 *    (the chart's record guard refuses anyone else's change): an entry is
 *    recorded pending before the claim is sent, and confirmed once the
 *    claim has landed (the patch answered) or is seen on the object with
 *    its annotation.
 * A reference to Bundle B on object O is B's claim when B's status holds a
 * confirmed entry for O, or O's annotation records B while B's status holds
 * an entry (pending or confirmed) for O. A pending entry alone is no
 * evidence (the claim may never have landed: red team 18, a webhook refused
 * it), nor is the annotation alone once B keeps a record (an earlier copy
 * written back after the claim was withdrawn). A Bundle whose status has no
 * record yet (written by a version before it) is read by the annotation
 * alone, and its claims are absorbed into the record by its next pass.
 *
 * At the end of each pass (nextClaimRecord) the record names exactly the
 * claims on objects: confirmed entries of objects seen carrying the claim,
 * pending ones of claims sent this pass whose outcome is unknown, entries of
 * objects the pass could not see (kept until a fresh read finds them gone:
 * red team 17), less what it withdrew. Pure.
 */
import type { ClaimEntry } from '../../api/bundle-status.js';
import { isRecord, type LiveObject } from './objects.js';

/** What the Bundles' statuses record of their claims. */
export interface ClaimRecords {
  /** By object uid: each Bundle with an entry for it, and whether the entry is confirmed. */
  entries: ReadonlyMap<string, ReadonlyMap<string, boolean>>;
  /** Bundles whose status holds a record (status.claims present, empty or not): the annotation alone is no evidence of theirs. */
  recording: ReadonlySet<string>;
}

/** status.claims of a Bundle as read from the API (entries it cannot read count as none); undefined when it holds none. */
export function statusClaimsOf(status: unknown): ClaimEntry[] | undefined {
  const claims = isRecord(status) ? status['claims'] : undefined;
  if (!Array.isArray(claims)) return undefined;
  return claims.filter(
    (c): c is ClaimEntry =>
      isRecord(c) &&
      typeof c['apiVersion'] === 'string' &&
      typeof c['kind'] === 'string' &&
      typeof c['name'] === 'string' &&
      typeof c['uid'] === 'string' &&
      c['uid'] !== '' &&
      (c['pending'] === undefined || typeof c['pending'] === 'boolean'),
  );
}

/** The records of every Bundle given (Bundles without a uid record nothing). */
export function claimRecordsOf(bundles: readonly { metadata: { uid?: string | undefined }; status?: unknown }[]): ClaimRecords {
  const entries = new Map<string, Map<string, boolean>>();
  const recording = new Set<string>();
  for (const b of bundles) {
    const bundleUid = b.metadata.uid;
    const claims = statusClaimsOf(b.status);
    if (bundleUid === undefined || claims === undefined) continue;
    recording.add(bundleUid);
    for (const entry of claims) {
      const byBundle = entries.get(entry.uid) ?? new Map<string, boolean>();
      byBundle.set(bundleUid, entry.pending !== true);
      entries.set(entry.uid, byBundle);
    }
  }
  return { entries, recording };
}

/**
 * Uids of the Bundles whose claim the object carries by the records (see
 * the header): `annotated`, the uids its claimReferences annotation records.
 */
export function recordedClaimants(
  objectUid: string | undefined,
  annotated: ReadonlySet<string>,
  records: ClaimRecords | undefined,
): Set<string> {
  if (records === undefined) return new Set(annotated);
  const byBundle = objectUid === undefined ? undefined : records.entries.get(objectUid);
  const out = new Set<string>();
  for (const uid of annotated) if (!records.recording.has(uid) || byBundle?.has(uid) === true) out.add(uid);
  for (const [uid, confirmed] of byBundle ?? []) if (confirmed) out.add(uid);
  return out;
}

/** The entry naming a live object. */
export function claimEntryOf(o: LiveObject, pending = false): ClaimEntry | undefined {
  if (o.metadata.uid === undefined) return undefined;
  return { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid, ...(pending ? { pending: true } : {}) };
}

/** The record as a status field: one entry per uid (a confirmed one over a pending one), sorted by uid. */
export function formatClaimRecord(entries: Iterable<ClaimEntry>): ClaimEntry[] {
  const byUid = new Map<string, ClaimEntry>();
  for (const e of entries) {
    const had = byUid.get(e.uid);
    if (had === undefined || (had.pending === true && e.pending !== true)) byUid.set(e.uid, e);
  }
  return [...byUid.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
}

/** The write-ahead before a pass's new claims: the record with them added, pending; undefined when it names them already. */
export function claimRecordAhead(recorded: readonly ClaimEntry[] | undefined, claiming: readonly ClaimEntry[]): ClaimEntry[] | undefined {
  const held = new Set((recorded ?? []).map((e) => e.uid));
  const missing = claiming.filter((e) => !held.has(e.uid));
  if (missing.length === 0) return undefined;
  return formatClaimRecord([...(recorded ?? []), ...missing.map((e) => ({ ...e, pending: true }))]);
}

/** What one pass saw and did of the Bundle's claims, for the record it leaves. */
export interface ClaimPass {
  /** The record as the pass read it (undefined: none yet). */
  previous: readonly ClaimEntry[] | undefined;
  /** Objects that carried the Bundle's claim when the pass read them (recordedClaimants). */
  claimed: readonly LiveObject[];
  /** Uids of every object the pass read (with or without the claim). */
  seen: ReadonlySet<string>;
  /** Uids of recorded objects a fresh read found gone (or another object under the name). */
  gone: ReadonlySet<string>;
  /** Claims the pass sent that landed (confirmed). */
  landed: readonly ClaimEntry[];
  /** Claims the pass sent whose outcome is unknown (no answer): pending, settled by the next pass's reads. */
  unknown: readonly ClaimEntry[];
  /** Uids of the objects whose claim the pass withdrew. */
  withdrawn: ReadonlySet<string>;
}

/** The record at the end of a pass (see the header); always a list, so that the Bundle counts as recording. */
export function nextClaimRecord(pass: ClaimPass): ClaimEntry[] {
  const unseen = (pass.previous ?? []).filter((e) => !pass.seen.has(e.uid) && !pass.gone.has(e.uid));
  const carrying = pass.claimed.flatMap((o) => claimEntryOf(o) ?? []);
  const sent = [...pass.landed, ...pass.unknown.map((e) => ({ ...e, pending: true }))];
  return formatClaimRecord([...carrying, ...sent, ...unseen].filter((e) => !pass.withdrawn.has(e.uid)));
}
