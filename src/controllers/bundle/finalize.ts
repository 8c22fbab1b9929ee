/**
 * The Bundle's finalizer (smith.atlassian.com/deleteResources): what happens
 * when a Bundle is deleted.
 *  - Foreground or orphan propagation: the garbage collector owns the
 *    cascade (or the orphaning); we only step aside.
 *  - Otherwise: objects without a deletionDelay are deleted, dependents
 *    first; objects with one are *released* — our controller ownerReference
 *    removed, the former-bundle label set, the countdown stamped — so that a
 *    Bundle deleted by mistake loses nothing that asked for a delay, and
 *    re-applying it adopts them back. Release takes out every
 *    ownerReference the operator wrote (the Bundle's and the dependency
 *    references), so no remaining owner can get the object collected
 *    before its own expiry; the user's references stay.
 *  - An object another live Bundle lists is neither deleted nor counted
 *    down: it is released without a countdown, and that Bundle takes it.
 * The finalizer goes only once a fresh list shows nothing controlled by
 * the Bundle any more.
 */
import type { Bundle } from '../../api/bundle.js';
import { Annotations, EventReasons, FIELD_MANAGER, Finalizers, Labels } from '../../api/names.js';
import { jsonPointerSegment, type JsonPatchOperation, type LiveObject } from '../../core/bundle/objects.js';
import { claimsByObject, userReferences } from '../../core/bundle/ownership.js';
import { markPatch, planPrune } from '../../core/bundle/prune.js';
import { decideSoftDelete } from '../../core/softdelete/decide.js';
import type { KubeClient } from '../../kube/client.js';
import type { Discovery } from '../../kube/discovery.js';
import { errorMessage, isConflict, isNotFound } from '../../kube/errors.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../runtime/clock.js';
import type { WorkResult } from '../../runtime/workqueue.js';
import type { EventRecorder } from '../events.js';
import { BUNDLE_RESOURCE_TYPE, bundleTarget } from './bundle-resource.js';
import type { ObjectCache } from './object-cache.js';

export interface FinalizeInput {
  bundle: Bundle;
  live: KubeObject;
  client: KubeClient;
  discovery: Discovery;
  objects: ObjectCache;
  events: EventRecorder;
  serverTime: ServerTime;
  logger: Logger;
  /** Kinds the Bundle controlled objects of (spec and status.managedKinds). */
  kindsToWatch: ResourceType[];
}

export async function finalizeBundle(input: FinalizeInput): Promise<WorkResult> {
  const { bundle, client } = input;
  const finalizers = bundle.metadata.finalizers ?? [];
  if (!finalizers.includes(Finalizers.deleteResources)) return 'forget';
  const target = bundleTarget(bundle);

  // The garbage collector carries out foreground and orphan deletes.
  if (finalizers.includes(Finalizers.foregroundDeletion) || finalizers.includes(Finalizers.orphan)) {
    await removeFinalizer(input);
    return 'forget';
  }

  const types = await kindsOfBundle(input);
  for (const rt of types) await input.objects.ensure(rt);
  const controlled = input.objects.controlledBy(bundle.metadata.uid) as LiveObject[];
  // What other live Bundles list, read fresh: those objects are theirs to take, never deleted here.
  const { items: bundlesNow } = await client.list(BUNDLE_RESOURCE_TYPE, bundle.metadata.namespace);
  const claims = claimsByObject(bundlesNow);
  const now = input.serverTime.lowerBound();
  const stampAt = input.serverTime.upperBound();
  if (now === undefined || stampAt === undefined) return 'requeue';
  // Reuse the prune ordering (dependents first); a deleted Bundle lists nothing.
  const actions = planPrune({ controlled, inSpec: new Set(), now, stampAt, selfUid: bundle.metadata.uid, claims });
  // Objects applied before dependency references were recorded: a reference to a sibling is the operator's.
  const siblings = new Set(controlled.flatMap((o) => (o.metadata.uid !== undefined ? [o.metadata.uid] : [])));
  let failures = 0;
  for (const action of actions) {
    const t = action.target;
    const rt = await input.discovery.resolve(t.apiVersion, t.kind);
    if (!rt || !t.uid) continue;
    const obj = controlled.find((o) => o.metadata.uid === t.uid);
    if (!obj) continue;
    try {
      if (action.action === 'listed-elsewhere') {
        await client.patch(rt, t.namespace, t.name, releasePatch(obj, bundle, siblings, undefined), 'json', { fieldManager: FIELD_MANAGER });
        await input.events.normal(target, EventReasons.Released, `released ${t.kind} ${t.name} to Bundle ${action.by.name}, which lists it`);
      } else if (action.action === 'delete' && !action.afterDelay) {
        await client.delete(rt, t.namespace, t.name, { uid: t.uid, ...(t.resourceVersion ? { resourceVersion: t.resourceVersion } : {}), propagationPolicy: 'Background' });
        await input.events.normal(target, EventReasons.Pruned, `deleted ${t.kind} ${t.name}: its Bundle is being deleted`);
      } else if (action.action !== 'terminating') {
        // mark, wait, expired, invalid: the object asked for a delay (or has an unreadable one): release it, never delete it here.
        await client.patch(rt, t.namespace, t.name, releasePatch(obj, bundle, siblings, { now, stampAt }), 'json', { fieldManager: FIELD_MANAGER });
        await input.events.normal(target, EventReasons.Released, `released ${t.kind} ${t.name}: it has a deletionDelay and is kept until it expires; re-apply the Bundle to keep it`);
      }
    } catch (err) {
      if (!isNotFound(err)) failures++;
      input.logger.warn({ object: `${t.kind}/${t.name}`, err: errorMessage(err) }, 'finalizing: action failed');
    }
  }
  if (failures > 0) return 'requeue';

  // Verify on fresh lists, not the cache, before letting the Bundle go: an
  // object still controlled by it would be collected, delay or not.
  for (const rt of types) {
    const { items } = await client.list(rt, bundle.metadata.namespace, { metadataOnly: true });
    const left = items.filter((o) => o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === bundle.metadata.uid) && o.metadata.deletionTimestamp === undefined);
    if (left.length > 0) return { requeueAfterMs: 500 };
  }
  await removeFinalizer(input);
  return 'forget';
}

async function kindsOfBundle(input: FinalizeInput): Promise<ResourceType[]> {
  const byKey = new Map<string, ResourceType>();
  for (const rt of input.kindsToWatch) byKey.set(`${rt.apiVersion}/${rt.kind}`, rt);
  for (const r of input.bundle.spec.resources) {
    const obj = r.spec.object;
    if (!obj) continue;
    const rt = await input.discovery.resolve(obj.apiVersion, obj.kind);
    if (rt?.namespaced) byKey.set(`${rt.apiVersion}/${rt.kind}`, rt);
  }
  return [...byKey.values()];
}

/**
 * Takes out every ownerReference the operator wrote (the Bundle's and the
 * recorded dependency references; guarded by a test on the whole list, so a
 * concurrent change fails the patch). With `countdown`, also names the former
 * Bundle and starts the countdown if it has not started; without, the object
 * is simply let go (another Bundle lists it and takes it).
 */
function releasePatch(obj: LiveObject, bundle: Bundle, siblings: ReadonlySet<string>, countdown: { now: number; stampAt: number } | undefined): JsonPatchOperation[] {
  const refs = obj.metadata.ownerReferences ?? [];
  const ops: JsonPatchOperation[] = [
    { op: 'test', path: '/metadata/ownerReferences', value: refs },
    { op: 'replace', path: '/metadata/ownerReferences', value: userReferences(obj.metadata, { bundleUid: bundle.metadata.uid, legacySiblingUids: siblings }) },
  ];
  if (obj.metadata.annotations?.[Annotations.dependencyReferences] !== undefined) ops.push({ op: 'remove', path: `/metadata/annotations/${jsonPointerSegment(Annotations.dependencyReferences)}` });
  if (countdown === undefined) return ops;
  if (obj.metadata.labels === undefined) ops.push({ op: 'add', path: '/metadata/labels', value: {} });
  ops.push({ op: 'add', path: `/metadata/labels/${jsonPointerSegment(Labels.formerBundle)}`, value: bundle.metadata.name });
  const decision = decideSoftDelete({ inSpec: false, annotations: obj.metadata.annotations, now: countdown.now, stampAt: countdown.stampAt });
  // The ownerReferences test above already guards the whole patch; the stamp needs no second test.
  if (decision.action === 'mark') ops.push(...markPatch(obj, decision.deletionTimestamp).filter((op) => op.op !== 'test'));
  return ops;
}

async function removeFinalizer(input: FinalizeInput): Promise<void> {
  const { bundle, client } = input;
  const remaining = (bundle.metadata.finalizers ?? []).filter((f) => f !== Finalizers.deleteResources);
  try {
    await client.patch(BUNDLE_RESOURCE_TYPE, bundle.metadata.namespace, bundle.metadata.name, { metadata: { finalizers: remaining, resourceVersion: bundle.metadata.resourceVersion } }, 'merge');
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return; // a newer version comes through the watch
    throw err;
  }
}
