/**
 * The Bundle's finalizer (smith.atlassian.com/deleteResources): fetch, let
 * core/bundle/finalize decide, carry the steps out through the BundleApi
 * port. What happens to each object, per propagation (background,
 * foreground, orphan), is decided there. Every pass reads fresh (the objects
 * of the Bundle's kinds and the namespace's Bundles), so the finalizer goes
 * only once a pass on fresh lists finds nothing left to write. A pass that
 * cannot let it go says why in the Bundle's status.
 */
import type { ReleaseRecords } from '../softdelete/release-records.js';
import { recordedObject } from '../../core/softdelete/release-record.js';
import type { Bundle } from '../../api/bundle.js';
import type { BundleStatus, PendingDeletion } from '../../api/bundle-status.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { FIELD_MANAGER, Finalizers, Reasons } from '../../api/names.js';
import { errorStatus, finalizingStatus, interruptedStatus, type FinalizeReport } from '../../core/bundle/exit-status.js';
import { groupKindKey, inventoryKinds, inventoryKey, type GroupKind } from '../../core/bundle/kind-inventory.js';
import { planFinalize, whileTracesWait } from '../../core/bundle/finalize.js';
import { propagationOf, type FinalizeStep } from '../../core/bundle/finalize-types.js';
import type { ObjectTarget } from '../../core/bundle/prune.js';
import { claimRecordsOf } from '../../core/bundle/claim-record.js';
import { countdownRecordOf, latestStampsElsewhere, withListedCountdownsCancelled } from '../../core/bundle/countdown-record.js';
import { finalizeNext, type FinalizeOutcome } from '../../core/bundle/next-pass.js';
import { isRecord, type LiveObject } from '../../core/bundle/objects.js';
import { coordinatesOf, declaredAnnotations, namedOwnersOf, notHeldIn, recordedOrphan } from './finalize-reads.js';
import { listingsByObject } from '../../core/bundle/ownership.js';
import { formatRfc3339 } from '../../core/rfc3339.js';
import type { ReleaseSigner } from '../../core/softdelete/provenance.js';
import type { StampSeal } from '../../core/softdelete/stamp-seal.js';
import { errorMessage, isConflict, isNotFound, type SendGuard } from '../../kube/errors.js';
import { guardedDelete, guardedPatch } from '../../kube/guarded-write.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { Clock, ServerTime } from '../../kube/clock.js';
import type { EventRecorder } from '../events.js';
import type { BundleApi } from './api.js';
import type { PruneFence } from './act-deps.js';
import { bundleTarget } from './bundle-resource.js';
import { statusSubject } from './status-writer.js';
import { nextOnly, type PassReport, type StatusReport } from './pass-report.js';

/** After a pass that wrote, decide again this soon (on fresh lists). */
const RECHECK_MS = 500;
/** A kind that cannot be listed holds the finalizer: look again this often (a CRD event brings the Bundle back sooner). */
const UNLISTABLE_RECHECK_MS = 15_000;

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
  /** Where each signing is recorded before the release carrying it is sent. */
  releaseRecords: Pick<ReleaseRecords, 'recordSigning'>;
  /** Whether a CustomResourceDefinition defines this group and kind (served at some version or not). */
  crdDefines: (gk: GroupKind) => boolean;
  /**
   * The kinds of the objects the caches show referencing the Bundle: listed
   * too, so that an inventory overwritten by another status writer hides
   * nothing the caches still see (optional).
   */
  cachedKinds?: () => readonly { apiVersion: string; kind: string }[];
  /** Send-time checks of the steps (see PruneFence): a Bundle event after the decision stops the steps not yet sent. */
  fence?: PruneFence;
  /** Proves the stamps this operator wrote (core/softdelete/stamp-seal.ts). */
  stampSeal?: StampSeal;
}

export async function finalizeBundle(input: FinalizerContext): Promise<PassReport> {
  const { bundle, api } = input;
  const namespace = bundle.metadata.namespace;
  if (!(bundle.metadata.finalizers ?? []).includes(Finalizers.deleteResources)) return nextOnly({ kind: 'idle' });

  // 1. Fetch, fresh: the objects of every kind the Bundle may hold, and who else lists them. A kind that cannot be
  // listed holds the finalizer: letting the Bundle go would hand its unseen objects to the collector. The epoch is
  // taken before the reads: a Bundle event from here on stops each step not yet sent.
  const decidedAt = input.fence?.decidedAt();
  const { types, unlistable } = await kindsOfBundle(input);
  const objects: LiveObject[] = [];
  for (const rt of types) {
    try {
      objects.push(...(await api.list(rt, namespace, { metadataOnly: true })).items);
    } catch (err) {
      unlistable.push(`${rt.kind}.${rt.group || 'core'}: cannot list ${rt.plural}: ${errorMessage(err)}`);
    }
  }
  if (unlistable.length > 0) {
    const message = `being deleted: the finalizer holds, since objects of these kinds cannot be seen: ${unlistable.join('; ')}`;
    input.logger.warn({ unlistable }, 'finalizing: a kind the Bundle may control cannot be listed; holding the finalizer');
    const held = withListedCountdownsCancelled(
      errorStatus(statusSubject(input.live), Reasons.KindNotListable, message, nowIso(input)),
      new Set(),
      namespace,
      notHeldIn(types, objects, bundle),
    );
    return { status: statusOver(input, held), next: { kind: 'after', ms: UNLISTABLE_RECHECK_MS } };
  }
  // The watches only bring us back when those objects change; decisions are made on the lists above.
  // A watch that cannot list (yet) is no reason to stop: the lists decided, and the recheck below comes anyway.
  for (const rt of types) await input.watch(rt).catch(() => undefined);
  const { items: bundlesNow } = await api.list(BUNDLE_RESOURCE_TYPE, namespace);
  const now = input.serverTime.lowerBound();
  const stampAt = input.serverTime.upperBound();
  if (now === undefined || stampAt === undefined) {
    return {
      status: statusOver(
        input,
        interruptedStatus(statusSubject(input.live), "being deleted: waiting for the API server's time", nowIso(input)),
      ),
      next: { kind: 'retry' },
    };
  }

  // 2. Decide.
  const plan = planFinalize({
    propagation: propagationOf(bundle.metadata.finalizers),
    bundle: {
      name: bundle.metadata.name,
      uid: bundle.metadata.uid,
      namespace: bundle.metadata.namespace,
      defaults: bundle.spec.deletionDefaults,
    },
    objects,
    coordinates: coordinatesOf(bundle),
    listings: listingsByObject(bundlesNow),
    claimRecords: claimRecordsOf([bundle, ...bundlesNow.filter((b) => b.metadata.uid !== bundle.metadata.uid)]),
    now,
    stampAt,
    signRelease: input.signRelease,
    ...(input.stampSeal ? { stampSeal: input.stampSeal } : {}),
    countdownRecord: countdownRecordOf(
      bundle.status,
      bundle.metadata.namespace ?? '',
      latestStampsElsewhere(
        bundlesNow.map((b) => b.status as { pendingDeletions?: PendingDeletion[] } | undefined),
        bundle.metadata.namespace ?? '',
      ),
    ),
    declared: declaredAnnotations(bundle),
    namedOwners: namedOwnersOf(bundle),
    recordedOrphan: recordedOrphan(bundle),
  });
  if (plan.done) {
    await removeFinalizer(input);
    return nextOnly({ kind: 'idle' });
  }
  // An orphan deletion is recorded before its first write: every later pass reads it so, whatever a person erases of
  // the traces meanwhile (red team 26). A write that lost to a newer Bundle: decide again on it.
  if (plan.propagation === 'Orphan' && !recordedOrphan(bundle)) {
    const recorded = await recordOrphanFirst(input);
    if (recorded === undefined) return nextOnly({ kind: 'after', ms: 0 });
    input = { ...input, live: recorded };
  }

  // 3. Act, one step at a time in the plan's order (background: dependents first), then say why the Bundle is still here.
  const outcome: FinalizeOutcome = { wrote: 0, changed: 0, failed: 0 };
  const report: StepReport = { propagation: plan.propagation, steps: plan.steps, changed: [], failures: [], heldBack: [] };
  let tracesWait = false;
  for (const [i, planned] of plan.steps.entries()) {
    // Orphan: the traces go only once everything before them is written (FinalizePlan.traceStepsFrom); until then only
    // the operator's references go (referencesOnly), so that nothing cascades through them.
    if (i === plan.traceStepsFrom) tracesWait = outcome.failed > 0 || outcome.changed > 0;
    const step = tracesWait ? whileTracesWait(planned) : planned;
    if (tracesWait && planned.action !== 'leave') report.heldBack.push(planned.target);
    if (step === undefined) continue;
    const guard = input.fence && decidedAt !== undefined && step.action !== 'leave' ? input.fence.guard(decidedAt, step.target) : undefined;
    if ((await carryOut(step, input, outcome, report, guard)) === 'refused') {
      // A Bundle changed after this pass decided: the rest is decided again on fresh lists, at once.
      input.logger.info('finalizing: a Bundle changed since the steps were decided; deciding again');
      return nextOnly({ kind: 'after', ms: 0 });
    }
  }
  const finalizing = withListedCountdownsCancelled(
    finalizingStatus(statusSubject(input.live), report, nowIso(input)),
    new Set(),
    namespace,
    notHeldIn(types, objects, bundle),
  );
  return { status: statusOver(input, finalizing), next: finalizeNext(outcome, RECHECK_MS) };
}

/** The report a pass fills in as it carries its steps out. */
interface StepReport extends FinalizeReport {
  changed: FinalizeReport['changed'][number][];
  failures: FinalizeReport['failures'][number][];
  heldBack: ObjectTarget[];
}

async function carryOut(
  step: FinalizeStep,
  input: FinalizerContext,
  outcome: FinalizeOutcome,
  report: StepReport,
  guard: SendGuard | undefined,
): Promise<'sent' | 'refused'> {
  if (step.action === 'leave') return 'sent';
  const t = step.target;
  const rt = await input.api.resolve(t.apiVersion, t.kind);
  if (!rt || !t.uid) return 'sent';
  const at = { rt, namespace: t.namespace, name: t.name };
  // A release's signing is recorded before it is sent (a failure throws: nothing sent); what it replaces no longer counts.
  if (step.action === 'release')
    await input.releaseRecords.recordSigning(recordedObject(rt, { uid: t.uid, namespace: t.namespace, name: t.name }), step.patch);
  // One send each, no retry: the next pass decides on fresh lists. A DELETE's 422 without field causes counts as stale
  // here (isStaleWrite), as the collector and the sweeper count it; the prune counts only a 409 (see prune-writes.ts).
  const written =
    step.action === 'delete'
      ? await guardedDelete(input.api, at, {
          opts: {
            uid: t.uid,
            ...(t.resourceVersion ? { resourceVersion: t.resourceVersion } : {}),
            propagationPolicy: 'Background',
            ...(guard ? { guard } : {}),
          },
          stale: 'conflict-or-failed-test',
        })
      : await guardedPatch(input.api, at, {
          patch: step.patch,
          type: 'json',
          opts: { fieldManager: FIELD_MANAGER, ...(guard ? { guard } : {}) },
        });
  if (written.kind === 'declined') return 'sent'; // never: what to send is given
  if (written.kind === 'refused') return 'refused';
  if (written.kind === 'written' || (written.kind === 'gone' && !written.error)) {
    // A DELETE answered 'not-found' counts as written, without the event.
    if (written.kind === 'written') await input.events.normal(bundleTarget(input.bundle), step.event.reason, step.event.message);
    outcome.wrote++;
    return 'sent';
  }
  if (written.kind === 'stale' || written.kind === 'gone') {
    // Changed since it was read (a precondition or a patch test failed) or gone: the next pass decides on what is there.
    outcome.changed++;
    report.changed.push(t);
  } else {
    outcome.failed++;
    // Forbidden (the identity may not) and an invalid write (refused as such) cannot finish without a change: Stalled.
    report.failures.push({
      target: t,
      action: step.action,
      message: errorMessage(written.error),
      ...(written.kind === 'forbidden'
        ? { reason: Reasons.Forbidden }
        : written.kind === 'invalid'
          ? { reason: Reasons.InvalidWrite, terminal: true }
          : {}),
    });
  }
  input.logger.warn(
    { object: { kind: t.kind, name: t.name }, step: step.action, err: errorMessage(written.error) },
    'finalizing: step failed',
  );
  return 'sent';
}

/**
 * The kinds the Bundle may control (its kind inventory and its spec's
 * kinds), each by group and kind at the version the server serves now,
 * namespaced ones only. `unlistable` says why a kind cannot be resolved: its
 * group could not be discovered, or a CRD defines it but serves no version.
 * A kind no CRD defines and discovery does not know holds no object.
 */
async function kindsOfBundle(input: FinalizerContext): Promise<{ types: ResourceType[]; unlistable: string[] }> {
  const spec = input.bundle.spec.resources.flatMap((r) => (r.spec.object ? [r.spec.object] : []));
  // The inventory, and what else says a kind holds something of the Bundle: the spec, the countdowns status reports, the
  // caches (the inventory lives in status, which another writer may overwrite).
  const pending = input.bundle.status?.pendingDeletions ?? [];
  const others = [...spec, ...pending, ...(input.cachedKinds?.() ?? [])].map((o) => inventoryKey(o.apiVersion, o.kind));
  const kinds = inventoryKinds([...(input.bundle.status?.managedKinds ?? []), ...others]);
  const types: ResourceType[] = [];
  const unlistable: string[] = [];
  for (const gk of kinds) {
    const found = await input.api.resolveGroupKind(gk.group, gk.kind);
    if (found.state === 'served') {
      if (found.type.namespaced) types.push(found.type);
    } else if (found.state === 'unknown') {
      unlistable.push(`${groupKindKey(gk)}: ${found.reason}`);
    } else if (input.crdDefines(gk)) {
      unlistable.push(`${groupKindKey(gk)}: its CustomResourceDefinition serves no version of it`);
    }
  }
  return { types, unlistable };
}

async function removeFinalizer(input: FinalizerContext): Promise<void> {
  const { bundle, api } = input;
  const remaining = (bundle.metadata.finalizers ?? []).filter((f) => f !== Finalizers.deleteResources);
  // A merge patch pinned by resourceVersion: only a 409 is stale.
  const written = await guardedPatch(
    api,
    { rt: BUNDLE_RESOURCE_TYPE, namespace: bundle.metadata.namespace, name: bundle.metadata.name },
    { patch: { metadata: { finalizers: remaining, resourceVersion: bundle.metadata.resourceVersion } }, type: 'merge', stale: 'conflict' },
  );
  if (written.kind === 'written' || written.kind === 'stale' || written.kind === 'gone' || written.kind === 'declined') return; // a newer version comes through the watch
  throw written.error;
}

/** status.deletionPropagation: Orphan written over the stored Bundle, at its resourceVersion; undefined when a newer one won. */
async function recordOrphanFirst(input: FinalizerContext): Promise<KubeObject | undefined> {
  const status = isRecord(input.live.status) ? input.live.status : {};
  try {
    const recorded = await input.api.replaceStatus(BUNDLE_RESOURCE_TYPE, {
      ...input.live,
      status: { ...status, deletionPropagation: 'Orphan' },
    });
    input.logger.debug('finalizing: recorded the orphan deletion in status before the first orphan write');
    return recorded;
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return undefined;
    throw err;
  }
}

/** A finalize pass's status, over the stored Bundle it read (or its own write-ahead over it). */
function statusOver(input: FinalizerContext, status: BundleStatus): StatusReport {
  return { over: input.live, status };
}

function nowIso(input: FinalizerContext): string {
  return formatRfc3339(input.clock.now());
}
