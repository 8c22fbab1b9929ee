/**
 * The Bundle controller: its queue, informers and caches, and the first
 * steps of a pass for one Bundle key: parse, finalize a Bundle being deleted
 * (finalize.ts), add our finalizer; a live Bundle's pass goes on in
 * live-pass.ts. Level-based: a pass's result is the next requeue, never a
 * stored event. Status is written on every path (pass-report.ts).
 */
import { BundleSchema, formatIssues } from '../../api/bundle.js';
import type { HealthCheck } from '../../api/health-checks.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { Finalizers, Reasons } from '../../api/names.js';
import { errorStatus } from '../../core/bundle/exit-status.js';
import { listedObjects } from '../../core/bundle/ownership.js';
import { recordLiveListingCancels } from './listed-releases.js';
import { type GroupKind } from '../../core/bundle/kind-inventory.js';
import { actingIdentity } from '../../core/bundle/identity.js';
import { matchesSelector, type LabelSelector } from '../../core/selector.js';
import { formatRfc3339 } from '../../core/rfc3339.js';
import { CRD_RESOURCE } from '../../kube/crds.js';
import { errorMessage } from '../../kube/errors.js';
import { namespacedName, type KubeObject, type ResourceType } from '../../kube/types.js';
import { objectRef, type Logger } from '../../observability/logger.js';
import type { ServerTime } from '../../kube/clock.js';
import { SupervisedInformer } from '../../runtime/informer.js';
import { WorkQueue } from '../../runtime/workqueue.js';
import { runWorkers, type WorkResult } from '../../runtime/workers.js';
import type { ReconcileResult } from '../../observability/metrics.js';
import type { ControllerDeps } from '../deps.js';
import { APPLY_CONCURRENCY, pruneFenceOf } from './act-deps.js';
import { changesListing, crdEpochKeys, epochKeysOf, ListingEpochs } from '../listing-epochs.js';
import { BundleApis, type BundleApi } from './api.js';
import { finalizeBundle } from './finalize.js';
import { ObjectCache, type BundleKey } from './object-cache.js';
import { EnvSourceWatch } from './env-sources.js';
import { UnlabelledObjects } from './unlabelled.js';
import { withListedCountdownsCancelled } from '../../core/bundle/countdown-record.js';
import { finishPass, nextOnly, type PassReport } from './pass-report.js';
import { releaseSigner } from '../../core/softdelete/provenance.js';
import { stampSeal, type StampSeal } from '../../core/softdelete/stamp-seal.js';
import { BundleGauges, statusSubject } from './status-writer.js';
import { NamespaceRecords } from './namespace-records.js';
import { reconcileLive, type LivePassDeps } from './live-pass.js';
import { addFinalizer } from './add-finalizer.js';

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
  /** Signs the countdown stamps this operator writes, and tells them from stamps written by hand. */
  private readonly stampSeal: StampSeal;
  private readonly serverTime: ServerTime;
  /** Claims and countdown stamps of each namespace's live Bundles. */
  private readonly records: NamespaceRecords;
  /** What a live pass (live-pass.ts) reads and writes through. */
  private readonly livePass: LivePassDeps;
  /** The ConfigMaps and Secrets the Bundles' workloads read (envRefHash), watched by metadata. */
  private readonly envSources: EnvSourceWatch;
  /** Bundles waiting for a kind's watch, and how many times in a row: their next look grows with it. */
  private readonly watchWaits = new Map<BundleKey, number>();
  /** Moved by every Bundle event that may change what is listed: the send-time check of deletes and releases. */
  private readonly epochs = new ListingEpochs();

  constructor(private readonly o: BundleControllerOptions) {
    this.workers = o.workers ?? 4;
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
    this.records = new NamespaceRecords(this.bundles, this.objects);
    this.livePass = {
      // discovery, clock, logger, events, metrics, the release key and records
      ...o,
      objects: this.objects,
      unlabelled: this.unlabelled,
      envSources: this.envSources,
      records: this.records,
      serverTime: this.serverTime,
      healthCheckDefaults: o.healthCheckDefaults,
      applyConcurrency: this.applyConcurrency,
      stampSeal: this.stampSeal,
      gauges: this.gauges,
      watchWaits: this.watchWaits,
      crds: () => this.crds.list(),
      crdDefines: (gk) => this.crdDefines(gk),
      fenceFor: (key) => pruneFenceOf(this.epochs, key),
      nowIso: () => this.nowIso(),
    };
  }

  async start(): Promise<void> {
    // A Bundle that starts or stops listing an object changes who may hold it:
    // wake the other Bundles that list the same objects (hand-over, Conflict).
    const wake = (b: KubeObject, old?: KubeObject): void => {
      if (changesListing(b, old)) this.epochs.bump(epochKeysOf(b, old));
      // The namespace's claims change with any of its Bundles: rebuilt on the next pass that needs them.
      this.records.forget(b.metadata.namespace ?? '');
      if (old) this.records.forget(old.metadata.namespace ?? '');
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
    // What the group serves may have changed: a write of a Bundle listing one of its objects, decided before, is not sent.
    const everyBundle = (crd: KubeObject) => {
      this.o.discovery.invalidate();
      const bundles = this.bundles.list();
      const group = (crd.spec as { group?: unknown } | undefined)?.group;
      if (typeof group === 'string') this.epochs.bump(crdEpochKeys(bundles, group));
      for (const b of bundles) this.queue.add(keyOf(b));
    };
    this.crds.addHandler({ onAdd: everyBundle, onUpdate: (_old, crd) => everyBundle(crd), onDelete: everyBundle });
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
      await recordLiveListingCancels(this.o, this.o.discovery, cached, log);
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
        fence: pruneFenceOf(this.epochs, key),
        watch: (rt) => this.objects.ensure(rt),
        events: this.o.events,
        serverTime: this.serverTime,
        clock: this.o.clock,
        logger: log,
        signRelease: releaseSigner(this.o.releaseKey),
        releaseRecords: this.o.releaseRecords,
        crdDefines: (gk) => this.crdDefines(gk),
        cachedKinds: () => this.objects.referencing(bundle.metadata.uid),
        stampSeal: this.stampSeal,
      });
    }

    // 3. Our finalizer first, so a delete of the Bundle always passes through us.
    if (!(bundle.metadata.finalizers ?? []).includes(Finalizers.deleteResources))
      return await addFinalizer(this.o.client, bundle, this.nowIso());

    // 4-8. Gather, decide, act, report (live-pass.ts).
    return await reconcileLive(this.livePass, key, bundle, cached, identity, api, log);
  }

  /** Whether a CustomResourceDefinition defines this group and kind, served or not. */
  private crdDefines(gk: GroupKind): boolean {
    return this.crds.list().some((crd) => {
      const spec = crd.spec as { group?: unknown; names?: { kind?: unknown } } | undefined;
      return spec?.group === gk.group && spec.names?.kind === gk.kind;
    });
  }

  private async reportFailure(key: BundleKey, err: unknown): Promise<void> {
    const slash = key.indexOf('/');
    const cached = this.bundles.get(key.slice(0, slash), key.slice(slash + 1));
    if (!cached) return;
    await recordLiveListingCancels(this.o, this.o.discovery, cached, this.o.logger);
    // A Bundle being deleted says so too: its finalizer could not finish this pass.
    const what = cached.metadata.deletionTimestamp ? 'being deleted: finalizing failed, retrying' : 'reconcile failed, retrying';
    try {
      const failed = errorStatus(statusSubject(cached), Reasons.RetriableError, `${what}: ${errorMessage(err)}`, this.nowIso());
      // And in the Bundle's record of its countdowns, before the stamp could be removed.
      const parsed = BundleSchema.safeParse(cached);
      const status = parsed.success
        ? withListedCountdownsCancelled(
            failed,
            this.records.listedNow(parsed.data),
            parsed.data.metadata.namespace,
            this.records.notHeldInCache(parsed.data),
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
