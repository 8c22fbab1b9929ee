/**
 * The Bundle controller: for one Bundle key, fetch (caches, then fresh reads
 * where a delete depends on them), decide (core/bundle's planBundle), act
 * (server-side apply, patches, deletes with preconditions) and write status
 * on every path. Level-based: the result of a pass is the next requeue, never
 * a stored event.
 */
import { BundleSchema, formatIssues, type Bundle, type BundleStatus } from '../../api/bundle.js';
import { BundleConditionTypes, EventReasons, FIELD_MANAGER, Finalizers, Reasons } from '../../api/names.js';
import { condition, mergeConditions } from '../../core/bundle/conditions.js';
import { kindKey, type LiveObject } from '../../core/bundle/objects.js';
import { keepListedElsewhere, planBundle, withholdPrunes, type BundlePlan, type ClaimAction, type ResourcePlan } from '../../core/bundle/plan.js';
import { claimsByObject, listedObjects } from '../../core/bundle/ownership.js';
import { redecideDelete, type PruneAction } from '../../core/bundle/prune.js';
import { nextPass } from '../../core/bundle/next-pass.js';

type PruneTarget = PruneAction['target'];
import { buildPlanInput, crdReadinessTable } from '../../core/bundle/plan-input.js';
import { buildBundleStatus, statusEqual, type ActionFailure } from '../../core/bundle/status.js';
import type { KindInfo } from '../../core/bundle/kinds.js';
import { formatRfc3339 } from '../../core/softdelete/decide.js';
import { CRD_RESOURCE } from '../../kube/crds.js';
import { errorMessage, isConflict, isInvalid, isNotFound } from '../../kube/errors.js';
import { gvkKey, objectKey, type KubeObject, type ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../runtime/clock.js';
import { SupervisedInformer } from '../../runtime/informer.js';
import { runWorkers, WorkQueue, type WorkResult } from '../../runtime/workqueue.js';
import type { EventTarget } from '../events.js';
import type { ControllerDeps } from '../deps.js';
import { ObjectCache, type BundleKey } from './object-cache.js';
import { BUNDLE_RESOURCE_TYPE } from '../../api/bundle-resource.js';
import { bundleTarget } from './bundle-resource.js';
import { finalizeBundle } from './finalize.js';



export interface BundleControllerOptions extends ControllerDeps {
  workers?: number;
  /** Applies in flight at once within one Bundle. */
  applyConcurrency?: number;
  /** How long a reconcile waits for a new kind's watch to sync before failing (and retrying). */
  watchSyncTimeoutMs?: number;
}

/** After a pass that wrote, look again this soon (watch events usually come first). */
const WROTE_RECHECK_MS = 300;

/** What a pass did to the cluster, for the status and the requeue decision. */
interface PassOutcome {
  applyFailures: Map<string, ActionFailure>;
  pruneFailures: { target: PruneAction['target']; message: string }[];
  wrote: boolean;
}

export class BundleController {
  private readonly queue: WorkQueue<string>;
  private readonly bundles: SupervisedInformer;
  private readonly crds: SupervisedInformer;
  readonly objects: ObjectCache;
  private workersDone: Promise<void> | undefined;
  private readonly workers: number;
  private readonly applyConcurrency: number;
  private readonly pendingByBundle = new Map<BundleKey, number>();
  private readonly conditionsByBundle = new Map<BundleKey, string[]>();
  private readonly serverTime: ServerTime;

  constructor(private readonly o: BundleControllerOptions) {
    this.workers = o.workers ?? 4;
    this.serverTime = o.serverTime ?? o.client.serverTime;
    this.applyConcurrency = o.applyConcurrency ?? 4;
    this.queue = new WorkQueue<string>({ clock: o.clock, ...(o.metrics ? { metrics: o.metrics.queue('bundle') } : {}) });
    const onInformerError = (err: unknown, rt: ResourceType) => {
      o.metrics?.informerRestarts.inc({ resource: `${rt.plural}.${rt.group || 'core'}` });
      o.logger.warn({ err: errorMessage(err), resource: rt.plural }, 'watch failed; relisting');
    };
    this.bundles = new SupervisedInformer(o.client, BUNDLE_RESOURCE_TYPE, { ...(o.namespace ? { namespace: o.namespace } : {}), onError: onInformerError });
    this.crds = new SupervisedInformer(o.client, CRD_RESOURCE, { onError: onInformerError });
    this.objects = new ObjectCache({ client: o.client, ...(o.namespace ? { namespace: o.namespace } : {}), ...(o.watchSyncTimeoutMs ? { syncTimeoutMs: o.watchSyncTimeoutMs } : {}), onBundleEvent: (key) => this.queue.add(key), onInformerError });
  }

  async start(): Promise<void> {
    // A Bundle that starts or stops listing an object changes who may hold it:
    // wake the other Bundles that list the same objects (hand-over, Conflict).
    const wake = (b: KubeObject, old?: KubeObject): void => {
      this.queue.add(keyOf(b));
      for (const o of [...listedObjects(b), ...(old ? listedObjects(old) : [])]) {
        for (const k of this.objects.bundlesDeclaring(o.apiVersion, o.kind, o.namespace, o.name)) this.queue.add(k);
      }
    };
    this.bundles.addHandler({
      onAdd: (b) => wake(b),
      onUpdate: (old, b) => wake(b, old),
      onDelete: (b) => wake(b),
    });
    // A CRD installed, changed or removed may make a Bundle's kind resolvable
    // (or not), and carries readiness annotations: look at every Bundle again.
    const everyBundle = () => {
      this.o.discovery.invalidate();
      for (const b of this.bundles.list()) this.queue.add(keyOf(b));
    };
    this.crds.addHandler({ onAdd: everyBundle, onUpdate: everyBundle, onDelete: everyBundle });
    this.bundles.start();
    this.crds.start();
    await Promise.all([this.bundles.waitForSync(), this.crds.waitForSync()]);
    this.workersDone = runWorkers(this.queue, this.workers, (key) => this.reconcileKey(key), (key, err) => {
      this.o.logger.error({ bundle: key, err: errorMessage(err) }, 'reconcile failed');
    });
  }

  /** Stop taking work, let in-flight reconciles finish, stop watches. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.workersDone;
    await Promise.all([this.bundles.stop(), this.crds.stop(), this.objects.stop()]);
  }

  hasSynced(): boolean {
    return this.bundles.hasSynced() && this.crds.hasSynced() && this.objects.allSynced();
  }

  queueLength(): number {
    return this.queue.len();
  }

  /** Enqueue a Bundle by key (tests, CLI). */
  enqueue(key: BundleKey): void {
    this.queue.add(key);
  }

  private async reconcileKey(key: BundleKey): Promise<WorkResult> {
    const started = this.o.clock.now();
    let result: WorkResult = 'forget';
    let outcome = 'success';
    try {
      result = await this.reconcile(key);
      if (result === 'requeue') outcome = 'retry';
      return result;
    } catch (err) {
      outcome = 'error';
      // Status on every path: a pass that failed says so on the Bundle before it is retried.
      await this.reportFailure(key, err);
      throw err;
    } finally {
      this.o.metrics?.reconciles.inc({ controller: 'bundle', result: outcome });
      this.o.metrics?.reconcileDuration.observe({ controller: 'bundle' }, (this.o.clock.now() - started) / 1000);
    }
  }

  private async reconcile(key: BundleKey): Promise<WorkResult> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const cached = this.bundles.get(namespace, name);
    if (!cached) {
      this.objects.undeclare(key);
      this.setPendingDeletions(key, 0);
      this.setConditions(key, undefined);
      return 'forget';
    }
    const log = this.o.logger.child({ bundle: key });

    // 1. Parse. A Bundle the schema rejects changes nothing but its status.
    const parsed = BundleSchema.safeParse(cached);
    if (!parsed.success) {
      const message = `invalid Bundle: ${formatIssues(parsed.error).join('; ')}`;
      await this.writeStatus(cached, invalidStatus(cached, message, this.nowIso()), log);
      return 'forget';
    }
    const bundle = parsed.data;

    // 2. Being deleted: the finalizer's work.
    if (bundle.metadata.deletionTimestamp !== undefined) {
      return await finalizeBundle({ bundle, live: cached, client: this.o.client, discovery: this.o.discovery, objects: this.objects, events: this.o.events, serverTime: this.serverTime, logger: log, kindsToWatch: await this.kindsToWatch(bundle) });
    }

    // 3. Our finalizer first, so a delete of the Bundle always passes through us.
    if (!(bundle.metadata.finalizers ?? []).includes(Finalizers.deleteResources)) {
      await this.o.client.patch(BUNDLE_RESOURCE_TYPE, namespace, name, { metadata: { finalizers: [...(bundle.metadata.finalizers ?? []), Finalizers.deleteResources], resourceVersion: bundle.metadata.resourceVersion } }, 'merge');
      return 'forget'; // the update wakes us again
    }

    // 4. Gather: kinds, live objects at the declared coordinates, everything the Bundle controls.
    const kinds = new Map<string, KindInfo>();
    const types = new Map<string, ResourceType>();
    for (const r of bundle.spec.resources) {
      const obj = r.spec.object;
      if (!obj) continue;
      const rt = await this.o.discovery.resolve(obj.apiVersion, obj.kind);
      if (rt) {
        kinds.set(kindKey(obj.apiVersion, obj.kind), { namespaced: rt.namespaced, plural: rt.plural });
        types.set(kindKey(obj.apiVersion, obj.kind), rt);
      }
    }
    this.objects.declare(key, bundle.spec.resources.flatMap((r) => (r.spec.object ? [{ apiVersion: r.spec.object.apiVersion, kind: r.spec.object.kind, namespace, name: r.spec.object.metadata.name }] : [])));
    for (const rt of [...types.values(), ...(await this.kindsToWatch(bundle))]) if (rt.namespaced) await this.objects.ensure(rt);

    // The objects at the declared coordinates (from the cache) and everything that references the Bundle.
    const atCoordinates = bundle.spec.resources.flatMap((r): LiveObject[] => {
      const obj = r.spec.object;
      const rt = obj ? types.get(kindKey(obj.apiVersion, obj.kind)) : undefined;
      const found = obj && rt?.namespaced ? this.objects.get(rt, namespace, obj.metadata.name) : undefined;
      return found ? [found as LiveObject] : [];
    });
    const referencingCached = this.objects.referencing(bundle.metadata.uid) as LiveObject[];
    // Soft-delete times are the API server's: expiry on a lower bound of its clock, new stamps on an upper bound.
    const now = this.serverTime.lowerBound();
    const stampAt = this.serverTime.upperBound();
    if (now === undefined || stampAt === undefined) return 'requeue';

    // 5. Decide. Claims come from every live Bundle of the namespace (the Bundle informer has synced before any worker runs).
    // buildPlanInput is shared with `bundlesmith diff` and `pending`: the CLI decides on the same input.
    const input = buildPlanInput({
      bundle,
      kinds,
      crdReadiness: crdReadinessTable(this.crds.list()),
      objects: [...atCoordinates, ...referencingCached],
      bundles: this.bundles.list().filter((b) => b.metadata.namespace === namespace),
      now,
      stampAt,
    });
    const controlled = input.controlled;
    let plan = planBundle(input);

    // 6. Act: claims first (whatever else the plan says), then applies level by level, then prunes if every apply went through.
    const outcome: PassOutcome = { applyFailures: new Map(), pruneFailures: [], wrote: false };
    const target = bundleTarget(bundle);
    // Every claim and apply names this Bundle's UID as the controller. A
    // Bundle deleted and re-created under the same name may not have reached
    // the cache yet: an object written with the gone incarnation's UID would
    // be collected at once (its owner is absent). So before any such write,
    // the incarnation is confirmed on a fresh read (no-op passes write
    // nothing and read nothing).
    const writesOwner = plan.claims.length > 0 || plan.resources.some((r) => (r.action === 'apply' || r.action === 'adopt') && r.apply.needed);
    if (writesOwner) {
      const fresh = await this.o.client.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
      if (!fresh || fresh.metadata.uid !== bundle.metadata.uid || fresh.metadata.deletionTimestamp !== undefined) {
        log.debug({ cached: bundle.metadata.uid, live: fresh?.metadata.uid }, 'the cached Bundle is not the live incarnation: nothing written, wait for the cache');
        return { requeueAfterMs: 200 };
      }
    }
    const failedClaims = await this.carryOutClaims(plan.claims, namespace, outcome, target, log);
    if (plan.issues.length === 0) {
      await this.applyResources(plan, types, failedClaims, outcome, target, log);
      if (outcome.applyFailures.size > 0) plan = withholdPrunes(plan, `not pruning: ${[...outcome.applyFailures.keys()].join(', ')} could not be applied`);
      if (plan.prune.some((a) => a.action === 'delete' || a.action === 'mark')) {
        // A prune decided on stale Bundles could remove what was just put back, here or in another
        // Bundle: list the namespace's Bundles fresh, check this one is unchanged, and keep
        // whatever another live Bundle lists.
        const { items: bundlesNow } = await this.o.client.list(BUNDLE_RESOURCE_TYPE, namespace);
        const fresh = bundlesNow.find((b) => b.metadata.name === name);
        if (!fresh || fresh.metadata.uid !== bundle.metadata.uid || fresh.metadata.generation !== bundle.metadata.generation || fresh.metadata.deletionTimestamp) {
          log.info('Bundle changed since it was read; deciding again before pruning');
          return 'requeue';
        }
        plan = keepListedElsewhere(plan, claimsByObject(bundlesNow));
        await this.prune(plan, outcome, target, log);
      }
      await this.withdrawClaims(plan, outcome, log);
    }

    // 7. Status, written only when it changed.
    const status = buildBundleStatus(plan, { applyFailures: outcome.applyFailures, pruneFailures: outcome.pruneFailures }, bundle.status, this.nowIso());
    status.managedKinds = managedKinds(bundle, controlled, plan);
    this.setPendingDeletions(key, status.pendingDeletionCount ?? 0);
    this.setConditions(key, status);
    await this.reportTransitions(bundle.status, status, target, errorEventReason(plan));
    await this.writeStatus(cached, status, log);

    // 8. When to look again (core/bundle/next-pass). Watches bring us back after our own writes.
    const next = nextPass({ plan, applyFailures: outcome.applyFailures, pruneFailures: outcome.pruneFailures, wrote: outcome.wrote }, WROTE_RECHECK_MS);
    return next.kind === 'retry' ? 'requeue' : next.kind === 'after' ? { requeueAfterMs: next.ms } : 'forget';
  }

  private async reportFailure(key: BundleKey, err: unknown): Promise<void> {
    const slash = key.indexOf('/');
    const cached = this.bundles.get(key.slice(0, slash), key.slice(slash + 1));
    if (!cached || cached.metadata.deletionTimestamp) return;
    try {
      await this.writeStatus(cached, errorStatus(cached, Reasons.RetriableError, `reconcile failed, retrying: ${errorMessage(err)}`, this.nowIso()), this.o.logger);
    } catch (statusErr) {
      this.o.logger.warn({ bundle: key, err: errorMessage(statusErr) }, 'could not report the failure in status');
    }
  }

  /**
   * Claims (cancel, adopt, hand-over) as JSON patches guarded by uid and
   * resourceVersion. Returns the resources whose claim did not go through:
   * they are not applied this pass (an apply would fight over the object).
   */
  private async carryOutClaims(claims: readonly ClaimAction[], namespace: string, outcome: PassOutcome, target: EventTarget, log: Logger): Promise<Set<string>> {
    const failed = new Set<string>();
    await forEachBounded(claims, this.applyConcurrency, async (c) => {
      const rt = await this.o.discovery.resolve(c.target.apiVersion, c.target.kind);
      if (!rt) return;
      try {
        await this.o.client.patch(rt, namespace, c.target.name, c.patch, 'json', { fieldManager: FIELD_MANAGER });
      } catch (err) {
        failed.add(c.name);
        // A failed test (422) or conflict: the object changed since it was read; the next pass decides on what it is now.
        const changed = isConflict(err) || isInvalid(err) || isNotFound(err);
        outcome.applyFailures.set(c.name, { message: changed ? `${c.target.kind} ${c.target.name} changed while being claimed; retrying` : errorMessage(err), terminal: false });
        log.warn({ resource: c.name, claim: c.kind, err: errorMessage(err) }, 'claim failed');
        return;
      }
      outcome.wrote = true;
      for (const e of c.events) await this.o.events.normal(target, e.reason, e.message);
      if (c.from) await this.o.events.normal({ apiVersion: target.apiVersion, kind: target.kind, namespace, name: c.from.name, uid: c.from.uid }, c.from.event.reason, c.from.event.message);
    });
    return failed;
  }

  private async applyResources(plan: BundlePlan, types: ReadonlyMap<string, ResourceType>, failedClaims: ReadonlySet<string>, outcome: PassOutcome, target: EventTarget, log: Logger): Promise<void> {
    const writes = plan.resources.filter((r): r is Extract<ResourcePlan, { apply: unknown }> => (r.action === 'apply' || r.action === 'adopt') && !failedClaims.has(r.name));
    await forEachBounded(writes, this.applyConcurrency, async (r) => {
      const desired = r.apply.desired;
      const rt = types.get(kindKey(desired.apiVersion, desired.kind));
      if (!rt) return;
      try {
        if (r.apply.needed) {
          await this.o.client.apply(rt, desired, { fieldManager: FIELD_MANAGER, force: true });
          outcome.wrote = true;
          log.debug({ object: `${desired.kind}/${desired.metadata.name}`, create: r.apply.create }, 'applied');
        }
        if (r.action === 'adopt') await this.o.events.normal(target, r.event.reason, r.event.message);
      } catch (err) {
        outcome.applyFailures.set(r.name, { message: errorMessage(err), terminal: isInvalid(err) });
        log.warn({ resource: r.name, err: errorMessage(err) }, 'apply failed');
      }
    });
  }

  /**
   * Takes this Bundle's claim reference out of objects it no longer lists
   * (written while it lost a Conflict over them): a stale claim would keep
   * such an object alive through a cascade meant for it. The patch tests
   * the reference list as read; a changed object is decided on next pass.
   */
  private async withdrawClaims(plan: BundlePlan, outcome: PassOutcome, log: Logger): Promise<void> {
    for (const w of plan.withdrawals) {
      const rt = await this.o.discovery.resolve(w.target.apiVersion, w.target.kind);
      if (!rt) continue;
      outcome.wrote = true; // either way, look again soon
      try {
        await this.o.client.patch(rt, w.target.namespace, w.target.name, w.patch, 'json', { fieldManager: FIELD_MANAGER });
        log.info({ object: `${w.target.kind}/${w.target.name}` }, 'withdrew the claim on an object no longer listed');
      } catch (err) {
        if (isConflict(err) || isInvalid(err) || isNotFound(err)) continue;
        log.warn({ object: `${w.target.kind}/${w.target.name}`, err: errorMessage(err) }, 'withdrawing a claim failed');
      }
    }
  }

  private async prune(plan: BundlePlan, outcome: PassOutcome, target: EventTarget, log: Logger): Promise<void> {
    // Dependents first: the plan's order; one at a time so an object is gone before what it references.
    for (const action of plan.prune) {
      if (action.action !== 'delete' && action.action !== 'mark') continue;
      const t = action.target;
      const rt = await this.o.discovery.resolve(t.apiVersion, t.kind);
      if (!rt || !t.uid) continue;
      try {
        if (action.action === 'mark') {
          outcome.wrote = true; // either way, look again soon
          try {
            await this.o.client.patch(rt, t.namespace, t.name, action.patch, 'json', { fieldManager: FIELD_MANAGER });
          } catch (err) {
            // The patch tests the resourceVersion it was decided on; a failed test (422) or conflict means the
            // object changed: not an error, the next pass decides on what it is now.
            if (isConflict(err) || isInvalid(err)) continue;
            throw err;
          }
          await this.o.events.normal(target, action.event.reason, action.event.message);
          continue;
        }
        // An expired countdown was read from the cache: decide again on a fresh read first.
        const resourceVersion = action.afterDelay ? await this.freshDeletableVersion(rt, t, plan.bundle.uid) : t.resourceVersion;
        if (resourceVersion === undefined) continue;
        let result = await this.deleteWithPreconditions(rt, t, resourceVersion);
        if (result === 'conflict') {
          // Changed since the cache saw it (a status write, a new annotation): one fresh read, the same rules, one more try.
          const fresher = await this.freshDeletableVersion(rt, t, plan.bundle.uid);
          if (fresher === undefined) continue;
          result = await this.deleteWithPreconditions(rt, t, fresher);
        }
        if (result === 'conflict') {
          outcome.pruneFailures.push({ target: t, message: 'changed while being deleted; will decide again on the next pass' });
          continue;
        }
        outcome.wrote = true;
        if (result === 'deleted') await this.o.events.normal(target, action.event.reason, action.event.message);
      } catch (err) {
        outcome.pruneFailures.push({ target: t, message: errorMessage(err) });
        log.warn({ object: `${t.kind}/${t.name}`, err: errorMessage(err) }, 'prune failed');
      }
    }
  }

  private async deleteWithPreconditions(rt: ResourceType, t: PruneTarget, resourceVersion: string | undefined): Promise<'deleted' | 'not-found' | 'conflict'> {
    if (!t.uid) return 'not-found';
    try {
      return await this.o.client.delete(rt, t.namespace, t.name, { uid: t.uid, ...(resourceVersion ? { resourceVersion } : {}), propagationPolicy: 'Background' });
    } catch (err) {
      if (isConflict(err)) return 'conflict';
      throw err;
    }
  }

  /**
   * Reads the object fresh and applies the prune rules again: the
   * resourceVersion to delete it at when it is still the same object, still
   * controlled by this Bundle and still due for deletion (no countdown to
   * start or wait for); undefined otherwise (it is left to the next pass).
   */
  private async freshDeletableVersion(rt: ResourceType, t: PruneTarget, bundleUid: string): Promise<string | undefined> {
    const fresh = await this.o.client.tryGet(rt, t.namespace, t.name);
    // The read just made refreshed the server-time estimate: decide on its lower bound.
    const now = this.serverTime.lowerBound();
    if (now === undefined) return undefined;
    return redecideDelete({ fresh: fresh as LiveObject | undefined, target: t, bundleUid, now });
  }

  /** Resource types from status.managedKinds: kinds the Bundle controlled objects of, even if the spec no longer lists them. */
  private async kindsToWatch(bundle: Bundle): Promise<ResourceType[]> {
    const out: ResourceType[] = [];
    for (const k of bundle.status?.managedKinds ?? []) {
      const slash = k.lastIndexOf('/');
      const rt = await this.o.discovery.resolve(k.slice(0, slash), k.slice(slash + 1));
      if (rt) out.push(rt);
    }
    return out;
  }

  /**
   * Events for what changed, not for every pass: Ready when it becomes True,
   * and a Warning (reason by the kind of problem) when the Error condition
   * appears or its message changes; a Bundle stuck on the same problem does
   * not repeat it on each retry.
   */
  private async reportTransitions(before: BundleStatus | undefined, after: BundleStatus, target: EventTarget, errorReason: string): Promise<void> {
    const was = before?.conditions?.find((c) => c.type === BundleConditionTypes.Ready)?.status;
    const is = after.conditions?.find((c) => c.type === BundleConditionTypes.Ready);
    if (is?.status === 'True' && was !== 'True') await this.o.events.normal(target, EventReasons.Ready, `all ${after.resourcesReady ?? ''} resources are ready`);
    const err = after.conditions?.find((c) => c.type === BundleConditionTypes.Error);
    const errBefore = before?.conditions?.find((c) => c.type === BundleConditionTypes.Error);
    if (err?.status === 'True' && (errBefore?.status !== 'True' || errBefore.message !== err.message)) await this.o.events.warning(target, errorReason, err.message ?? 'error');
  }

  private async writeStatus(live: KubeObject, status: BundleStatus, log: Logger): Promise<void> {
    const previous = live.status as BundleStatus | undefined;
    if (statusEqual(previous, status)) return;
    try {
      await this.o.client.replaceStatus(BUNDLE_RESOURCE_TYPE, { ...live, status });
    } catch (err) {
      // A newer Bundle is on its way to us through the watch; that pass writes the status.
      if (isConflict(err)) log.debug('status conflict; a newer Bundle will be reconciled');
      else if (!isNotFound(err)) throw err;
    }
  }

  /** The pending-deletions gauge is the sum over Bundles; keep each Bundle's share. */
  private setPendingDeletions(key: BundleKey, count: number): void {
    if (count === 0) this.pendingByBundle.delete(key);
    else this.pendingByBundle.set(key, count);
    let total = 0;
    for (const n of this.pendingByBundle.values()) total += n;
    this.o.metrics?.pendingDeletions.set(total);
  }

  /** bundlesmith_bundles{condition,status}: counted over every Bundle's last written conditions. */
  private setConditions(key: BundleKey, status: BundleStatus | undefined): void {
    if (status?.conditions) this.conditionsByBundle.set(key, status.conditions.map((c) => `${c.type}\u0000${c.status}`));
    else this.conditionsByBundle.delete(key);
    const gauge = this.o.metrics?.bundlesByCondition;
    if (!gauge) return;
    const counts = new Map<string, number>();
    for (const list of this.conditionsByBundle.values()) for (const c of list) counts.set(c, (counts.get(c) ?? 0) + 1);
    gauge.reset();
    for (const [c, n] of counts) {
      const [condition = '', conditionStatus = ''] = c.split('\u0000');
      gauge.set({ condition, status: conditionStatus }, n);
    }
  }

  private nowIso(): string {
    return formatRfc3339(this.o.clock.now());
  }
}

/** The reason of the Warning event for a pass's Error condition: the most specific problem the plan shows. */
function errorEventReason(plan: BundlePlan): string {
  if (plan.issues.length > 0) return EventReasons.InvalidSpec;
  if (plan.resources.some((r) => r.action === 'conflict')) return EventReasons.Conflict;
  if (plan.prune.some((a) => a.action === 'invalid')) return EventReasons.InvalidDeletionDelay;
  return EventReasons.ReconcileError;
}

function keyOf(obj: KubeObject): BundleKey {
  return objectKey(obj.metadata.namespace, obj.metadata.name);
}


/** Status for a Bundle the schema rejects: only conditions change. */
function invalidStatus(live: KubeObject, message: string, nowIso: string): BundleStatus {
  return errorStatus(live, Reasons.TerminalError, message, nowIso);
}

/** Error=True with this reason and message, Ready=False; the rest of the status is kept. */
function errorStatus(live: KubeObject, reason: string, message: string, nowIso: string): BundleStatus {
  const previous = (live.status ?? {}) as BundleStatus;
  return {
    ...previous,
    ...(live.metadata.generation !== undefined ? { observedGeneration: live.metadata.generation } : {}),
    conditions: mergeConditions(previous.conditions, [
      condition(BundleConditionTypes.InProgress, false),
      condition(BundleConditionTypes.Ready, false, reason, message),
      condition(BundleConditionTypes.Error, true, reason, message),
    ], nowIso),
  };
}

/** Kinds of the spec's objects and of everything controlled or pending, sorted, for status.managedKinds. */
function managedKinds(bundle: Bundle, controlled: readonly LiveObject[], plan: BundlePlan): string[] {
  const kinds = new Set<string>(bundle.status?.managedKinds ?? []);
  for (const r of bundle.spec.resources) if (r.spec.object) kinds.add(gvkKey(r.spec.object.apiVersion, r.spec.object.kind));
  const stillRelevant = new Set<string>([
    ...bundle.spec.resources.flatMap((r) => (r.spec.object ? [gvkKey(r.spec.object.apiVersion, r.spec.object.kind)] : [])),
    ...controlled.map((o) => gvkKey(o.apiVersion, o.kind)),
    ...plan.prune.map((a) => gvkKey(a.target.apiVersion, a.target.kind)),
    ...plan.withheld.map((w) => gvkKey(w.action.target.apiVersion, w.action.target.kind)),
  ]);
  return [...kinds].filter((k) => stillRelevant.has(k)).sort();
}

async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(lanes);
}

