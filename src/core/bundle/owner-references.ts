/**
 * Which of an object's ownerReferences the operator wrote and which are the
 * user's: the Bundle's controller reference, the claims it patched in, and
 * one reference per resolved dependency are the operator's; everything else
 * (the spec's own metadata.ownerReferences, a reference another tool wrote)
 * is the user's, and stays whenever the operator gives an object up. Read
 * by every path that releases, hands over or orphans an object. Pure.
 */
import type { OwnerReference } from '../../api/resource.js';
import { API_VERSION, Annotations, BUNDLE_KIND, FIELD_MANAGER, GROUP } from '../../api/names.js';
import { groupOf, isRecord, jsonPointerSegment, type JsonPatchOperation, type LiveObject } from './objects.js';
import { recordedClaimants, type ClaimRecords } from './claim-record.js';

/** Whether the reference names a Bundle (any version of our group). */
export function isBundleReference(ref: Pick<OwnerReference, 'apiVersion' | 'kind'>): boolean {
  return ref.kind === BUNDLE_KIND && (ref.apiVersion === API_VERSION || ref.apiVersion.startsWith(`${GROUP}/`));
}

/** The uids the dependencyReferences annotation records. */
export function recordedDependencyUids(annotations: Readonly<Record<string, string>> | undefined): Set<string> {
  const text = annotations?.[Annotations.dependencyReferences];
  return new Set(
    (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

/** The annotation value recording dependency reference uids; undefined when there are none. */
export function formatDependencyUids(uids: readonly string[]): string | undefined {
  const sorted = [...new Set(uids)].sort();
  return sorted.length === 0 ? undefined : sorted.join(',');
}

export interface ReferenceOwnerContext {
  /**
   * Live Bundles that list the object: their claim references (a Bundle
   * that loses a Conflict records its claim as a non-controller reference
   * to itself) stay, so that the object keeps a live owner while the claim
   * stands.
   */
  liveClaimUids?: ReadonlySet<string> | undefined;
  /**
   * Uids of the Bundle's other objects. A non-controller reference to one of
   * them, with blockOwnerDeletion as the operator writes it, that the
   * operator's field manager applied (managedFields; none, when the object
   * has none: a reset proves nothing) is a dependency reference whatever the
   * dependencyReferences annotation says: absent on objects applied before
   * it was recorded, or stale (written back from an older copy) while
   * nothing re-applies the object. Read as the user's, such a reference
   * would outlive the release, and the collector would take the object
   * through its deleted sibling. One another tool wrote is the user's: the
   * object keeps it, as kube-controller-manager's collector would.
   */
  siblingUids?: ReadonlySet<string> | undefined;
  /**
   * The ownerReferences the object's manifest names itself (its uid may be a
   * "!{...}" reference the apply resolved): the user's, whoever applied them
   * and whatever they point at (red team 7: one naming a sibling, with
   * blockOwnerDeletion, was taken for a dependency reference and the object
   * deleted although its owner was kept).
   */
  namedByManifest?: readonly NamedOwner[] | undefined;
  /** The claims the Bundles' statuses record (claim-record.ts): a claim they name is the operator's whatever its annotation says. */
  claimRecords?: ClaimRecords | undefined;
}

/** An ownerReference as a manifest names it: matched by uid, or by group, kind and name when its uid is not literal. */
export interface NamedOwner {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  name?: string | undefined;
  uid?: string | undefined;
}

function namedBy(ref: OwnerReference, named: readonly NamedOwner[] | undefined): boolean {
  return (named ?? []).some(
    (n) => n.uid === ref.uid || (n.kind === ref.kind && n.name === ref.name && groupOf(n.apiVersion ?? '') === groupOf(ref.apiVersion)),
  );
}

/**
 * The ownerReferences of an object that the operator wrote: every
 * controller reference to a Bundle, every claim (a non-controller reference
 * to a Bundle the operator patched in: operatorClaimUids) but those of live
 * Bundles that list the object, and every dependency reference recorded in
 * the dependencyReferences annotation. Everything else is the user's, a
 * non-controller reference to a Bundle that the manifest names or another
 * tool wrote included (red team 13: a user's reference to a live umbrella
 * Bundle was taken for a claim, and the object deleted although
 * kube-controller-manager would keep it for its live owner).
 *
 * Why every claim of ours: an object given up keeps only references to
 * owners that will hold it. A stale claim of a Bundle that no longer lists
 * the object (or is gone) would let the collector delete it once that
 * Bundle is gone, the very thing giving it up is meant to prevent.
 */
export function operatorWrittenReferences(
  meta: {
    ownerReferences?: readonly OwnerReference[] | undefined;
    annotations?: Readonly<Record<string, string>> | undefined;
    managedFields?: unknown;
    uid?: string | undefined;
  },
  ctx: ReferenceOwnerContext = {},
): OwnerReference[] {
  const dependencies = recordedDependencyUids(meta.annotations);
  const applied = referencesAppliedBy(meta.managedFields, FIELD_MANAGER);
  const claims = operatorClaimUids(meta, ctx.claimRecords);
  return (meta.ownerReferences ?? []).filter((ref) => {
    if (isBundleReference(ref) && ref.controller === true) return true;
    if (ref.controller === true || namedBy(ref, ctx.namedByManifest)) return false;
    if (isBundleReference(ref)) return !(ctx.liveClaimUids?.has(ref.uid) ?? false) && claims.has(ref.uid);
    if (dependencies.has(ref.uid)) return true;
    // Without managedFields (cleared by hand) nothing says the operator applied it: the user's (red team 14).
    return ref.blockOwnerDeletion === true && (ctx.siblingUids?.has(ref.uid) ?? false) && applied !== undefined && applied.has(ref.uid);
  });
}

/**
 * Uids of the Bundles whose claim the operator wrote on the object, by the
 * claimReferences annotation (written in the same patch as each claim) and
 * the Bundles' status records (`records`; claim-record.ts recordedClaimants
 * says how the two are weighed). Nothing else is evidence: managedFields are
 * reassigned by a reset (`[{}]`), a later server-side apply
 * (`before-first-apply`) or the cap of ten update managers
 * (`ancient-changes`), an object may have none (red team 14), and the
 * operator's own update entry also owns references a manifest names (the
 * drift controls' bookkeeping patch: red team 15).
 */
export function operatorClaimUids(
  meta: { annotations?: Readonly<Record<string, string>> | undefined; uid?: string | undefined },
  records?: ClaimRecords,
): Set<string> {
  return recordedClaimants(meta.uid, recordedClaimUids(meta.annotations), records);
}

/** The uids the claimReferences annotation records. */
export function recordedClaimUids(annotations: Readonly<Record<string, string>> | undefined): Set<string> {
  return new Set(
    (annotations?.[Annotations.claimReferences] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

/** The recorded claims that stay on an object whose ownerReferences become `kept`. */
export function claimsStillOn(o: LiveObject, kept: readonly { uid: string }[]): Set<string> {
  const recorded = recordedClaimUids(o.metadata.annotations);
  return new Set(kept.map((r) => r.uid).filter((uid) => recorded.has(uid)));
}

/**
 * The claimReferences annotation brought in line with `claims` (the uids
 * that stay recorded), as JSON patch operations; none when it already is.
 * Creates the annotations map when the object has none.
 */
export function claimRecordOps(o: LiveObject, claims: ReadonlySet<string>): JsonPatchOperation[] {
  const path = `/metadata/annotations/${jsonPointerSegment(Annotations.claimReferences)}`;
  const value = formatDependencyUids([...claims]);
  const current = o.metadata.annotations?.[Annotations.claimReferences];
  if (value === current) return [];
  if (value === undefined) return [{ op: 'remove', path }];
  return [
    ...(o.metadata.annotations === undefined ? [{ op: 'add' as const, path: '/metadata/annotations', value: {} }] : []),
    { op: 'add', path, value },
  ];
}

/**
 * Uids of the ownerReferences entries `manager` owns in the object's
 * managedFields (entries of a list keyed by uid: `k:{"uid":"..."}`);
 * undefined when the object has none.
 */
export function referencesAppliedBy(managedFields: unknown, manager: string): Set<string> | undefined {
  if (!Array.isArray(managedFields)) return undefined;
  const uids = new Set<string>();
  for (const entry of managedFields as unknown[]) {
    if (!isRecord(entry) || entry['manager'] !== manager) continue;
    const fields = entry['fieldsV1'];
    const metadata = isRecord(fields) ? fields['f:metadata'] : undefined;
    const refs = isRecord(metadata) ? metadata['f:ownerReferences'] : undefined;
    if (!isRecord(refs)) continue;
    for (const key of Object.keys(refs)) {
      if (!key.startsWith('k:')) continue;
      try {
        const parsed: unknown = JSON.parse(key.slice(2));
        if (isRecord(parsed) && typeof parsed['uid'] === 'string') uids.add(parsed['uid']);
      } catch {
        // Not a key this reader knows: it proves nothing.
      }
    }
  }
  return uids;
}

/**
 * Whether the object carries a claim of the Bundle with this uid: a
 * non-controller reference to it that the operator wrote (operatorClaimUids).
 * One the user wrote (in the
 * manifest, or by hand) is theirs: never withdrawn, and no hold of that
 * Bundle's finalizer.
 */
export function hasClaimReference(o: LiveObject, bundleUid: string, records?: ClaimRecords): boolean {
  return (
    (o.metadata.ownerReferences ?? []).some((r) => r.uid === bundleUid && r.controller !== true) &&
    operatorClaimUids(o.metadata, records).has(bundleUid)
  );
}

/** The ownerReferences left once the operator's are taken out (in their original order). */
export function userReferences(meta: Parameters<typeof operatorWrittenReferences>[0], ctx: ReferenceOwnerContext = {}): OwnerReference[] {
  const ours = new Set(operatorWrittenReferences(meta, ctx));
  return (meta.ownerReferences ?? []).filter((ref) => !ours.has(ref));
}

/** Whether the object's dependency record names any of `uids`. */
export function recordNamesAny(annotations: Readonly<Record<string, string>> | undefined, uids: ReadonlySet<string>): boolean {
  return [...recordedDependencyUids(annotations)].some((uid) => uids.has(uid));
}

/**
 * Managers whose managedFields entries may hold what the operator wrote:
 * its own, and those the API server folds entries into (the cap of ten
 * update managers; the first server-side apply over fields written before).
 */
const OPERATOR_OR_FOLDED = new Set([FIELD_MANAGER, 'ancient-changes', 'before-first-apply']);

/**
 * Whether a dependency reference the object's record names is on it and
 * owned by no field manager but the operator's (or an entry the API server
 * folded it into): a reference a person wrote (their copy of a dependent,
 * its reference kept: red team 23) is owned by their manager. This is what
 * is left to tell the operator's reference by when its own managedFields
 * entry is gone (a reset, the operator's entry folded away: red team 24).
 */
export function recordedReferenceOnlyOperators(meta: {
  ownerReferences?: readonly OwnerReference[] | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
  managedFields?: unknown;
}): boolean {
  const recorded = recordedDependencyUids(meta.annotations);
  const present = (meta.ownerReferences ?? []).filter((r) => recorded.has(r.uid));
  if (present.length === 0) return false;
  const byOthers = new Set<string>();
  if (Array.isArray(meta.managedFields))
    for (const entry of meta.managedFields as unknown[]) {
      const manager = isRecord(entry) ? entry['manager'] : undefined;
      if (typeof manager !== 'string' || OPERATOR_OR_FOLDED.has(manager)) continue;
      for (const uid of referencesAppliedBy([entry], manager) ?? []) byOthers.add(uid);
    }
  return present.some((r) => !byOthers.has(r.uid));
}

/**
 * Whether the operator's field manager wrote any field of the object (an
 * entry of its own in managedFields): what tells an object the operator
 * applied from a person's copy of it, which carries its labels and
 * annotations but not its field ownership (red team 23). An object without
 * managedFields proves nothing either way: false.
 */
export function writtenByOperator(managedFields: unknown): boolean {
  return Array.isArray(managedFields) && (managedFields as unknown[]).some((e) => isRecord(e) && e['manager'] === FIELD_MANAGER);
}
