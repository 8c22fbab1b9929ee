/**
 * The JSON patches the collector sends. Each one pins what it was computed
 * from with `test` ops, so that a concurrent change of the object fails the
 * patch (a stale write: re-read and decide again) instead of removing the
 * wrong reference or finalizer.
 */
import type { JsonPatchOperation } from '../bundle/objects.js';

/**
 * Removes the references to `uids`, highest index first so that the earlier
 * indices stay valid; each removal is guarded by a `test` of the UID at that
 * index, and the whole patch by a `test` of the object's own UID (an object
 * re-created under the same name is another object: decide again).
 */
export function removeRefsPatch(objectUid: string, refs: readonly { uid: string }[], uids: ReadonlySet<string>): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  for (let i = refs.length - 1; i >= 0; i--) {
    const ref = refs[i];
    if (!ref || !uids.has(ref.uid)) continue;
    ops.push(
      { op: 'test', path: `/metadata/ownerReferences/${i}/uid`, value: ref.uid },
      { op: 'remove', path: `/metadata/ownerReferences/${i}` },
    );
  }
  return pinnedTo(objectUid, ops);
}

/** The ops, preceded by a `test` of the object's UID; nothing when there is nothing to do. */
function pinnedTo(objectUid: string, ops: JsonPatchOperation[]): JsonPatchOperation[] {
  return ops.length === 0 ? ops : [{ op: 'test', path: '/metadata/uid', value: objectUid }, ...ops];
}

/** Sets blockOwnerDeletion=false on every reference that blocks (each guarded by a UID test, the patch by the object's UID); empty when none blocks. */
export function unblockRefsPatch(
  objectUid: string,
  refs: readonly { uid: string; blockOwnerDeletion?: boolean | undefined }[],
): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  refs.forEach((ref, i) => {
    if (!ref.blockOwnerDeletion) return;
    ops.push(
      { op: 'test', path: `/metadata/ownerReferences/${i}/uid`, value: ref.uid },
      { op: 'add', path: `/metadata/ownerReferences/${i}/blockOwnerDeletion`, value: false },
    );
  });
  return pinnedTo(objectUid, ops);
}

/**
 * Removes one finalizer from the list it was read in, on the object of that
 * UID: the list is tested whole, so a finalizer added or removed meanwhile
 * fails the patch. Undefined when the finalizer is not in the list (nothing
 * to remove).
 */
export function removeFinalizerPatch(uid: string, finalizers: readonly string[], finalizer: string): JsonPatchOperation[] | undefined {
  if (!finalizers.includes(finalizer)) return undefined;
  return [
    { op: 'test', path: '/metadata/uid', value: uid },
    { op: 'test', path: '/metadata/finalizers', value: finalizers },
    { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter((f) => f !== finalizer) },
  ];
}
