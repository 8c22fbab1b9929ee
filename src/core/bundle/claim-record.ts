/**
 * The second record of a Bundle's claims, in its own status (status.claims:
 * the objects it holds a claim on, by UID), which only the operator writes
 * (the chart's record guard refuses anyone else's change). The first is the
 * object's claimReferences annotation, written in the claim's own patch; but
 * that is ordinary metadata another tool may overwrite (`kubectl annotate
 * --overwrite`, red team 16), and a claim no record names reads as the
 * user's reference: never withdrawn, kept through a release, and the
 * collector then deletes the object with the claiming Bundle. Either record
 * is enough: a reference to a Bundle is its claim when the object's
 * annotation or that Bundle's status says so.
 *
 * So the status record must name exactly the claims on objects, no more
 * (an entry makes any reference to the Bundle on that object its claim: a
 * user's reference added later would be withdrawn, red team 17) and no less:
 *  - an entry is written ahead of each new claim (before the object's patch
 *    is sent), and kept at the end of the pass only if the patch landed or
 *    its outcome is unknown (a refused or stale patch wrote nothing);
 *  - at the end of every pass: the objects seen carrying the claim (either
 *    record recognises it), less those whose claim the pass withdrew;
 *  - an entry whose object the pass did not see (its kind not watched, its
 *    managed label taken off) stays until a read shows it gone (red team 17:
 *    dropped unseen, the claim read as the user's). Pure.
 */
import type { ClaimEntry } from '../../api/bundle-status.js';
import { isRecord, type LiveObject } from './objects.js';

/** Bundle uids whose status records a claim, by the claimed object's uid. */
export type ClaimRecords = ReadonlyMap<string, ReadonlySet<string>>;

/** status.claims of a Bundle as read from the API (entries it cannot read count as none). */
export function statusClaimsOf(status: unknown): ClaimEntry[] {
  const claims = isRecord(status) ? status['claims'] : undefined;
  if (!Array.isArray(claims)) return [];
  return claims.filter(
    (c): c is ClaimEntry =>
      isRecord(c) &&
      typeof c['apiVersion'] === 'string' &&
      typeof c['kind'] === 'string' &&
      typeof c['name'] === 'string' &&
      typeof c['uid'] === 'string' &&
      c['uid'] !== '',
  );
}

/** The claims every Bundle's status records (Bundles without a uid record nothing). */
export function claimRecordsOf(bundles: readonly { metadata: { uid?: string | undefined }; status?: unknown }[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const b of bundles) {
    const bundleUid = b.metadata.uid;
    if (bundleUid === undefined) continue;
    for (const entry of statusClaimsOf(b.status)) {
      const set = out.get(entry.uid) ?? new Set<string>();
      set.add(bundleUid);
      out.set(entry.uid, set);
    }
  }
  return out;
}

/** The entry naming a live object. */
export function claimEntryOf(o: LiveObject): ClaimEntry | undefined {
  return o.metadata.uid === undefined ? undefined : { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid };
}

/** The record as a status field: one entry per uid, sorted by uid; undefined when empty (the field is left out). */
export function formatClaimRecord(entries: Iterable<ClaimEntry>): ClaimEntry[] | undefined {
  const byUid = new Map<string, ClaimEntry>();
  for (const e of entries) if (!byUid.has(e.uid)) byUid.set(e.uid, e);
  const sorted = [...byUid.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return sorted.length === 0 ? undefined : sorted;
}

/** The write-ahead before a pass's new claims: the record with them added; undefined when it holds them already. */
export function claimRecordAhead(recorded: readonly ClaimEntry[], claiming: readonly ClaimEntry[]): ClaimEntry[] | undefined {
  const held = new Set(recorded.map((e) => e.uid));
  const missing = claiming.filter((e) => !held.has(e.uid));
  return missing.length === 0 ? undefined : formatClaimRecord([...recorded, ...missing]);
}

/** What one pass saw and did of the Bundle's claims, for the record it leaves. */
export interface ClaimPass {
  /** The record as the pass read it. */
  previous: readonly ClaimEntry[];
  /** Objects that carried the Bundle's claim when the pass read them (recognised by either record). */
  claimed: readonly LiveObject[];
  /** Uids of every object the pass read (with or without the claim). */
  seen: ReadonlySet<string>;
  /** Uids of recorded objects a fresh read found gone (or another object under the name). */
  gone: ReadonlySet<string>;
  /** Claims the pass sent that landed, or whose outcome is unknown. */
  claimedNow: readonly ClaimEntry[];
  /** Uids of the objects whose claim the pass withdrew. */
  withdrawn: ReadonlySet<string>;
}

/** The record at the end of a pass (see the header). */
export function nextClaimRecord(pass: ClaimPass): ClaimEntry[] | undefined {
  const unseen = pass.previous.filter((e) => !pass.seen.has(e.uid) && !pass.gone.has(e.uid));
  const carrying = pass.claimed.flatMap((o) => claimEntryOf(o) ?? []);
  return formatClaimRecord([...carrying, ...pass.claimedNow, ...unseen].filter((e) => !pass.withdrawn.has(e.uid)));
}
