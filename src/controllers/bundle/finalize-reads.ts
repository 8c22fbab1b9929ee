/**
 * What the finalizer reads off the Bundle itself for its plan
 * (core/bundle/finalize.ts): the coordinates, what each manifest declares,
 * the countdowns its fresh lists show over, and the orphan deletion a
 * pass recorded.
 */
import type { Bundle } from '../../api/bundle.js';
import type { PendingDeletion } from '../../api/bundle-status.js';
import { groupOf, isControlledBy, objectKey, type LiveObject } from '../../core/bundle/objects.js';
import { listedObjectKeys } from '../../core/bundle/ownership.js';
import { type NamedOwner } from '../../core/bundle/owner-references.js';
import type { ResourceType } from '../../kube/types.js';

/** Whether a pass recorded an orphan deletion of the Bundle (status.deletionPropagation, written ahead of its first orphan write). */
export function recordedOrphan(bundle: Pick<Bundle, 'status'>): boolean {
  return bundle.status?.deletionPropagation === 'Orphan';
}

/** The annotations each object of the spec is declared with, by objectKey (their deletion rules stand in for any the live object lacks). */
export function declaredAnnotations(bundle: Bundle): Map<string, Readonly<Record<string, string>>> {
  const namespace = bundle.metadata.namespace;
  const declared = new Map<string, Readonly<Record<string, string>>>();
  for (const r of bundle.spec.resources) {
    const o = r.spec.object;
    if (o?.metadata.annotations)
      declared.set(
        objectKey({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace } }),
        o.metadata.annotations,
      );
  }
  return declared;
}

/** The ownerReferences each listed object's manifest names itself, by objectKey. */
export function namedOwnersOf(bundle: Bundle): Map<string, NamedOwner[]> {
  const namespace = bundle.metadata.namespace;
  const named = new Map<string, NamedOwner[]>();
  for (const r of bundle.spec.resources) {
    const o = r.spec.object;
    const refs = o?.metadata.ownerReferences;
    if (o === undefined || refs === undefined || refs.length === 0) continue;
    named.set(
      objectKey({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace } }),
      refs.map((ref) => ({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid })),
    );
  }
  return named;
}

/** The objects the Bundle's spec lists and its status counts as pending deletion, by objectKey. */
export function coordinatesOf(bundle: Bundle): Set<string> {
  const namespace = bundle.metadata.namespace;
  const pending = (bundle.status?.pendingDeletions ?? []).map((p) =>
    objectKey({ apiVersion: p.apiVersion, kind: p.kind, metadata: { name: p.name, namespace } }),
  );
  return new Set([...listedObjectKeys(bundle), ...pending]);
}

/**
 * The countdowns of the record that a finalize pass's fresh lists show over:
 * an object of a listed kind that is gone or not controlled by the Bundle
 * (handed over, let go, cancelled by hand while the finalizer held). Its
 * entry goes, so a copy of its old stamp written back later reads as none
 * (red team 11). An object of a kind not listed says nothing.
 */
export function notHeldIn(types: readonly ResourceType[], objects: readonly LiveObject[], bundle: Bundle): (p: PendingDeletion) => boolean {
  const listedKinds = new Set(types.map((t) => `${t.group}/${t.kind}`));
  const held = new Set(
    objects.filter((o) => isControlledBy(o, bundle.metadata.uid)).map((o) => `${groupOf(o.apiVersion)}/${o.kind}/${o.metadata.name}`),
  );
  return (p) => listedKinds.has(`${groupOf(p.apiVersion)}/${p.kind}`) && !held.has(`${groupOf(p.apiVersion)}/${p.kind}/${p.name}`);
}
