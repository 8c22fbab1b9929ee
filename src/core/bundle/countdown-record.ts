/**
 * The record of a Bundle's countdowns in its status, which only the operator
 * writes: the rules each listed object's manifest declares
 * (status.declaredRules) and each countdown's stamp and earliest deletion
 * (status.pendingDeletions, recorded before the stamp is written). Keys,
 * reading it from a status, carrying it over a pass that did not decide an
 * object, and the write-ahead of new countdowns. How a countdown is read
 * against it is countdown.ts. Pure.
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import type { DeclaredRules, PendingDeletion } from '../../api/bundle-status.js';
import { Annotations } from '../../api/names.js';
import { readDeletionRules } from '../softdelete/rules.js';
import type { DeclaredIdentity } from '../softdelete/stamp-seal.js';
import { groupOf, keyGroupOf } from './objects.js';

/** The identity a declared-rules proof binds: group and kind, namespace, name. */
export function declaredIdentityOf(
  o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string | undefined } },
  namespace?: string,
): DeclaredIdentity {
  return {
    group: keyGroupOf(groupOf(o.apiVersion), o.kind),
    kind: o.kind,
    namespace: namespace ?? o.metadata.namespace ?? '',
    name: o.metadata.name,
  };
}

/** One string per identity (group and kind, namespace, name), to look an object up in the record. */
export function identityKey(id: DeclaredIdentity): string {
  return `${id.group}/${id.kind}/${id.namespace}/${id.name}`;
}

/** What the Bundle's status records of its countdowns (see the header), by identityKey. */
export interface CountdownRecord {
  /**
   * The deletion annotations each listed object's manifest declares (an
   * object absent here declares none). Undefined when the status holds no
   * record (written by a version before it): the proofs alone decide.
   */
  declared: ReadonlyMap<string, Readonly<Record<string, string>>> | undefined;
  /** The countdowns the last status reported. */
  pending: ReadonlyMap<string, Pick<PendingDeletion, 'deletionTimestamp' | 'deleteAfter' | 'waitingFor'>>;
  /** The entries as the status holds them, by identityKey: a pass that does not decide an object carries its entries on (carriedRecord). */
  entries: { declared: ReadonlyMap<string, DeclaredRules>; pending: ReadonlyMap<string, PendingDeletion> };
  /**
   * The latest countdown stamp the other Bundles of the namespace record for
   * each object, by identityKey (latestStampsElsewhere). A stamp earlier than
   * one of them belongs to a countdown that was cancelled when the object
   * passed to that Bundle, whatever this Bundle's record says (it may not
   * have seen the hand-over: its shard down, its passes stuck: red team 10).
   */
  elsewhere?: ReadonlyMap<string, string>;
}

/** See CountdownRecord.elsewhere: over the statuses of the namespace's other Bundles. */
export function latestStampsElsewhere(
  statuses: readonly ({ pendingDeletions?: readonly PendingDeletion[] | undefined } | undefined)[],
  namespace: string,
): Map<string, string> {
  const latest = new Map<string, string>();
  for (const status of statuses) {
    for (const p of status?.pendingDeletions ?? []) {
      // Read from other Bundles as stored (the CRD's schema checks the shape; a value of another shape is skipped).
      if (
        typeof p.apiVersion !== 'string' ||
        typeof p.kind !== 'string' ||
        typeof p.name !== 'string' ||
        typeof p.deletionTimestamp !== 'string'
      )
        continue;
      const key = pendingEntryKey(p, namespace);
      const at = Date.parse(p.deletionTimestamp);
      const known = latest.get(key);
      if (Number.isFinite(at) && (known === undefined || at > Date.parse(known))) latest.set(key, p.deletionTimestamp);
    }
  }
  return latest;
}

export const DECLARED_KEYS = [
  ['deletionDelay', Annotations.deletionDelay],
  ['deletionPolicy', Annotations.deletionPolicy],
  ['deleteWhen', Annotations.deleteWhen],
] as const;

/** The record, as a Bundle's status holds it. */
export function countdownRecordOf(
  status: { declaredRules?: readonly DeclaredRules[] | undefined; pendingDeletions?: readonly PendingDeletion[] | undefined } | undefined,
  namespace: string,
  elsewhere?: ReadonlyMap<string, string>,
): CountdownRecord {
  const declaredEntries = new Map((status?.declaredRules ?? []).map((d) => [declaredEntryKey(d, namespace), d] as const));
  const pendingEntries = new Map((status?.pendingDeletions ?? []).map((p) => [pendingEntryKey(p, namespace), p] as const));
  const declared =
    status?.declaredRules === undefined
      ? undefined
      : new Map(
          status.declaredRules.map((d) => {
            return [declaredEntryKey(d, namespace), annotationsOfEntry(d)] as const;
          }),
        );
  return {
    declared,
    pending: pendingEntries,
    entries: { declared: declaredEntries, pending: pendingEntries },
    ...(elsewhere !== undefined && elsewhere.size > 0 ? { elsewhere } : {}),
  };
}

/** A status.declaredRules entry as the annotations it records. */
function annotationsOfEntry(d: DeclaredRules): Record<string, string> {
  const annotations: Record<string, string> = {};
  for (const [field, name] of DECLARED_KEYS) {
    const value = d[field];
    if (value !== undefined) annotations[name] = value;
  }
  return annotations;
}

function declaredEntryKey(d: DeclaredRules, namespace: string): string {
  return identityKey({ group: keyGroupOf(d.group ?? '', d.kind), kind: d.kind, namespace, name: d.name });
}

export function pendingEntryKey(p: Pick<PendingDeletion, 'apiVersion' | 'kind' | 'name'>, namespace: string): string {
  return identityKey(declaredIdentityOf({ apiVersion: p.apiVersion, kind: p.kind, metadata: { name: p.name } }, namespace));
}

/**
 * The record's entries a pass carries on because it did not decide their
 * object: one the Bundle still controls, that its spec no longer lists, and
 * whose prune this pass did not plan (an invalid spec, prunes held back
 * while another resource fails). Dropping them there would let a proof
 * written back decide (red team 7). An entry goes once its object is listed
 * again (the spec's own entry stands), released, handed over or gone; a
 * pending entry also once a pass decides the object's prune again (the
 * status keeps only the carried entries of objects no prune action of the
 * pass names: buildBundleStatus).
 */
export function carriedRecord(
  record: CountdownRecord | undefined,
  carry: { listed: ReadonlySet<string>; held: ReadonlySet<string> },
): { declared: DeclaredRules[]; pending: PendingDeletion[] } {
  if (record === undefined) return { declared: [], pending: [] };
  const keep = (key: string): boolean => !carry.listed.has(key) && carry.held.has(key);
  return {
    declared: [...record.entries.declared].filter(([key]) => keep(key)).map(([, d]) => d),
    pending: [...record.entries.pending].filter(([key]) => keep(key)).map(([, p]) => p),
  };
}

/**
 * status.pendingDeletions with the countdowns a pass is about to stamp
 * recorded first: the record must hold a stamp before the object does
 * (stampTheRecordHolds), as status.managedKinds holds a kind before any
 * object of it is written. Each stamped object's entry replaces the one
 * recorded for it; the rest stay as recorded. Undefined when the record
 * already holds every one of them as given (nothing to write).
 */
export function pendingRecordedAhead(
  recorded: readonly PendingDeletion[] | undefined,
  stamping: readonly PendingDeletion[],
  namespace: string,
): PendingDeletion[] | undefined {
  const byKey = new Map((recorded ?? []).map((p) => [pendingEntryKey(p, namespace), p] as const));
  const missing = stamping.filter((p) => {
    const held = byKey.get(pendingEntryKey(p, namespace));
    return (
      held === undefined ||
      held.deletionTimestamp !== p.deletionTimestamp ||
      held.deleteAfter !== p.deleteAfter ||
      held.waitingFor !== p.waitingFor
    );
  });
  if (missing.length === 0) return undefined;
  const replaced = new Set(missing.map((p) => pendingEntryKey(p, namespace)));
  return [...(recorded ?? []).filter((p) => !replaced.has(pendingEntryKey(p, namespace))), ...missing];
}

/**
 * The record as a pass that stops before deciding (a watch not synced, a
 * failure) leaves it: the countdowns of objects a live Bundle lists
 * (`listed`, by identityKey: this one's spec again, or another's, which
 * takes the object over) are cancelled in the record, though the pass cannot
 * remove their stamps. A stamp the record does not hold reads as none, so
 * an object listed again while its Bundle was stuck, and left again before
 * a pass could decide, starts a new countdown from then instead of ending
 * the cancelled one (red team 10); an approval given for the cancelled
 * countdown goes with it.
 */
export function listedKeysOf(
  resources: readonly { spec: { object?: { apiVersion: string; kind: string; metadata: { name: string } } | undefined } }[],
  namespace: string,
): Set<string> {
  return new Set(
    resources.flatMap((r) => (r.spec.object !== undefined ? [identityKey(declaredIdentityOf(r.spec.object, namespace))] : [])),
  );
}

/**
 * See listedKeysOf. `cancelled` says which else are over: an object the
 * caller knows (a synced cache, a fresh list) to be gone or no longer held
 * by this Bundle (`bundlesmith cancel`, another tool's edit, a hand-over
 * behind a finalizer that holds: red team 11). Dropping an entry only ever
 * starts a countdown again.
 */
export function withListedCountdownsCancelled<
  S extends {
    pendingDeletions?: PendingDeletion[] | undefined;
    pendingDeletionCount?: number | undefined;
    awaitingApprovalCount?: number | undefined;
  },
>(status: S, listed: ReadonlySet<string>, namespace: string, cancelled: (p: PendingDeletion) => boolean = () => false): S {
  if (status.pendingDeletions === undefined || status.pendingDeletions.length === 0) return status;
  const pendingDeletions = status.pendingDeletions.filter((p) => !listed.has(pendingEntryKey(p, namespace)) && !cancelled(p));
  if (pendingDeletions.length === status.pendingDeletions.length) return status;
  return {
    ...status,
    pendingDeletions,
    pendingDeletionCount: pendingDeletions.length,
    awaitingApprovalCount: pendingDeletions.filter((p) => p.waitingFor === 'Approval').length,
  };
}

/**
 * The spec's entries for status.declaredRules: a manifest whose rules
 * cannot be read (its resource is an error, not applied) keeps the entry
 * the record has for its object, as that object still carries what was
 * applied before.
 */
export function readableDeclaredRules(
  fromSpec: readonly DeclaredRules[],
  record: CountdownRecord | undefined,
  defaults: DeletionDefaults | undefined,
  namespace: string,
): DeclaredRules[] {
  return fromSpec.flatMap((d) => {
    if (readDeletionRules(annotationsOfEntry(d), defaults).ok) return [d];
    const previous = record?.entries.declared.get(declaredEntryKey(d, namespace));
    return previous === undefined ? [] : [previous];
  });
}

/** status.declaredRules for a spec: one entry per resource whose manifest declares a deletion rule, in spec order. */
export function declaredRulesOf(
  resources: readonly {
    spec: {
      object?:
        { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string> | undefined } } | undefined;
    };
  }[],
): DeclaredRules[] {
  return resources.flatMap((r): DeclaredRules[] => {
    const o = r.spec.object;
    if (o === undefined) return [];
    const group = groupOf(o.apiVersion);
    const entry: DeclaredRules = { ...(group !== '' ? { group } : {}), kind: o.kind, name: o.metadata.name };
    let declares = false;
    for (const [field, name] of DECLARED_KEYS) {
      const value = o.metadata.annotations?.[name];
      if (value === undefined) continue;
      entry[field] = value;
      declares = true;
    }
    return declares ? [entry] : [];
  });
}
