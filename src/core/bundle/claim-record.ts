/**
 * The second record of a Bundle's claims, in its own status (status.claims:
 * the uids of the objects it holds a claim on), which only the operator
 * writes. The first is the object's claimReferences annotation, written in
 * the claim's own patch; but that is ordinary metadata another tool may
 * overwrite (`kubectl annotate --overwrite`, red team 16), and a claim no
 * record names reads as the user's reference: never withdrawn, kept through
 * a release, and the collector then deletes the object with the claiming
 * Bundle. Either record is enough: a reference to a Bundle is its claim when
 * the object's annotation or that Bundle's status says so.
 *
 * The status record is written ahead of each new claim (before the object's
 * patch is sent) and brought in line at the end of every pass: the objects
 * seen carrying the claim, those claimed in the pass, less those whose claim
 * the pass withdrew. Pure.
 */
import { isRecord, type LiveObject } from './objects.js';

/** Bundle uids whose status records a claim, by the claimed object's uid. */
export type ClaimRecords = ReadonlyMap<string, ReadonlySet<string>>;

/** status.claims of a Bundle as read from the API (anything unreadable counts as none). */
export function statusClaimsOf(status: unknown): string[] {
  const claims = isRecord(status) ? status['claims'] : undefined;
  return Array.isArray(claims) ? claims.filter((c): c is string => typeof c === 'string' && c !== '') : [];
}

/** The claims every Bundle's status records (Bundles without a uid record nothing). */
export function claimRecordsOf(bundles: readonly { metadata: { uid?: string | undefined }; status?: unknown }[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const b of bundles) {
    const bundleUid = b.metadata.uid;
    if (bundleUid === undefined) continue;
    for (const objectUid of statusClaimsOf(b.status)) {
      const set = out.get(objectUid) ?? new Set<string>();
      set.add(bundleUid);
      out.set(objectUid, set);
    }
  }
  return out;
}

/** The record as a status field: sorted, each uid once; undefined when empty (the field is left out). */
export function formatClaimRecord(uids: Iterable<string>): string[] | undefined {
  const sorted = [...new Set(uids)].sort();
  return sorted.length === 0 ? undefined : sorted;
}

/** The write-ahead before a pass's new claims: the record with them added; undefined when it holds them already. */
export function claimRecordAhead(recorded: readonly string[], claiming: readonly string[]): string[] | undefined {
  const missing = claiming.filter((uid) => !recorded.includes(uid));
  return missing.length === 0 ? undefined : formatClaimRecord([...recorded, ...missing]);
}

/**
 * The record at the end of a pass: the objects that carried the Bundle's
 * claim when the pass read them (`claimed`, recognised by either record),
 * and those it claimed in the pass (sent or not: a claim whose patch may
 * have landed stays recorded), less those whose claim it withdrew.
 */
export function nextClaimRecord(pass: {
  claimed: readonly LiveObject[];
  claiming: readonly string[];
  withdrawn: ReadonlySet<string>;
}): string[] | undefined {
  const uids = [...pass.claimed.map((o) => o.metadata.uid ?? ''), ...pass.claiming].filter((u) => u !== '' && !pass.withdrawn.has(u));
  return formatClaimRecord(uids);
}
