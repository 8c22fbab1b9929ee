/**
 * `bundlesmith pending`, `cancel` and `delete-now`: soft-deleted objects.
 * An object is pending deletion while it carries the deletionTimestamp
 * annotation; the operator deletes it at deletionTimestamp + deletionDelay.
 * Two kinds exist: objects a live Bundle dropped from its spec (listed in the
 * Bundle's status.pendingDeletions) and objects a deleted Bundle released
 * (labelled former-bundle, swept by the operator with no Bundle left).
 */
import { Annotations, Labels } from '../api/names.js';
import { controllerOf, jsonPointerSegment } from '../core/bundle/objects.js';
import { isBundleReference, userReferences } from '../core/bundle/ownership.js';
import { formatGoDuration } from '../core/duration.js';
import { formatRfc3339, parseRfc3339, readDeletionDelay } from '../core/softdelete/decide.js';
import { errorMessage, isConflict, isNotFound, isInvalid } from '../kube/errors.js';
import type { KubeObject, ResourceType } from '../kube/types.js';
import { BUNDLE_RESOURCE_TYPE } from '../controllers/bundle/bundle-resource.js';
import { EXIT_PROBLEMS, formatObjectRef, type ObjectRef } from './args.js';
import { resolveObjectRef, type Cluster } from './cluster.js';
import { CliError, type CliIo } from './io.js';

export interface PendingObject {
  namespace: string;
  apiVersion: string;
  kind: string;
  name: string;
  /** Bundle that dropped (pending) or released (released) it. */
  bundle: string;
  state: 'pending' | 'released';
  deletionTimestamp: string;
  /** When it will be deleted; undefined when the annotations cannot be read (the operator keeps such objects). */
  deleteAfter?: string;
  problem?: string;
}

/** When a released object will go, from its own annotations (as the operator's sweep reads them). */
export function expiryOf(annotations: Readonly<Record<string, string>>): { deleteAfter?: string; problem?: string } {
  const stamp = annotations[Annotations.deletionTimestamp];
  const stampMs = stamp === undefined ? undefined : parseRfc3339(stamp);
  if (stampMs === undefined) return { problem: `unreadable ${Annotations.deletionTimestamp} ${JSON.stringify(stamp)}: the operator restarts the countdown` };
  const delay = readDeletionDelay(annotations);
  if (delay === undefined) return { problem: `no ${Annotations.deletionDelay}: the operator keeps it` };
  if (!delay.ok) return { problem: `${delay.message}: the operator keeps it` };
  return { deleteAfter: formatRfc3339(Math.ceil(stampMs + delay.ms)) };
}

/** "in 1h29m0s", "overdue by 3s" or "-". */
export function formatDue(deleteAfter: string | undefined, now: number): string {
  const at = deleteAfter === undefined ? undefined : parseRfc3339(deleteAfter);
  if (at === undefined) return '-';
  const seconds = Math.round((at - now) / 1000) * 1000;
  return seconds >= 0 ? `in ${formatGoDuration(seconds)}` : `overdue by ${formatGoDuration(-seconds)}`;
}

export function formatPendingTable(items: readonly PendingObject[], now: number): string[] {
  const rows = [
    ['NAMESPACE', 'OBJECT', 'BUNDLE', 'STATE', 'DELETE-AFTER', 'DUE'],
    ...items.map((p) => [p.namespace, formatObjectRef(p.apiVersion, p.kind, p.name), p.bundle, p.state, p.deleteAfter ?? `- (${p.problem ?? 'unknown'})`, formatDue(p.deleteAfter, now)]),
  ];
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col] ?? 0))).join('  '));
}

/** The first listed version of each namespaced, listable group/resource: where released objects can be. */
function releasableResources(resources: readonly ResourceType[]): ResourceType[] {
  const seen = new Set<string>();
  const out: ResourceType[] = [];
  for (const rt of resources) {
    const id = `${rt.group}/${rt.plural}`;
    if (seen.has(id)) continue;
    seen.add(id);
    if (rt.namespaced && rt.verbs.includes('list') && rt.plural !== 'events') out.push(rt);
  }
  return out;
}

export async function listPending(cluster: Cluster, namespace: string | undefined, io: CliIo): Promise<PendingObject[]> {
  const out: PendingObject[] = [];
  io.err(`reading Bundles${namespace ? ` in ${namespace}` : ' in all namespaces'}`);
  const { items: bundles } = await cluster.client.list(BUNDLE_RESOURCE_TYPE, namespace);
  for (const bundle of bundles) {
    const pending = (bundle.status as { pendingDeletions?: { apiVersion: string; kind: string; name: string; deletionTimestamp: string; deleteAfter: string }[] } | undefined)?.pendingDeletions ?? [];
    for (const p of pending) {
      out.push({ namespace: bundle.metadata.namespace ?? '', apiVersion: p.apiVersion, kind: p.kind, name: p.name, bundle: bundle.metadata.name, state: 'pending', deletionTimestamp: p.deletionTimestamp, deleteAfter: p.deleteAfter });
    }
  }
  const resources = releasableResources(cluster.discovery.resources());
  io.err(`scanning ${resources.length} resource types for objects released by deleted Bundles`);
  for (const rt of resources) {
    let items: KubeObject[];
    try {
      ({ items } = await cluster.client.list(rt, namespace, { metadataOnly: true, labelSelector: Labels.formerBundle }));
    } catch (err) {
      io.err(`  skipped ${rt.plural}${rt.group ? `.${rt.group}` : ''}: ${errorMessage(err)}`);
      continue;
    }
    for (const item of items) {
      const annotations = item.metadata.annotations ?? {};
      const stamp = annotations[Annotations.deletionTimestamp];
      if (stamp === undefined || controllerOf(item) !== undefined) continue;
      out.push({
        namespace: item.metadata.namespace ?? '',
        apiVersion: rt.apiVersion,
        kind: rt.kind,
        name: item.metadata.name,
        bundle: item.metadata.labels?.[Labels.formerBundle] ?? '',
        state: 'released',
        deletionTimestamp: stamp,
        ...expiryOf(annotations),
      });
    }
  }
  return out.sort((a, b) => (a.deleteAfter ?? '~').localeCompare(b.deleteAfter ?? '~') || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

interface Target {
  rt: ResourceType;
  object: KubeObject;
  ref: string;
}

async function pendingTarget(cluster: Cluster, ref: ObjectRef, namespace: string): Promise<Target> {
  const rt = resolveObjectRef(cluster.discovery.resources(), ref);
  if (!rt) throw new CliError(`the API server serves no kind "${ref.kind}"${ref.group ? ` in group ${ref.group}` : ''}`, EXIT_PROBLEMS);
  if (!rt.namespaced) throw new CliError(`${rt.kind} is cluster-scoped: Bundles own namespaced objects only`, EXIT_PROBLEMS);
  const object = await cluster.client.tryGet(rt, namespace, ref.name);
  const printable = formatObjectRef(rt.apiVersion, rt.kind, ref.name);
  if (!object) throw new CliError(`${printable} not found in namespace ${namespace}`, EXIT_PROBLEMS);
  if (object.metadata.annotations?.[Annotations.deletionTimestamp] === undefined) {
    throw new CliError(`${printable} in ${namespace} is not pending deletion (no ${Annotations.deletionTimestamp} annotation)`, EXIT_PROBLEMS);
  }
  return { rt, object, ref: printable };
}

function failed(action: string, target: Target, err: unknown): CliError {
  if (isConflict(err) || isInvalid(err)) return new CliError(`${action} ${target.ref}: it changed since it was read (${errorMessage(err)}); run the command again`, EXIT_PROBLEMS);
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
  const refs = metadata.ownerReferences ?? [];
  const bundleRef = refs.find((r) => r.controller === true && isBundleReference(r));
  const formerBundle = metadata.labels?.[Labels.formerBundle];
  // Every reference the operator wrote goes (the Bundle's and the dependency references): a
  // remaining owner that is deleted would get the object collected after all. The user's stay.
  const kept = userReferences(metadata, { bundleUid: bundleRef?.uid });
  if (kept.length !== refs.length) {
    ops.push({ op: 'test', path: '/metadata/ownerReferences', value: refs }, { op: 'replace', path: '/metadata/ownerReferences', value: kept });
  }
  if (metadata.annotations?.[Annotations.dependencyReferences] !== undefined) ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.dependencyReferences)}` });
  if (formerBundle !== undefined) ops.push({ op: 'remove', path: `/metadata/labels/${jsonPointerSegment(Labels.formerBundle)}` });
  try {
    await cluster.client.patch(target.rt, namespace, target.object.metadata.name, ops, 'json', { fieldManager: 'bundlesmith-cli' });
  } catch (err) {
    throw failed('cancel', target, err);
  }
  io.out(`cancelled: ${target.ref} in ${namespace} will not be deleted`);
  if (bundleRef) {
    io.out(`it is no longer controlled by Bundle ${bundleRef.name}; add it back to that Bundle's spec and re-apply the Bundle to manage it again (the Bundle adopts it)`);
  } else if (formerBundle !== undefined) {
    io.out(`it was released by deleted Bundle ${formerBundle} and is now unowned; re-apply a Bundle that lists it to adopt it`);
  }
}

/** Deletes a pending object now, only if it is still the object that was read (UID and resourceVersion preconditions). */
export async function deletePendingNow(cluster: Cluster, ref: ObjectRef, namespace: string, io: CliIo): Promise<void> {
  const target = await pendingTarget(cluster, ref, namespace);
  const { uid, resourceVersion } = target.object.metadata;
  try {
    const result = await cluster.client.delete(target.rt, namespace, target.object.metadata.name, { uid, resourceVersion, propagationPolicy: 'Background' });
    if (result === 'not-found') throw new CliError(`delete ${target.ref}: it is gone already`, EXIT_PROBLEMS);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw failed('delete', target, err);
  }
  io.out(`deleted: ${target.ref} in ${namespace} (uid ${uid})`);
}
