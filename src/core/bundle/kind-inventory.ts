/**
 * The kind inventory: `status.managedKinds`, the kinds a Bundle may control
 * objects of. The finalizer lists exactly these kinds (and the spec's) to
 * find what the Bundle controls, so this is where a wrongful delete hides
 * when it is wrong. Three rules, each closing a delete found on a real
 * cluster:
 *
 *  - Record before write: a kind is stored here before any object of it is
 *    written with the Bundle as owner (unrecordedKinds; softdelete fuzz seed
 *    728: an object of an unrecorded kind went unseen by the finalizer and
 *    was collected with its Bundle).
 *  - By group and kind, never by version: an entry is `Kind.group` (the
 *    ApplySet spelling; `Kind` for the core group) and is resolved to the
 *    version the server serves *now*. A CRD that moves its storage to v1 and
 *    stops serving v1alpha1 must not hide its objects from the finalizer.
 *    Entries written by earlier versions (`group/version/Kind`) are read too.
 *  - Kept until proven empty: a recorded kind leaves the inventory only when
 *    nothing still makes it relevant *and* a fresh list of the kind without
 *    any label selector showed no object referencing the Bundle (the managed
 *    label narrows caches; another tool may take it off an object the Bundle
 *    still controls, and that must not make the Bundle forget the kind).
 *
 * Pure.
 */
import type { BundlePlan } from './plan.js';
import { groupOf, parseKindKey, type LiveObject } from './objects.js';

export interface GroupKind {
  group: string;
  kind: string;
}

/** The inventory's spelling of a kind: "Deployment.apps", "ConfigMap" (core group). */
export function groupKindKey(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

/** The group and kind of an apiVersion + kind. */
export function groupKindOf(apiVersion: string, kind: string): GroupKind {
  return { group: groupOf(apiVersion), kind };
}

/** groupKindKey of an apiVersion + kind. */
export function inventoryKey(apiVersion: string, kind: string): string {
  return groupKindKey(groupKindOf(apiVersion, kind));
}

/**
 * One inventory entry read back: `Kind.group`, `Kind`, or the form earlier
 * versions wrote (`apps/v1/Deployment`, `v1/ConfigMap`). Undefined when it
 * is none of them.
 */
export function readInventoryEntry(entry: string): GroupKind | undefined {
  if (entry.includes('/')) {
    const legacy = parseKindKey(entry);
    return legacy && legacy.kind !== '' ? groupKindOf(legacy.apiVersion, legacy.kind) : undefined;
  }
  const dot = entry.indexOf('.');
  const kind = dot < 0 ? entry : entry.slice(0, dot);
  return kind === '' ? undefined : { kind, group: dot < 0 ? '' : entry.slice(dot + 1) };
}

/** The recorded entries as group kinds, each once (unreadable entries dropped), in entry order. */
export function inventoryKinds(recorded: readonly string[] | undefined): GroupKind[] {
  const byKey = new Map<string, GroupKind>();
  for (const entry of recorded ?? []) {
    const gk = readInventoryEntry(entry);
    if (gk && !byKey.has(groupKindKey(gk))) byKey.set(groupKindKey(gk), gk);
  }
  return [...byKey.values()];
}

/** The recorded entries in today's spelling, each once. */
function normalized(recorded: readonly string[] | undefined): Set<string> {
  return new Set(inventoryKinds(recorded).map(groupKindKey));
}

/**
 * The kinds a pass is about to make this Bundle the owner of (claims and
 * applies that send something) that the stored inventory does not record
 * yet, sorted; empty when there are none. They are recorded first, and only
 * then written.
 */
export function unrecordedKinds(plan: Pick<BundlePlan, 'takeHolds' | 'resources'>, recorded: readonly string[] | undefined): string[] {
  const have = normalized(recorded);
  const kinds = new Set<string>();
  for (const c of plan.takeHolds) kinds.add(inventoryKey(c.target.apiVersion, c.target.kind));
  for (const r of plan.resources)
    if ((r.action === 'apply' || r.action === 'adopt') && r.apply.needed)
      kinds.add(inventoryKey(r.apply.desired.apiVersion, r.apply.desired.kind));
  return [...kinds].filter((k) => !have.has(k)).sort();
}

/** The inventory with `added` recorded too, none taken away, sorted. */
export function recordKinds(recorded: readonly string[] | undefined, added: readonly string[]): string[] {
  return [...new Set([...normalized(recorded), ...added])].sort();
}

/** What a pass knows that keeps a recorded kind relevant. */
export interface InventoryInput {
  recorded: readonly string[] | undefined;
  specObjects: readonly { apiVersion: string; kind: string }[];
  /** What the caches show the Bundle controls or claims (label-selected: never proof that a kind is empty). */
  controlled: readonly LiveObject[];
  plan: Pick<BundlePlan, 'prune' | 'withheld'>;
}

function stillRelevant(input: InventoryInput): Set<string> {
  return new Set<string>([
    ...input.specObjects.map((o) => inventoryKey(o.apiVersion, o.kind)),
    ...input.controlled.map((o) => inventoryKey(o.apiVersion, o.kind)),
    ...input.plan.prune.map((a) => inventoryKey(a.target.apiVersion, a.target.kind)),
    ...input.plan.withheld.map((w) => inventoryKey(w.action.target.apiVersion, w.action.target.kind)),
  ]);
}

/**
 * Recorded kinds that nothing in the pass keeps relevant: they may leave
 * the inventory once a fresh, unselected list shows the Bundle holds
 * nothing of them (the controller makes that list).
 */
export function dropCandidates(input: InventoryInput): GroupKind[] {
  const relevant = stillRelevant(input);
  return inventoryKinds(input.recorded).filter((gk) => !relevant.has(groupKindKey(gk)));
}

/**
 * The inventory to store after a pass: every recorded kind and every kind
 * the pass shows relevant (the spec's, the controlled objects', the prune's),
 * less the drop candidates in `confirmedEmpty` (groupKindKeys a fresh
 * unselected list showed to hold nothing referencing the Bundle), sorted.
 */
export function managedKinds(input: InventoryInput, confirmedEmpty: ReadonlySet<string>): string[] {
  const kinds = normalized(input.recorded);
  const relevant = stillRelevant(input);
  // What the pass shows relevant is recorded again, not only kept: a kind another status writer took out comes back
  // (the spec's, and those of what the caches show the Bundle controls, and of its pruned and counting-down objects).
  for (const k of relevant) kinds.add(k);
  return [...kinds].filter((k) => relevant.has(k) || !confirmedEmpty.has(k)).sort();
}

/**
 * `status` with the kinds of the Bundle's spec objects recorded (none taken
 * away), sorted: written with the finalizer, ahead of any object.
 */
export function withSpecKinds<S extends { managedKinds?: string[] | undefined }>(
  status: S,
  bundle: { spec: { resources: readonly { spec: { object?: { apiVersion: string; kind: string } | undefined } }[] } },
): S {
  const spec = bundle.spec.resources.flatMap((r) => (r.spec.object ? [inventoryKey(r.spec.object.apiVersion, r.spec.object.kind)] : []));
  return { ...status, managedKinds: recordKinds(status.managedKinds, spec) };
}

/** Whether an object references the Bundle with this uid (its controller reference or a claim), whatever its labels say. */
export function referencesBundle(
  o: { metadata: { ownerReferences?: readonly { uid: string }[] | undefined } },
  bundleUid: string,
): boolean {
  return (o.metadata.ownerReferences ?? []).some((r) => r.uid === bundleUid);
}
