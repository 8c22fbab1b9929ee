/**
 * `bundlesmith cancel` and `delete-now`: what is done to one soft-deleted
 * object named on the command line, and the lookup of that object that
 * `approve` (approve.ts) shares. Separate from pending-list.ts: these write
 * to the cluster, the listing only reads it.
 */
import { referencesPatch } from '../core/bundle/release.js';
import { formerBundleOf } from '../core/softdelete/former-bundle.js';
import { Annotations, Labels } from '../api/names.js';
import { controllerOf, jsonPointerSegment } from '../core/bundle/objects.js';
import { isBundleReference } from '../core/bundle/owner-references.js';
import { errorMessage, isNotFound, isStaleWrite } from '../kube/errors.js';
import { guardedDelete } from '../kube/guarded-write.js';
import type { KubeObject, ResourceType } from '../kube/types.js';
import { EXIT_PROBLEMS, formatObjectRef, type ObjectRef } from './args.js';
import { resolveObjectRef, type Cluster } from './cluster.js';
import { CliError, type CliIo } from './io.js';

export interface Target {
  rt: ResourceType;
  object: KubeObject;
  ref: string;
}

export async function pendingTarget(cluster: Cluster, ref: ObjectRef, namespace: string): Promise<Target> {
  const rt = resolveObjectRef(cluster.discovery.resources(), ref);
  if (!rt) throw new CliError(`the API server serves no kind "${ref.kind}"${ref.group ? ` in group ${ref.group}` : ''}`, EXIT_PROBLEMS);
  if (!rt.namespaced) throw new CliError(`${rt.kind} is cluster-scoped: Bundles own namespaced objects only`, EXIT_PROBLEMS);
  const object = await cluster.client.tryGet(rt, namespace, ref.name);
  const printable = formatObjectRef(rt.apiVersion, rt.kind, ref.name);
  if (!object) throw new CliError(`${printable} not found in namespace ${namespace}`, EXIT_PROBLEMS);
  if (object.metadata.annotations?.[Annotations.deletionTimestamp] === undefined) {
    throw new CliError(
      `${printable} in ${namespace} is not pending deletion (no ${Annotations.deletionTimestamp} annotation)`,
      EXIT_PROBLEMS,
    );
  }
  return { rt, object, ref: printable };
}

export function failed(action: string, target: Target, err: unknown): CliError {
  if (isStaleWrite(err))
    return new CliError(
      `${action} ${target.ref}: it changed since it was read (${errorMessage(err)}); run the command again`,
      EXIT_PROBLEMS,
    );
  if (isNotFound(err)) return new CliError(`${action} ${target.ref}: it is gone already`, EXIT_PROBLEMS);
  return new CliError(`${action} ${target.ref}: ${errorMessage(err)}`, EXIT_PROBLEMS);
}

/**
 * Stops the countdown and keeps the object. Removing the stamp alone would
 * not do: the operator would stamp it again on its next pass (the object is
 * still out of its Bundle's spec, or still labelled as released). So the
 * object also leaves the operator's hands: it loses every ownerReference the
 * operator wrote (the Bundle's controller reference and the dependency
 * references; the user's own stay), and a released one its former-bundle label.
 * Listing it in a Bundle again (re-applying) adopts it.
 */
export async function cancelPending(cluster: Cluster, ref: ObjectRef, namespace: string, io: CliIo): Promise<void> {
  const target = await pendingTarget(cluster, ref, namespace);
  const { metadata } = target.object;
  const ops: unknown[] = [
    // The decision was made on this object as read: a different one must not be touched.
    { op: 'test', path: '/metadata/uid', value: metadata.uid },
    { op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.deletionTimestamp)}` },
  ];
  const controller = controllerOf({ metadata });
  const bundleRef = controller && isBundleReference(controller) ? controller : undefined;
  const formerBundle = formerBundleOf(metadata);
  // Every reference the operator wrote goes (any Bundle's, claims included with their record, and the dependency
  // references), as a release lets go (core/bundle/release.ts): a remaining owner that is deleted would get the object
  // collected after all. The user's stay.
  ops.push(...referencesPatch(target.object, {}));
  if (metadata.labels?.[Labels.formerBundle] !== undefined)
    ops.push({ op: 'remove', path: `/metadata/labels/${jsonPointerSegment(Labels.formerBundle)}` });
  for (const name of [Annotations.formerBundle, Annotations.stampProof, Annotations.releaseProof, Annotations.deletionApproved]) {
    if (metadata.annotations?.[name] !== undefined) ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(name)}` });
  }
  try {
    await cluster.client.patch(target.rt, namespace, target.object.metadata.name, ops, 'json', { fieldManager: 'bundlesmith-cli' });
  } catch (err) {
    throw failed('cancel', target, err);
  }
  io.out(`cancelled: ${target.ref} in ${namespace} will not be deleted`);
  if (bundleRef) {
    io.out(
      `it is no longer controlled by Bundle ${bundleRef.name}; add it back to that Bundle's spec and re-apply the Bundle to manage it again (the Bundle adopts it)`,
    );
  } else if (formerBundle !== undefined) {
    io.out(`it was released by deleted Bundle ${formerBundle} and is now unowned; re-apply a Bundle that lists it to adopt it`);
  }
}

/** Deletes a pending object now, only if it is still the object that was read (UID and resourceVersion preconditions). */
export async function deletePendingNow(cluster: Cluster, ref: ObjectRef, namespace: string, io: CliIo): Promise<void> {
  const target = await pendingTarget(cluster, ref, namespace);
  const { uid, resourceVersion } = target.object.metadata;
  // One send; `failed` words each error (a 422 without field causes as a change, as isStaleWrite counts it).
  const deleted = await guardedDelete(
    cluster.client,
    { rt: target.rt, namespace, name: target.object.metadata.name },
    { opts: { uid, resourceVersion, propagationPolicy: 'Background' }, stale: 'conflict-or-failed-test' },
  );
  if (deleted.kind === 'gone' && !deleted.error) throw new CliError(`delete ${target.ref}: it is gone already`, EXIT_PROBLEMS);
  if (deleted.kind !== 'written' && deleted.kind !== 'declined') throw failed('delete', target, deleted.error);
  io.out(`deleted: ${target.ref} in ${namespace} (uid ${uid})`);
}
