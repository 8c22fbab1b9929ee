/**
 * The Bundle as an ApplySet (KEP-3659): its id and the part-of label of its
 * members (the parent's own metadata: applyset-parent.ts). This is a
 * description for tools that speak the protocol (`kubectl get -l
 * applyset.kubernetes.io/part-of=ID`, and kubectl's prune, which refuses a
 * set another tool manages); nothing the operator decides reads it. What
 * the operator deletes goes by the controller reference and the kind
 * inventory (status.managedKinds) only, so another tool that edits or drops
 * these labels changes what `kubectl get -l` shows and nothing else.
 * Pure.
 */
import { createHash } from 'node:crypto';
import type { OwnerReference } from '../../api/resource.js';
import { ApplySetLabels, BUNDLE_KIND, GROUP } from '../../api/names.js';
import { jsonPointerSegment, type JsonPatchOperation } from './objects.js';
import { isBundleReference } from './owner-references.js';

/**
 * The ApplySet id of the Bundle `name` in `namespace`, as the KEP defines
 * it for any parent: `applyset-` + base64url, unpadded, of
 * sha256(`<name>.<namespace>.<kind>.<group>`) + `-v1`. Always 55
 * characters (43 of hash), so it fits a label value (63) whatever the
 * Bundle's name (up to 253): kubectl computes the same value and checks it
 * against the Bundle's id label.
 */
export function applySetId(name: string, namespace: string): string {
  const digest = createHash('sha256').update([name, namespace, BUNDLE_KIND, GROUP].join('.'), 'utf8').digest('base64url');
  return `applyset-${digest}-v1`;
}

/**
 * When an object is let go (released, orphaned, handed over): the part-of
 * label goes with the references, in the same guarded patch, when it names
 * a Bundle whose reference that patch takes out. A value that names some
 * other set is not the operator's and stays. Taking it off at the release
 * rather than leaving it is the safe side: a label naming a set whose
 * parent is gone (or no longer holds the object) would make the object look
 * like a member to a tool that prunes that set by label, such as a kubectl
 * ApplySet that reuses the id; without the label the object is nobody's
 * member, and only a person can delete it.
 */
export function partOfRemoval(
  o: { metadata: { namespace?: string | undefined; labels?: Readonly<Record<string, string>> | undefined } },
  removed: readonly Pick<OwnerReference, 'apiVersion' | 'kind' | 'name'>[],
): JsonPatchOperation[] {
  const value = o.metadata.labels?.[ApplySetLabels.partOf];
  if (value === undefined) return [];
  const namespace = o.metadata.namespace ?? '';
  const ours = removed.some((ref) => isBundleReference(ref) && applySetId(ref.name, namespace) === value);
  return ours ? [{ op: 'remove', path: `/metadata/labels/${jsonPointerSegment(ApplySetLabels.partOf)}` }] : [];
}

/**
 * When a Bundle takes an object over (adopt, hand-over): a part-of label
 * that names another set is set to this Bundle's id in the same guarded
 * patch, so the object is never listed as a member of the Bundle that let
 * it go while it waits for this one's apply (which writes the label too).
 */
export function partOfTakeover(
  o: { metadata: { labels?: Readonly<Record<string, string>> | undefined } },
  bundle: { name: string; namespace: string },
): JsonPatchOperation[] {
  const value = o.metadata.labels?.[ApplySetLabels.partOf];
  const id = applySetId(bundle.name, bundle.namespace);
  return value === undefined || value === id
    ? []
    : [{ op: 'add', path: `/metadata/labels/${jsonPointerSegment(ApplySetLabels.partOf)}`, value: id }];
}

/** Whether the object is the ApplySet member of Bundle `name` in `namespace` (its part-of label: the apply writes it, a let-go or release takes it out). */
export function isMemberOf(
  o: { metadata: { labels?: Readonly<Record<string, string>> | undefined } },
  name: string,
  namespace: string | undefined,
): boolean {
  return namespace !== undefined && o.metadata.labels?.[ApplySetLabels.partOf] === applySetId(name, namespace);
}
