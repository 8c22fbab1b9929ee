/**
 * The Bundle's finalizer (smith.atlassian.com/deleteResources): fetch, let
 * core/bundle/finalize decide, carry the steps out. What happens to each
 * object, per propagation (background, foreground, orphan), is decided
 * there. Every pass reads fresh (the objects of the Bundle's kinds and the
 * namespace's Bundles), so the finalizer goes only once a pass on fresh lists
 * finds nothing left to write.
 */
import type { Bundle } from '../../api/bundle.js';
import { FIELD_MANAGER, Finalizers } from '../../api/names.js';
import { finalizeNext, planFinalize, propagationOf, type FinalizeOutcome, type FinalizeStep } from '../../core/bundle/finalize.js';
import { objectKey, type LiveObject } from '../../core/bundle/objects.js';
import { claimsByObject, listedObjectKeys } from '../../core/bundle/ownership.js';
import type { KubeClient } from '../../kube/client.js';
import type { Discovery } from '../../kube/discovery.js';
import { errorMessage, isConflict, isInvalid, isNotFound } from '../../kube/errors.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../runtime/clock.js';
import type { WorkResult } from '../../runtime/workqueue.js';
import type { EventRecorder } from '../events.js';
import { BUNDLE_RESOURCE_TYPE, bundleTarget } from './bundle-resource.js';
import type { ObjectCache } from './object-cache.js';

/** After a pass that wrote, decide again this soon (on fresh lists). */
const RECHECK_MS = 500;

export interface FinalizerContext {
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

export async function finalizeBundle(input: FinalizerContext): Promise<WorkResult> {
  const { bundle, client } = input;
  const namespace = bundle.metadata.namespace;
  if (!(bundle.metadata.finalizers ?? []).includes(Finalizers.deleteResources)) return 'forget';

  // 1. Fetch, fresh: the objects of every kind the Bundle may hold, and who else lists them.
  const types = await kindsOfBundle(input);
  // The watches only bring us back when those objects change; decisions are made on the lists below.
  for (const rt of types) await input.objects.ensure(rt);
  const objects: LiveObject[] = [];
  for (const rt of types) objects.push(...((await client.list(rt, namespace, { metadataOnly: true })).items as LiveObject[]));
  const { items: bundlesNow } = await client.list(BUNDLE_RESOURCE_TYPE, namespace);
  const now = input.serverTime.lowerBound();
  const stampAt = input.serverTime.upperBound();
  if (now === undefined || stampAt === undefined) return 'requeue';

  // 2. Decide.
  const plan = planFinalize({
    propagation: propagationOf(bundle.metadata.finalizers),
    bundle: { name: bundle.metadata.name, uid: bundle.metadata.uid },
    objects,
    coordinates: coordinatesOf(bundle),
    claims: claimsByObject(bundlesNow),
    now,
    stampAt,
  });
  if (plan.done) {
    await removeFinalizer(input);
    return 'forget';
  }

  // 3. Act, one step at a time in the plan's order (background: dependents first).
  const outcome: FinalizeOutcome = { wrote: 0, changed: 0, failed: 0 };
  for (const step of plan.steps) await carryOut(step, input, outcome);
  const next = finalizeNext(outcome, RECHECK_MS);
  return next.kind === 'retry' ? 'requeue' : { requeueAfterMs: next.afterMs };
}

async function carryOut(step: FinalizeStep, input: FinalizerContext, outcome: FinalizeOutcome): Promise<void> {
  if (step.action === 'leave') return;
  const t = step.target;
  const rt = await input.discovery.resolve(t.apiVersion, t.kind);
  if (!rt || !t.uid) return;
  try {
    if (step.action === 'delete') {
      const result = await input.client.delete(rt, t.namespace, t.name, { uid: t.uid, ...(t.resourceVersion ? { resourceVersion: t.resourceVersion } : {}), propagationPolicy: 'Background' });
      if (result === 'deleted') await input.events.normal(bundleTarget(input.bundle), step.event.reason, step.event.message);
    } else {
      await input.client.patch(rt, t.namespace, t.name, step.patch, 'json', { fieldManager: FIELD_MANAGER });
      await input.events.normal(bundleTarget(input.bundle), step.event.reason, step.event.message);
    }
    outcome.wrote++;
  } catch (err) {
    // Changed since it was read (a precondition or a patch test failed) or gone: the next pass decides on what is there.
    if (isConflict(err) || isInvalid(err) || isNotFound(err)) outcome.changed++;
    else outcome.failed++;
    input.logger.warn({ object: `${t.kind}/${t.name}`, step: step.action, err: errorMessage(err) }, 'finalizing: step failed');
  }
}

/** The objects the Bundle's spec lists and its status counts as pending deletion, by objectKey. */
function coordinatesOf(bundle: Bundle): Set<string> {
  const namespace = bundle.metadata.namespace;
  const pending = (bundle.status?.pendingDeletions ?? []).map((p) => objectKey({ apiVersion: p.apiVersion, kind: p.kind, metadata: { name: p.name, namespace } }));
  return new Set([...listedObjectKeys(bundle), ...pending]);
}

async function kindsOfBundle(input: FinalizerContext): Promise<ResourceType[]> {
  const byKey = new Map<string, ResourceType>();
  for (const rt of input.kindsToWatch) if (rt.namespaced) byKey.set(`${rt.apiVersion}/${rt.kind}`, rt);
  for (const r of input.bundle.spec.resources) {
    const obj = r.spec.object;
    if (!obj) continue;
    const rt = await input.discovery.resolve(obj.apiVersion, obj.kind);
    if (rt?.namespaced) byKey.set(`${rt.apiVersion}/${rt.kind}`, rt);
  }
  return [...byKey.values()];
}

async function removeFinalizer(input: FinalizerContext): Promise<void> {
  const { bundle, client } = input;
  const remaining = (bundle.metadata.finalizers ?? []).filter((f) => f !== Finalizers.deleteResources);
  try {
    await client.patch(BUNDLE_RESOURCE_TYPE, bundle.metadata.namespace, bundle.metadata.name, { metadata: { finalizers: remaining, resourceVersion: bundle.metadata.resourceVersion } }, 'merge');
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return; // a newer version comes through the watch
    throw err;
  }
}
