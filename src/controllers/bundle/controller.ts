/**
 * The Bundle controller: for one Bundle key, fetch (caches, then fresh reads
 * where a delete depends on them), decide (core/bundle's planBundle), act
 * (server-side apply, patches, deletes with preconditions) and write status
 * on every path. Level-based: the result of a pass is the next requeue, never
 * a stored event.
 */
import { BundleSchema, formatIssues, type Bundle } from '../../api/bundle.js';
import type { HealthCheck } from '../../api/health-checks.js';
import type { PendingDeletion } from '../../api/bundle-status.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { Finalizers, Reasons } from '../../api/names.js';
import { errorEventReason, errorStatus, interruptedStatus, staleReadMessage } from '../../core/bundle/exit-status.js';
import { nextPass, type NextPass } from '../../core/bundle/next-pass.js';
import { claimsByObject, listedObjects, type BundleClaim } from '../../core/bundle/ownership.js';
import { isControlledBy, objectKey } from '../../core/bundle/objects.js';
import { dropCandidates, managedKinds, withSpecKinds, type GroupKind, type InventoryInput } from '../../core/bundle/kind-inventory.js';
import { buildPlanInput, crdReadinessTable, liveByResource } from '../../core/bundle/plan-input.js';
import { planBundle } from '../../core/bundle/plan.js';
import { buildBundleStatus } from '../../core/bundle/status.js';
import { actingIdentity } from '../../core/bundle/identity.js';
import { matchesSelector, type LabelSelector } from '../../core/selector.js';
import { formatRfc3339 } from '../../core/rfc3339.js';
import { CRD_RESOURCE } from '../../kube/crds.js';
import { errorMessage, isConflict, isNotFound } from '../../kube/errors.js';
import { namespacedName, type KubeObject, type ResourceType } from '../../kube/types.js';
import { objectRef, type Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../kube/clock.js';
import { SupervisedInformer } from '../../runtime/informer.js';
import { WorkQueue } from '../../runtime/workqueue.js';
import { runWorkers, type WorkResult } from '../../runtime/workers.js';
import type { ReconcileResult } from '../../observability/metrics.js';
import type { ControllerDeps } from '../deps.js';
import { actOnPlan } from './act.js';
import { APPLY_CONCURRENCY, type PruneFence } from './act-deps.js';
import { bundleEpochKey, changesListing, epochKeysOf, ListingEpochs, objectEpochKey } from '../listing-epochs.js';
import { BundleApis, type BundleApi } from './api.js';
import { controlledElsewhere, gatherBundle, type Gathered } from './gather.js';
import { bundleTarget } from './bundle-resource.js';
import { finalizeBundle } from './finalize.js';
import { ObjectCache, WatchNotSynced, type BundleKey } from './object-cache.js';
import { EnvSourceWatch } from './env-sources.js';
import { envSourcesOf } from '../../core/bundle/workload-env-hash.js';
import { readEnvSources, SOURCE_RESOURCES, type SourceKind } from '../../kube/env-sources.js';
import { UnlabelledObjects } from './unlabelled.js';
import { confirmedEmpty } from './record.js';
import { latestStampsElsewhere, listedKeysOf, withListedCountdownsCancelled } from '../../core/bundle/countdown-record.js';
import { finishPass, nextOnly, type PassReport } from './pass-report.js';
import { releaseSigner, type ReleaseSigner } from '../../core/softdelete/provenance.js';
import { stampSeal, type StampSeal } from '../../core/softdelete/stamp-seal.js';
import { BundleGauges, statusSubject } from './status-writer.js';

export interface BundleControllerOptions extends ControllerDeps {
  workers?: number;
  /** Applies in flight at once within one Bundle. */
  applyConcurrency?: number;
  /** How long a reconcile waits for a new kind's watch to sync before failing (and retrying). */
  watchSyncTimeoutMs?: number;
  /** CEL readiness rules for every Bundle (--health-checks-file), compiled and checked at start; a Bundle's spec.healthChecks win for the same kind. */
  healthCheckDefaults?: readonly HealthCheck[];
  /** Lockdown: the ServiceAccount (in each Bundle's namespace) a Bundle without spec.serviceAccountName acts as. */
  defaultServiceAccount?: string;
  /**
   * Sharding (--bundle-selector): reconcile only the Bundles whose labels
   * match; another process reconciles the rest. Every Bundle is still
   * watched: claims come from every live Bundle of the namespace, whichever
   * shard it belongs to, so no shard deletes what another shard's Bundle lists.
   */
  bundleSelector?: LabelSelector;
}

/** After a pass that wrote, look again this soon (watch events usually come first). */
const WROTE_RECHECK_MS = 300;
/** The cache shows a gone incarnation of the Bundle: look again this soon (its watch event is on its way). */
const STALE_BUNDLE_RECHECK_MS = 200;
/** An object at the Bundle's coordinates that no watch of ours sees (another controller's): read it again this often. */
const UNWATCHED_POLL_MS = 30_000;
/** A Bundle waiting for a kind's watch looks again after this, then twice as long each time, up to WATCH_WAIT_MAX_MS. */
const WATCH_WAIT_FIRST_MS = 1_000;
const WATCH_WAIT_MAX_MS = 5 * 60_000;

export class BundleController {
  private readonly queue: WorkQueue<string>;
  private readonly bundles: SupervisedInformer;
  private readonly crds: SupervisedInformer;
  readonly objects: ObjectCache;
  private workersDone: Promise<void> | undefined;
  private readonly workers: number;
  private readonly applyConcurrency: number;
  private readonly gauges: BundleGauges;
  /** The operator's own port: Bundles, and the objects of Bundles without an identity. */
  private readonly api: BundleApi;
  /** One port per identity (see BundleApis). */
  private readonly apis: BundleApis;
  private readonly unlabelled = new UnlabelledObjects();
  private readonly signRelease: ReleaseSigner;
  /** Signs the countdown stamps this operator writes, and tells them from stamps written by hand. */
  private readonly stampSeal: StampSeal;
  private readonly serverTime: ServerTime;
  /** Claims of each namespace's live Bundles (claimsOf), dropped on any Bundle event there. */
  private readonly claimsByNamespace = new Map<string, ReadonlyMap<string, readonly BundleClaim[]>>();
  /** The latest countdown stamp each namespace's Bundles record per object (latestStampsElsewhere), rebuilt as claimsByNamespace is. */
  private readonly stampsByNamespace = new Map<string, ReadonlyMap<string, string>>();
  /** The ConfigMaps and Secrets the Bundles' workloads read (envRefHash), watched by metadata. */
  private readonly envSources: EnvSourceWatch;
  /** Bundles waiting for a kind's watch, and how many times in a row: their next look grows with it. */
  private readonly watchWaits = new Map<BundleKey, number>();
  /** Moved by every Bundle event that may change what is listed: the send-time check of deletes and releases. */
  private readonly epochs = new ListingEpochs();

  constructor(private readonly o: BundleControllerOptions) {
    this.workers = o.workers ?? 4;
    this.signRelease = releaseSigner(o.releaseKey);
    this.stampSeal = stampSeal(o.releaseKey);
    this.serverTime = o.serverTime ?? o.client.serverTime;
    this.applyConcurrency = o.applyConcurrency ?? APPLY_CONCURRENCY;
    this.apis = new BundleApis(o.client, o.discovery);
    this.api = this.apis.for({ kind: 'operator' });
    this.gauges = new BundleGauges(o.metrics, () => o.clock.now());
    this.queue = new WorkQueue<string>({ clock: o.clock, ...(o.metrics ? { metrics: o.metrics.queue('bundle') } : {}) });
    const onInformerError = (err: unknown, rt: ResourceType) => {
      o.metrics?.informerRestarts.inc({ resource: `${rt.plural}.${rt.group || 'core'}` });
      o.logger.warn({ err: errorMessage(err), resource: rt.plural }, 'watch failed; relisting');
    };
    this.bundles = new SupervisedInformer(o.client, BUNDLE_RESOURCE_TYPE, {
      ...(o.namespace ? { namespace: o.namespace } : {}),
      onError: onInformerError,
    });
    this.crds = new SupervisedInformer(o.client, CRD_RESOURCE, { onError: onInformerError });
    this.envSources = new EnvSourceWatch({
      client: o.client,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      onBundleEvent: (key) => this.queue.add(key),
      onInformerError,
    });
    this.objects = new ObjectCache({
      client: o.client,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.watchSyncTimeoutMs ? { syncTimeoutMs: o.watchSyncTimeoutMs } : {}),
      onBundleEvent: (key) => this.queue.add(key),
      onInformerError,
    });
  }

  async start(): Promise<void> {
    // A Bundle that starts or stops listing an object changes who may hold it:
    // wake the other Bundles that list the same objects (hand-over, Conflict).
    const wake = (b: KubeObject, old?: KubeObject): void => {
      if (changesListing(b, old)) this.epochs.bump(epochKeysOf(b, old));
      // The namespace's claims change with any of its Bundles: rebuilt on the next pass that needs them.
      this.claimsByNamespace.delete(b.metadata.namespace ?? '');
      this.stampsByNamespace.delete(b.metadata.namespace ?? '');
      if (old) this.claimsByNamespace.delete(old.metadata.namespace ?? '');
      if (old) this.stampsByNamespace.delete(old.metadata.namespace ?? '');
      this.queue.add(keyOf(b));
      for (const o of [...listedObjects(b), ...(old ? listedObjects(old) : [])]) {
        for (const k of this.objects.bundlesDeclaring(o.apiVersion, o.kind, o.namespace, o.name)) this.queue.add(k);
      }
    };
    this.bundles.addHandler({
      onAdd: (b) => wake(b),
      onUpdate: (old, b) => wake(b, old),
      onDelete: (b) => {
        this.epochs.bump(epochKeysOf(b));
        wake(b);
      },
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
    this.workersDone = runWorkers(
      this.queue,
      this.workers,
      (key) => this.reconcileKey(key),
      (key, err) => {
        this.o.logger.error({ ...objectRef(key), err: errorMessage(err) }, 'reconcile failed');
      },
    );
  }

  /** Stop taking work, let in-flight reconciles finish, stop watches. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.workersDone;
    await Promise.all([this.bundles.stop(), this.crds.stop(), this.objects.stop(), this.envSources.stop()]);
  }

  /**
   * Whether this controller can do its own work: its Bundle and CRD watches
   * have listed. The watches of the kinds Bundles list are not counted: a
   * kind one Bundle may not watch is that Bundle's condition (WatchNotSynced),
   * not the replica's readiness (a rollout of the operator would wait on it).
   */
  hasSynced(): boolean {
    return this.bundles.hasSynced() && this.crds.hasSynced();
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
    let outcome: ReconcileResult = 'success';
    const slash = key.indexOf('/');
    const log = this.o.logger.child({ namespace: key.slice(0, slash), name: key.slice(slash + 1) });
    try {
      // The one exit of a pass (pass-report.ts): its status written once, its next step mapped onto the queue.
      result = await finishPass(
        { api: this.api, events: this.o.events, log, now: () => this.o.clock.now() },
        await this.reconcile(key, log),
      );
      if (result === 'requeue') outcome = 'requeue';
      else if (typeof result === 'object') outcome = 'requeue_after';
      return result;
    } catch (err) {
      outcome = 'error';
      // Status on every path: a pass that failed says so on the Bundle before it is retried.
      await this.reportFailure(key, err);
      throw err;
    } finally {
      const seconds = (this.o.clock.now() - started) / 1000;
      this.o.metrics?.reconciled('bundle', outcome, seconds);
      // What controller-runtime logs at V(1): one line per pass, to follow a Bundle's passes under --log-level debug.
      log.debug({ outcome, seconds, ...(typeof result === 'object' ? { requeueAfterMs: result.requeueAfterMs } : {}) }, 'pass done');
    }
  }

  private async reconcile(key: BundleKey, log: Logger): Promise<PassReport> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const cached = this.bundles.get(namespace, name);
    if (!cached) {
      this.objects.undeclare(key);
      this.envSources.undeclare(key);
      this.gauges.forget(key);
      this.watchWaits.delete(key);
      return nextOnly({ kind: 'idle' });
    }
    // Another shard's Bundle (or one relabelled away, handed over as it is: nothing deleted, nothing released).
    if (this.o.bundleSelector !== undefined && !matchesSelector(this.o.bundleSelector, cached.metadata.labels)) {
      this.gauges.forget(key);
      this.envSources.undeclare(key);
      return nextOnly({ kind: 'idle' });
    }

    // 1. Parse. A Bundle the schema rejects changes nothing but its status.
    const parsed = BundleSchema.safeParse(cached);
    if (!parsed.success) {
      const message = `invalid Bundle: ${formatIssues(parsed.error).join('; ')}`;
      return {
        status: { over: cached, status: errorStatus(statusSubject(cached), Reasons.TerminalError, message, this.nowIso()) },
        next: { kind: 'idle' },
      };
    }
    const bundle = parsed.data;
    // Whose rights the requests for this Bundle's objects use (core/bundle/identity).
    const identity = actingIdentity(bundle, this.o.defaultServiceAccount);
    const api = this.apis.for(identity);

    // 2. Being deleted: the finalizer's work.
    if (bundle.metadata.deletionTimestamp !== undefined) {
      this.envSources.undeclare(key);
      return await finalizeBundle({
        bundle,
        live: cached,
        api,
        fence: this.fenceFor(key),
        watch: (rt) => this.objects.ensure(rt),
        events: this.o.events,
        serverTime: this.serverTime,
        clock: this.o.clock,
        logger: log,
        signRelease: this.signRelease,
        crdDefines: (gk) => this.crdDefines(gk),
        cachedKinds: () => this.objects.referencing(bundle.metadata.uid),
        stampSeal: this.stampSeal,
      });
    }

    // 3. Our finalizer first, so a delete of the Bundle always passes through us.
    if (!(bundle.metadata.finalizers ?? []).includes(Finalizers.deleteResources)) return await this.addFinalizer(bundle);

    // 4. Gather: kinds, live objects at the declared coordinates (watches started for every kind it may hold).
    let gathered: Gathered;
    try {
      gathered = await gatherBundle(
        { discovery: this.o.discovery, objects: this.objects, unlabelled: this.unlabelled, concurrency: this.applyConcurrency, log },
        key,
        bundle,
        identity,
        api,
      );
    } catch (err) {
      if (!(err instanceof WatchNotSynced)) throw err;
      // Blocked on something outside the Bundle: say so, give the worker back, and look again when the watch lists
      // (the cache wakes it) or after a wait that doubles each time, so one tenant's unwatchable kinds cannot
      // crowd out another's Bundles.
      const waits = (this.watchWaits.get(key) ?? 0) + 1;
      this.watchWaits.set(key, waits);
      const stuck = errorStatus(statusSubject(cached), Reasons.WatchNotSynced, `waiting for a watch: ${err.message}`, this.nowIso());
      return {
        status: {
          over: cached,
          status: withListedCountdownsCancelled(stuck, this.listedNow(bundle), namespace, this.notHeldInCache(bundle)),
        },
        next: { kind: 'after', ms: Math.min(WATCH_WAIT_MAX_MS, WATCH_WAIT_FIRST_MS * 2 ** (waits - 1)) },
      };
    }
    this.watchWaits.delete(key);
    const { specObjects, kinds, types, atCoordinates, readFailures, unwatched } = gathered;
    // What the workloads' envRefHash reads: declared first, so a change from here on wakes this Bundle again.
    const envRefs = envSourcesOf(bundle.spec.resources, liveByResource(bundle, kinds, atCoordinates));
    this.envSources.declare(key, namespace, envRefs);
    const atOwnCoordinates = (kind: SourceKind, sourceName: string) =>
      atCoordinates.find((o) => o.apiVersion === 'v1' && o.kind === kind && o.metadata.name === sourceName);
    const known =
      identity.kind === 'operator'
        ? (kind: SourceKind, sourceName: string) =>
            atOwnCoordinates(kind, sourceName) ?? this.objects.get(SOURCE_RESOURCES[kind], namespace, sourceName)
        : atOwnCoordinates;
    const envSources = await readEnvSources(api, namespace, envRefs, known, this.applyConcurrency);
    // Until the sources' watch lists (or where RBAC forbids it), a change is found by looking again.
    const envUnwatched = envRefs.some((r) => !this.envSources.watching(r.kind));

    // Soft-delete times are the API server's: expiry on a lower bound of its clock, new stamps on an upper bound.
    const now = this.serverTime.lowerBound();
    const stampAt = this.serverTime.upperBound();
    const plannedAt = this.o.clock.now();
    if (now === undefined || stampAt === undefined) {
      return {
        status: {
          over: cached,
          status: withListedCountdownsCancelled(
            interruptedStatus(statusSubject(cached), "waiting for the API server's time", this.nowIso()),
            this.listedNow(bundle),
            namespace,
            this.notHeldInCache(bundle),
          ),
        },
        next: { kind: 'retry' },
      };
    }

    // 5. Decide. Claims come from every live Bundle of the namespace (the Bundle informer has synced before any
    // worker runs). buildPlanInput is shared with `bundlesmith diff` and `pending`: the CLI decides on the same input.
    const input = buildPlanInput({
      bundle,
      kinds,
      crdReadiness: crdReadinessTable(this.crds.list()),
      ...(this.o.healthCheckDefaults !== undefined ? { healthCheckDefaults: this.o.healthCheckDefaults } : {}),
      objects: [...atCoordinates, ...controlledElsewhere(this.objects, bundle, identity, specObjects, types)],
      bundles: [],
      claims: this.claimsOf(namespace),
      stampsElsewhere: this.stampsOf(namespace),
      now,
      stampAt,
      stampSeal: this.stampSeal,
      envSources,
    });
    const planned = planBundle(input);

    // 6. Act (act.ts): claims, applies level by level, prunes only after every apply, withdrawals.
    const acted = await actOnPlan(
      {
        api,
        fence: this.fenceFor(key),
        readFailures,
        events: this.o.events,
        serverTime: this.serverTime,
        log,
        applyConcurrency: this.applyConcurrency,
        crdReadiness: input.crdReadiness,
        ...(input.healthChecks !== undefined ? { healthChecks: input.healthChecks } : {}),
        ...(this.o.metrics ? { metrics: this.o.metrics.bundleDeletes() } : {}),
      },
      bundle,
      planned,
      types,
    );
    if (acted.kind !== 'acted') {
      // Stopped on a stale read: the Bundle as it is now says so, and the next pass decides on it.
      if (acted.kind === 'not-recorded') return nextOnly({ kind: 'retry' });
      // Stopped part-way: the next pass decides on the Bundles as they are now, at once.
      if (acted.kind === 'changed-while-writing') return nextOnly({ kind: 'after', ms: 0 });
      const next: NextPass = acted.kind === 'stale-bundle' ? { kind: 'after', ms: STALE_BUNDLE_RECHECK_MS } : { kind: 'retry' };
      return acted.fresh
        ? {
            status: {
              over: acted.fresh,
              status: interruptedStatus(statusSubject(acted.fresh), staleReadMessage(acted.fresh, bundle.metadata), this.nowIso()),
            },
            next,
          }
        : nextOnly(next);
    }
    const { plan, outcome } = acted;

    // 7. Status, written only when it changed.
    const status = buildBundleStatus(
      plan,
      { applyFailures: outcome.applyFailures, pruneFailures: outcome.pruneFailures },
      bundle.status,
      this.nowIso(),
    );
    const inventory: InventoryInput = { recorded: bundle.status?.managedKinds, specObjects, controlled: input.controlled, plan };
    status.managedKinds = managedKinds(
      inventory,
      await confirmedEmpty(
        { api, crdDefines: (gk) => this.crdDefines(gk), unlabelled: this.unlabelled, logger: this.o.logger },
        bundle,
        dropCandidates(inventory),
      ),
    );
    this.gauges.record(key, status);

    // 8. When to look again (core/bundle/next-pass). Watches bring us back after our own writes.
    const next = nextPass(
      {
        plan,
        applyFailures: outcome.applyFailures,
        pruneFailures: outcome.pruneFailures,
        wrote: outcome.wrote,
        sincePlannedMs: this.o.clock.now() - plannedAt,
        ...(unwatched > 0 || envUnwatched ? { pollAfterMs: UNWATCHED_POLL_MS } : {}),
      },
      WROTE_RECHECK_MS,
    );
    // Over the Bundle as the pass's write-ahead left it, if it wrote one: pinned to the pass's own write, a status
    // that changed since (another writer) still wins.
    return {
      status: {
        over: outcome.recorded ?? cached,
        status,
        transitions: { target: bundleTarget(bundle), before: bundle.status, errorReason: errorEventReason(plan) },
      },
      next,
      decidedAtMs: this.o.clock.now(),
    };
  }

  /**
   * The claims of every live Bundle of the namespace as the Bundle informer
   * holds them (this pass's Bundle included: it plans the stored spec), kept
   * until a Bundle of the namespace changes. A pass would otherwise walk
   * every Bundle's resources: with a thousand Bundles in a namespace, that
   * walk was most of a no-op pass.
   */
  private claimsOf(namespace: string): ReadonlyMap<string, readonly BundleClaim[]> {
    let claims = this.claimsByNamespace.get(namespace);
    if (claims === undefined) {
      claims = claimsByObject(this.bundles.list().filter((b) => (b.metadata.namespace ?? '') === namespace));
      this.claimsByNamespace.set(namespace, claims);
    }
    return claims;
  }

  /**
   * The latest countdown stamp the namespace's Bundles record for each
   * object (this one's own record included: its entries are never later
   * than what it decides on), kept as claimsOf keeps the claims.
   */
  private stampsOf(namespace: string): ReadonlyMap<string, string> {
    let stamps = this.stampsByNamespace.get(namespace);
    if (stamps === undefined) {
      stamps = latestStampsElsewhere(
        this.bundles
          .list()
          .filter((b) => (b.metadata.namespace ?? '') === namespace)
          .map((b) => b.status as { pendingDeletions?: PendingDeletion[] } | undefined),
        namespace,
      );
      this.stampsByNamespace.set(namespace, stamps);
    }
    return stamps;
  }

  /**
   * A countdown over for a pass that cannot decide: its object, as a synced
   * cache of its kind shows it, is gone or not controlled by this Bundle
   * (cancelled by hand, let go, handed over). A kind with no synced cache
   * says nothing: the entry stays.
   */
  private notHeldInCache(bundle: Bundle): (p: PendingDeletion) => boolean {
    return (p) => {
      const informer = this.objects.informerFor(p.apiVersion, p.kind);
      if (informer === undefined || !informer.hasSynced()) return false;
      const o = informer.get(bundle.metadata.namespace, p.name);
      return o === undefined || !isControlledBy(o, bundle.metadata.uid);
    };
  }

  /** What the live Bundles of this Bundle's namespace list now (its own spec included), by object key: see withListedCountdownsCancelled. */
  private listedNow(bundle: Bundle): Set<string> {
    return new Set([...listedKeysOf(bundle.spec.resources, bundle.metadata.namespace), ...this.claimsOf(bundle.metadata.namespace).keys()]);
  }

  /** The send-time check of this Bundle's deletes and releases (ListingEpochs). */
  private fenceFor(key: BundleKey): PruneFence {
    const bundleKey = bundleEpochKey(key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1));
    return {
      decidedAt: () => this.epochs.current(),
      guard: (decidedAt, t) => {
        const target = objectEpochKey(
          objectKey({
            apiVersion: t.apiVersion,
            kind: t.kind,
            metadata: { name: t.name, ...(t.namespace !== undefined ? { namespace: t.namespace } : {}) },
          }),
        );
        return this.epochs.guard(decidedAt, [bundleKey, target], `Bundle ${key}, or a Bundle listing ${t.kind} ${t.name},`);
      },
    };
  }

  /** Whether a CustomResourceDefinition defines this group and kind, served or not. */
  private crdDefines(gk: GroupKind): boolean {
    return this.crds.list().some((crd) => {
      const spec = crd.spec as { group?: unknown; names?: { kind?: unknown } } | undefined;
      return spec?.group === gk.group && spec.names?.kind === gk.kind;
    });
  }

  /** Adds the finalizer, and says in status that the first pass comes next (the update wakes us). */
  private async addFinalizer(bundle: Bundle): Promise<PassReport> {
    const { namespace, name } = bundle.metadata;
    let updated: KubeObject;
    try {
      updated = await this.o.client.patch(
        BUNDLE_RESOURCE_TYPE,
        namespace,
        name,
        {
          metadata: {
            finalizers: [...(bundle.metadata.finalizers ?? []), Finalizers.deleteResources],
            resourceVersion: bundle.metadata.resourceVersion,
          },
        },
        'merge',
      );
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return nextOnly({ kind: 'idle' }); // a newer version comes through the watch
      throw err;
    }
    // With the spec's kinds recorded in status.managedKinds (the write-ahead recordKindsFirst makes otherwise): the
    // first pass then writes objects without a status write of its own first. Recording more kinds only widens what
    // the finalizer looks at.
    return {
      status: {
        over: updated,
        status: withSpecKinds(interruptedStatus(statusSubject(updated), 'finalizer added; reconciling', this.nowIso()), bundle),
      },
      next: { kind: 'idle' },
    };
  }

  private async reportFailure(key: BundleKey, err: unknown): Promise<void> {
    const slash = key.indexOf('/');
    const cached = this.bundles.get(key.slice(0, slash), key.slice(slash + 1));
    if (!cached) return;
    // A Bundle being deleted says so too: its finalizer could not finish this pass.
    const what = cached.metadata.deletionTimestamp ? 'being deleted: finalizing failed, retrying' : 'reconcile failed, retrying';
    try {
      const failed = errorStatus(statusSubject(cached), Reasons.RetriableError, `${what}: ${errorMessage(err)}`, this.nowIso());
      // Listing an object cancels its countdown in the record even when the pass failed before it could remove the stamp.
      const parsed = BundleSchema.safeParse(cached);
      const status = parsed.success
        ? withListedCountdownsCancelled(
            failed,
            this.listedNow(parsed.data),
            parsed.data.metadata.namespace,
            this.notHeldInCache(parsed.data),
          )
        : failed;
      await finishPass(
        { api: this.api, events: this.o.events, log: this.o.logger, now: () => this.o.clock.now() },
        { status: { over: cached, status }, next: { kind: 'retry' } },
      );
    } catch (statusErr) {
      this.o.logger.warn({ ...objectRef(key), err: errorMessage(statusErr) }, 'could not report the failure in status');
    }
  }

  private nowIso(): string {
    return formatRfc3339(this.o.clock.now());
  }
}

function keyOf(obj: KubeObject): BundleKey {
  return namespacedName(obj.metadata.namespace, obj.metadata.name);
}
