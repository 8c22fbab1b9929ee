/**
 * The Bundle's finalizer (smith.atlassian.com/deleteResources): fetch, let
 * core/bundle/finalize decide, carry the steps out through the BundleApi
 * port. What happens to each object, per propagation (background,
 * foreground, orphan), is decided there. Every pass reads fresh (the objects
 * of the Bundle's kinds and the namespace's Bundles), so the finalizer goes
 * only once a pass on fresh lists finds nothing left to write. A pass that
 * cannot let it go says why in the Bundle's status.
 */
import type { Bundle } from '../../api/bundle.js';
import { BUNDLE_RESOURCE_TYPE } from '../../api/bundle-resource.js';
import { FIELD_MANAGER, Finalizers } from '../../api/names.js';
import { finalizingStatus, interruptedStatus, type FinalizeReport } from '../../core/bundle/exit-status.js';
import { planFinalize, propagationOf, type FinalizeStep } from '../../core/bundle/finalize.js';
import { finalizeNext, type FinalizeOutcome } from '../../core/bundle/next-pass.js';
import { kindKey, objectKey, type LiveObject } from '../../core/bundle/objects.js';
import { claimsByObject, listedObjectKeys } from '../../core/bundle/ownership.js';
import { formatRfc3339 } from '../../core/rfc3339.js';
import type { ReleaseSigner } from '../../core/softdelete/provenance.js';
import { resolveKindKeys, resolveSpecKinds } from '../../kube/discovery.js';
import { errorMessage, isConflict, isNotFound, isStaleWrite } from '../../kube/errors.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock, ServerTime } from '../../runtime/clock.js';
import type { WorkResult } from '../../runtime/workers.js';
import type { EventRecorder } from '../events.js';
import type { BundleApi } from './api.js';
import { bundleTarget } from './bundle-resource.js';
import { statusSubject, writeBundleStatus } from './status-writer.js';

/** After a pass that wrote, decide again this soon (on fresh lists). */
const RECHECK_MS = 500;

export interface FinalizerContext {
  bundle: Bundle;
  /** The Bundle as stored (its status is written at this resourceVersion). */
  live: KubeObject;
  api: BundleApi;
  /** Starts (once) and waits for the watch of a kind, so changes to its objects bring the Bundle back. */
  watch: (rt: ResourceType) => Promise<unknown>;
  events: EventRecorder;
  serverTime: ServerTime;
  clock: Pick<Clock, 'now'>;
  logger: Logger;
  /** Signs releases (the operator's release key). */
  signRelease: ReleaseSigner;
}

export async function finalizeBundle(input: FinalizerContext): Promise<WorkResult> {
  const { bundle, api } = input;
  const namespace = bundle.metadata.namespace;
  if (!(bundle.metadata.finalizers ?? []).includes(Finalizers.deleteResources)) return 'forget';

  // 1. Fetch, fresh: the objects of every kind the Bundle may hold, and who else lists them.
  const types = await kindsOfBundle(input);
  // The watches only bring us back when those objects change; decisions are made on the lists below.
  for (const rt of types) await input.watch(rt);
  const objects: LiveObject[] = [];
  for (const rt of types) objects.push(...(await api.list(rt, namespace, { metadataOnly: true })).items);
  const { items: bundlesNow } = await api.list(BUNDLE_RESOURCE_TYPE, namespace);
  const now = input.serverTime.lowerBound();
  const stampAt = input.serverTime.upperBound();
  if (now === undefined || stampAt === undefined) {
    await writeStatus(input, interruptedStatus(statusSubject(input.live), "being deleted: waiting for the API server's time", nowIso(input)));
    return 'requeue';
  }

  // 2. Decide.
  const plan = planFinalize({
    propagation: propagationOf(bundle.metadata.finalizers),
    bundle: { name: bundle.metadata.name, uid: bundle.metadata.uid, defaults: bundle.spec.deletionDefaults },
    objects,
    coordinates: coordinatesOf(bundle),
    claims: claimsByObject(bundlesNow),
    now,
    stampAt,
    signRelease: input.signRelease,
  });
  if (plan.done) {
    await removeFinalizer(input);
    return 'forget';
  }

  // 3. Act, one step at a time in the plan's order (background: dependents first), then say why the Bundle is still here.
  const outcome: FinalizeOutcome = { wrote: 0, changed: 0, failed: 0 };
  const report: StepReport = { propagation: plan.propagation, steps: plan.steps, changed: [], failures: [] };
  for (const step of plan.steps) await carryOut(step, input, outcome, report);
  await writeStatus(input, finalizingStatus(statusSubject(input.live), report, nowIso(input)));
  const next = finalizeNext(outcome, RECHECK_MS);
  return next.kind === 'retry' ? 'requeue' : { requeueAfterMs: next.afterMs };
}

/** The report a pass fills in as it carries its steps out. */
interface StepReport extends FinalizeReport {
  changed: FinalizeReport['changed'][number][];
  failures: FinalizeReport['failures'][number][];
}

async function carryOut(step: FinalizeStep, input: FinalizerContext, outcome: FinalizeOutcome, report: StepReport): Promise<void> {
  if (step.action === 'leave') return;
  const t = step.target;
  const rt = await input.api.resolve(t.apiVersion, t.kind);
  if (!rt || !t.uid) return;
  try {
    if (step.action === 'delete') {
      const result = await input.api.delete(rt, t.namespace, t.name, { uid: t.uid, ...(t.resourceVersion ? { resourceVersion: t.resourceVersion } : {}), propagationPolicy: 'Background' });
      if (result === 'deleted') await input.events.normal(bundleTarget(input.bundle), step.event.reason, step.event.message);
    } else {
      await input.api.patch(rt, t.namespace, t.name, step.patch, 'json', { fieldManager: FIELD_MANAGER });
      await input.events.normal(bundleTarget(input.bundle), step.event.reason, step.event.message);
    }
    outcome.wrote++;
  } catch (err) {
    // Changed since it was read (a precondition or a patch test failed) or gone: the next pass decides on what is there.
    if (isStaleWrite(err) || isNotFound(err)) {
      outcome.changed++;
      report.changed.push(t);
    } else {
      outcome.failed++;
      report.failures.push({ target: t, action: step.action, message: errorMessage(err) });
    }
    input.logger.warn({ object: `${t.kind}/${t.name}`, step: step.action, err: errorMessage(err) }, 'finalizing: step failed');
  }
}

/** The objects the Bundle's spec lists and its status counts as pending deletion, by objectKey. */
function coordinatesOf(bundle: Bundle): Set<string> {
  const namespace = bundle.metadata.namespace;
  const pending = (bundle.status?.pendingDeletions ?? []).map((p) => objectKey({ apiVersion: p.apiVersion, kind: p.kind, metadata: { name: p.name, namespace } }));
  return new Set([...listedObjectKeys(bundle), ...pending]);
}

/** Namespaced resource types of status.managedKinds and of the spec's objects, each once. */
async function kindsOfBundle(input: FinalizerContext): Promise<ResourceType[]> {
  const byKey = new Map<string, ResourceType>();
  const managed = await resolveKindKeys(input.api, input.bundle.status?.managedKinds ?? []);
  const { types: spec } = await resolveSpecKinds(input.api, input.bundle.spec.resources.flatMap((r) => (r.spec.object ? [r.spec.object] : [])));
  for (const rt of [...managed, ...spec.values()]) if (rt.namespaced && !byKey.has(kindKey(rt.apiVersion, rt.kind))) byKey.set(kindKey(rt.apiVersion, rt.kind), rt);
  return [...byKey.values()];
}

async function removeFinalizer(input: FinalizerContext): Promise<void> {
  const { bundle, api } = input;
  const remaining = (bundle.metadata.finalizers ?? []).filter((f) => f !== Finalizers.deleteResources);
  try {
    await api.patch(BUNDLE_RESOURCE_TYPE, bundle.metadata.namespace, bundle.metadata.name, { metadata: { finalizers: remaining, resourceVersion: bundle.metadata.resourceVersion } }, 'merge');
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return; // a newer version comes through the watch
    throw err;
  }
}

async function writeStatus(input: FinalizerContext, status: Parameters<typeof writeBundleStatus>[2]): Promise<void> {
  await writeBundleStatus(input.api, input.live, status, input.logger);
}

function nowIso(input: FinalizerContext): string {
  return formatRfc3339(input.clock.now());
}
