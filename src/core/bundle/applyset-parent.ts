/**
 * The Bundle's metadata as an ApplySet parent (KEP-3659): the id label, the
 * tooling annotation (kubectl refuses to prune a set another tool manages)
 * and contains-group-kinds, written by the applyset field manager before
 * any object of a new kind (controllers/bundle/applyset-parent.ts). None of
 * it is read to decide anything. Pure.
 */
import { APPLYSET_TOOLING, ApplySetAnnotations, ApplySetLabels, BUNDLE_KIND } from '../../api/names.js';
import { applySetId } from './applyset.js';
import { groupKindKey, inventoryKinds } from './kind-inventory.js';

/**
 * The contains-group-kinds annotation's value for a kind inventory: each
 * kind once as `Kind.group` (`Kind` for the core group), sorted, joined by
 * commas; empty for none. Read from status.managedKinds, which holds every
 * kind the Bundle may control objects of (recorded before any is written,
 * kept until proven empty), so the annotation always covers every member.
 */
export function containsGroupKinds(managedKinds: readonly string[] | undefined): string {
  return [...new Set(inventoryKinds(managedKinds).map(groupKindKey))].sort().join(',');
}

/** The labels and annotations the Bundle carries as an ApplySet parent. */
export interface ApplySetParentMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export function applySetParentMetadata(
  bundle: { name: string; namespace: string },
  managedKinds: readonly string[] | undefined,
): ApplySetParentMetadata {
  return {
    labels: { [ApplySetLabels.id]: applySetId(bundle.name, bundle.namespace) },
    annotations: {
      [ApplySetAnnotations.tooling]: APPLYSET_TOOLING,
      [ApplySetAnnotations.containsGroupKinds]: containsGroupKinds(managedKinds),
    },
  };
}

/** Whether the live Bundle's metadata already carries `wanted` (so no write is sent). */
export function carriesParentMetadata(
  live: { labels?: Readonly<Record<string, string>> | undefined; annotations?: Readonly<Record<string, string>> | undefined },
  wanted: ApplySetParentMetadata,
): boolean {
  const same = (have: Readonly<Record<string, string>> | undefined, want: Record<string, string>): boolean =>
    Object.entries(want).every(([k, v]) => have?.[k] === v);
  return same(live.labels, wanted.labels) && same(live.annotations, wanted.annotations);
}

/**
 * The server-side apply body of the Bundle's parent metadata: only the
 * fields the applyset field manager owns, with the Bundle's uid and
 * resourceVersion as preconditions. A Bundle deleted in the meantime is not
 * created again by it (an apply with a resourceVersion never creates), and
 * one changed since it was read is not written (409, decided again).
 */
export function applySetParentApply(
  bundle: { name: string; namespace: string; uid: string; resourceVersion: string; apiVersion: string },
  wanted: ApplySetParentMetadata,
): Record<string, unknown> {
  return {
    apiVersion: bundle.apiVersion,
    kind: BUNDLE_KIND,
    metadata: {
      name: bundle.name,
      namespace: bundle.namespace,
      uid: bundle.uid,
      resourceVersion: bundle.resourceVersion,
      labels: wanted.labels,
      annotations: wanted.annotations,
    },
  };
}
