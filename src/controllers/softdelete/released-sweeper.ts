/**
 * Deletes objects released by a deleted Bundle once their deletionDelay has
 * passed. Driven by the objects themselves (the former-bundle label and the
 * deletionTimestamp annotation live on them), so it works with no Bundle
 * left, after any restart, and whatever the garbage collector mode is.
 * One metadata-only, label-selected watch per deletable namespaced resource.
 *
 * Only releases this operator signed are swept (core/softdelete/provenance.ts):
 * the label and the countdown annotations can be written by anyone who may
 * patch an object, so alone they are no permission to delete it.
 *
 * An object a live Bundle lists is never swept (it is that Bundle's, even while it cannot apply it): the sweep
 * decides only once its Bundle watch has synced, skips every listed object, and lists the namespace's Bundles
 * fresh right before a delete. Times are the API server's (ServerTime).
 */
import { EventReasons, Labels } from '../../api/names.js';
import { decideReleasedSweep, sweepable, type ReleasedObjectListing, type ReleasedSweepDecision } from '../../core/softdelete/sweep.js';
import { deletesNow } from '../../core/softdelete/decide.js';
import { formatRfc3339 } from '../../core/rfc3339.js';
import { formerBundleOf } from '../../core/softdelete/former-bundle.js';
import { preferredVersions } from '../../kube/discovery.js';
import { versionedObjectKey, versionedKeyFields, objectKey, parseVersionedObjectKey } from '../../core/bundle/objects.js';
import type { ServerTime } from '../../kube/clock.js';
import { RefusedWatches } from './refused-watches.js';
import { ReleaseProofs } from './release-proofs.js';
import { listingsOf, RelistedReleases } from './relisted-release.js';
import type { ReleaseRecords } from './release-records.js';
import { readWithRecord } from '../../core/softdelete/release-record.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { errorMessage, isForbidden } from '../../kube/errors.js';
import { guardedDelete } from '../../kube/guarded-write.js';
import { changesListing, epochKeysOf, ListingEpochs, objectEpochKey } from '../listing-epochs.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { SupervisedInformer } from '../../runtime/informer.js';
import { WorkQueue } from '../../runtime/workqueue.js';
import { SeenKeys } from '../../runtime/seen-keys.js';
import { runWorkers, type WorkResult } from '../../runtime/workers.js';
import type { ControllerDeps } from '../deps.js';
import type { KubeClient } from '../../kube/client.js';
import { serviceAccountUser } from '../../core/bundle/identity.js';

export interface ReleasedSweeperOptions extends ControllerDeps {
  workers?: number;
  rediscoverEveryMs?: number;
  /** How long start waits for the watches to sync. */
  syncTimeoutMs?: number;
  /** Lockdown: stamps and deletes act as this ServiceAccount of the object's namespace, never with the operator's rights. */
  defaultServiceAccount?: string;
}

export class ReleasedObjectSweeper {
  private readonly queue: WorkQueue<string>;
  private readonly informers = new Map<string, SupervisedInformer>();
  private workersDone: Promise<void> | undefined;
  private rediscoverTimer: (() => void) | undefined;
  private stopped = false;
  private initialSyncDone = false;
  private readonly bundles: SupervisedInformer;
  private readonly serverTime: ServerTime;
  /** Resources RBAC does not let the operator watch (refused-watches.ts). */
  private readonly refusedWatches: RefusedWatches;
  private readonly proofs: ReleaseProofs;
  /** The latest signing of each release (release-records.ts): a release counts only while it is the recorded one. */
  private readonly records: ReleaseRecords;
  /** Released objects live Bundles list (relisted-release.ts). */
  private readonly relisted: RelistedReleases;
  /** Released objects whose due deletion waits for an approval, reported once per countdown. */
  private readonly reportedWaits = new SeenKeys();
  /** Moved by Bundle events: a delete goes only while no Bundle started listing the object since it was decided. */
  private readonly epochs = new ListingEpochs();

  constructor(private readonly o: ReleasedSweeperOptions) {
    this.queue = new WorkQueue<string>({
      clock: o.clock,
      ...(o.metrics ? { metrics: o.metrics.queue('released', 'released-sweeper') } : {}),
    });
    this.serverTime = o.serverTime ?? o.client.serverTime;
    this.refusedWatches = new RefusedWatches(o.clock);
    this.proofs = new ReleaseProofs(o);
    this.records = o.releaseRecords;
    this.relisted = new RelistedReleases({
      events: o.events,
      proofs: this.proofs,
      records: this.records,
      now: () => o.clock.now(),
    });
    this.bundles = new SupervisedInformer(o.client, BUNDLE_RESOURCE_TYPE, { ...(o.namespace ? { namespace: o.namespace } : {}) });
    // A Bundle that stops (or starts) listing a released object changes the decision: look at that namespace's released objects again.
    // Every such event also moves the listing epochs: a delete decided before it is not sent after it.
    const again = (b: KubeObject, old?: KubeObject): void => {
      if (changesListing(b, old)) this.epochs.bump(epochKeysOf(b, old));
      this.enqueueNamespace(b.metadata.namespace ?? '');
      if (b.metadata.deletionTimestamp !== undefined) this.retryRefusedSoon();
    };
    this.bundles.addHandler({
      onAdd: (b) => again(b),
      onUpdate: (old, b) => again(b, old),
      onDelete: (b) => {
        again(b);
        this.retryRefusedSoon();
      },
    });
  }

  async start(): Promise<void> {
    this.bundles.start();
    // Workers first: a released object is swept as soon as its own watch and the Bundle watch have listed (each
    // sweep checks both), not after every resource's watch has (a slow or refused one would hold them all).
    this.workersDone = runWorkers(
      this.queue,
      this.o.workers ?? 2,
      (key) => this.sweep(key),
      (key, err) => {
        this.o.logger.warn({ ...versionedKeyFields(key), err: errorMessage(err) }, 'sweeping a released object failed');
        void this.proofs.recordRefused(err);
      },
    );
    await this.syncInformers();
    this.scheduleRediscovery();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.rediscoverTimer?.();
    this.refusedWatches.stop();
    this.queue.shutDown();
    await this.workersDone;
    await Promise.all([...this.informers.values(), this.bundles].map((i) => i.stop()));
  }

  /** True once the first discovery's watches synced or timed out (those keep retrying on their own). */
  hasSynced(): boolean {
    return this.initialSyncDone && this.bundles.hasSynced();
  }

  private enqueueNamespace(namespace: string): void {
    for (const informer of this.informers.values()) {
      const rt = informer.resource;
      for (const obj of informer.list()) {
        if ((obj.metadata.namespace ?? '') !== namespace) continue;
        this.queue.add(versionedObjectKey(rt.apiVersion, rt.kind, namespace, obj.metadata.name));
      }
    }
  }

  /** The live Bundles listing the object, from `bundles` when given (a fresh list), else the watch. */
  private listingsOf(rt: ResourceType, namespace: string, name: string, bundles?: readonly KubeObject[]): ReleasedObjectListing[] {
    const all = bundles ?? this.bundles.list().filter((b) => (b.metadata.namespace ?? '') === namespace);
    return listingsOf(all, { apiVersion: rt.apiVersion, kind: rt.kind, metadata: { name, namespace } }, this.o.discovery);
  }

  private scheduleRediscovery(): void {
    if (this.stopped) return;
    this.rediscoverTimer = this.o.clock.setTimeout(() => {
      this.syncInformers()
        .then(() => this.records.pruneGone(this.o.clock.now(), this.o.discovery, this.o.logger, this.o.namespace))
        .catch((err: unknown) => this.o.logger.warn({ err: errorMessage(err) }, 'rediscovery for the released-object sweep failed'))
        .finally(() => this.scheduleRediscovery());
    }, this.o.rediscoverEveryMs ?? 30_000);
  }

  /** Starts a watch for every sweepable resource not watched yet (CRDs appear at any time). */
  private async syncInformers(): Promise<void> {
    await this.o.discovery.refresh();
    const started: SupervisedInformer[] = [];
    for (const rt of preferredVersions(this.o.discovery.resources()).filter(sweepable)) {
      const id = `${rt.group}/${rt.plural}`;
      const watching = this.informers.get(id);
      if (watching?.resource.version === rt.version) continue;
      // The version served for the group and kind moved (a CRD upgrade): a watch at the old one sees nothing any more.
      if (watching) this.retire(id, watching);
      // A kind the operator may not list holds nothing it applied (its Bundle caches could not have watched it):
      // a refused list or watch stops that watch rather than retrying it forever; tried again after a while (RBAC
      // may grow). The refusal itself is the answer: asking RBAC first would cost two reviews per kind at every
      // start, requests the Bundle passes wait for under a small budget.
      if (this.refusedWatches.recentlyRefused(id)) continue;
      const informer = new SupervisedInformer(this.o.client, rt, {
        metadataOnly: true,
        labelSelector: Labels.formerBundle,
        ...(this.o.namespace ? { namespace: this.o.namespace } : {}),
        onError: (err) => {
          if (isForbidden(err)) this.refused(id, informer);
        },
      });
      const enqueue = (obj: { metadata: { namespace?: string; name: string } }) =>
        this.queue.add(versionedObjectKey(rt.apiVersion, rt.kind, obj.metadata.namespace, obj.metadata.name));
      // Leaving the watch (its label taken off, or gone): a release whose label was taken off has ended.
      const left = (obj: KubeObject): void => void this.records.endIfLeft(rt, obj, this.o.logger);
      informer.addHandler({ onAdd: enqueue, onUpdate: (_o, obj) => enqueue(obj), onDelete: left });
      this.informers.set(id, informer);
      informer.start();
      started.push(informer);
    }
    // A resource we may not list (RBAC) or that is unavailable (an aggregated API whose backend is down) must not
    // hold the operator's start: wait a bounded time, say which did not sync, and let them keep retrying.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(started.map((i) => i.waitForSync())),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, this.o.syncTimeoutMs ?? 10_000))),
    ]);
    clearTimeout(timer);
    const unsynced = started
      .filter((i) => !i.hasSynced() && this.informers.get(`${i.resource.group}/${i.resource.plural}`) === i)
      .map((i) => `${i.resource.plural}.${i.resource.group || 'core'}: ${i.health().lastError ?? 'not synced'}`);
    if (unsynced.length > 0)
      this.o.logger.warn({ unsynced }, 'released-object sweep: some resources could not be watched yet; retrying in the background');
    this.initialSyncDone = true;
  }

  private async sweep(key: string): Promise<WorkResult> {
    const at = parseVersionedObjectKey(key);
    const rt = at && this.o.discovery.lookup(at.apiVersion, at.kind);
    if (!at || !rt) return 'forget';
    const { namespace, name } = at;
    const cached = this.informers.get(`${rt.group}/${rt.plural}`)?.get(namespace, name);
    if (!cached) return 'forget';
    // Decide nothing before every Bundle's spec is known.
    if (!this.bundles.hasSynced()) return { requeueAfterMs: 1000 };
    // Listed by a live Bundle: it is that Bundle's (it lists it); a Bundle event brings it back here if that changes.
    const listings = this.listingsOf(rt, namespace, name);
    if (listings.length > 0) return this.relisted.cancelCountdown(this.writerFor(namespace), rt, cached, listings);
    const now = this.serverTime.lowerBound();
    const stampAt = this.serverTime.upperBound();
    if (now === undefined || stampAt === undefined) return 'requeue';
    // The object alone: a countdown it shows as ended is checked against the record of its release before any delete.
    const decision = decideReleasedSweep(cached.metadata, now, stampAt);
    if (decision.action !== 'skip')
      this.o.logger.debug({ ...versionedKeyFields(key), action: decision.action }, 'released-object sweep decided');
    // Only a release this operator signed is a permission to delete (and, before that, to wait for it).
    if (decision.action !== 'skip' && !(await this.proofs.proven(rt, cached))) return 'forget';
    // A release an earlier version signed (no record) is recorded first, as it stands: decided again on the object written.
    if (decision.action !== 'skip' && (await this.relisted.recordOlderRelease(this.writerFor(namespace), rt, cached))) return 'requeue';
    return this.act(rt, cached, decision, now);
  }

  /** Carries out a decision on `o` (as read: cached, or fresh at the due time). */
  private async act(rt: ResourceType, o: KubeObject, decision: ReleasedSweepDecision, now: number): Promise<WorkResult> {
    const { namespace = '', name } = o.metadata;
    const target = { apiVersion: rt.apiVersion, kind: rt.kind, name, namespace, uid: o.metadata.uid };
    switch (decision.action) {
      case 'skip':
        return 'forget';
      case 'invalid':
        await this.o.events.warning(target, EventReasons.InvalidDeletionDelay, `kept: ${decision.message}`);
        return 'forget';
      case 'wait':
        return { requeueAfterMs: Math.max(0, decision.deleteAtMs - now) };
      case 'await':
        // An approval is a write to the object: its watch event brings it back here.
        if (this.reportedWaits.first(`${o.metadata.uid ?? ''}@${decision.deletionTimestamp}`))
          await this.o.events.normal(
            target,
            EventReasons.AwaitingApproval,
            `released by deleted Bundle ${formerBundleOf(o.metadata) ?? '?'}: ${decision.message}`,
          );
        return 'forget';
      case 'mark':
        if (!(await this.relisted.startCountdown(this.writerFor(namespace), rt, o, decision.deletionTimestamp))) return 'forget';
        return { requeueAfterMs: Math.max(0, decision.deleteAtMs - now) };
      case 'delete':
      case 'expired':
        return this.deleteIfStillDue(rt, o);
    }
  }

  /**
   * Decides again on fresh reads right before deleting: a Bundle that lists it now keeps it (a fresh list of the
   * namespace's Bundles; the epoch, taken before the list, stops the DELETE of one listing it from then on); its
   * release counts only while it is the recorded one (readWithRecord: another is kept, a cancelled one counts down anew).
   */
  private async deleteIfStillDue(rt: ResourceType, cached: KubeObject): Promise<WorkResult> {
    const { namespace = '', name } = cached.metadata;
    const decidedAt = this.epochs.current();
    const guard = this.epochs.guard(
      decidedAt,
      [objectEpochKey(objectKey({ apiVersion: rt.apiVersion, kind: rt.kind, metadata: { name, namespace } }))],
      `a Bundle listing ${rt.kind} ${namespace}/${name}`,
    );
    const { items: bundlesNow } = await this.o.client.list(BUNDLE_RESOURCE_TYPE, namespace);
    if (this.listingsOf(rt, namespace, name, bundlesNow).length > 0) {
      await this.relisted.sawListed(rt, cached);
      return 'requeue';
    }
    const fresh = await this.o.client.tryGet(rt, namespace, name, { metadataOnly: true });
    if (!fresh || fresh.metadata.uid !== cached.metadata.uid) return 'forget';
    const recorded = await this.records.read(fresh.metadata.uid ?? '');
    // The reads just made refreshed the server-time estimate.
    const nowFresh = this.serverTime.lowerBound();
    // A countdown marked here is stamped with the upper bound, as every stamp is (red team 35).
    const stampFresh = this.serverTime.upperBound();
    if (nowFresh === undefined || stampFresh === undefined) return 'requeue';
    const read = readWithRecord(fresh.metadata, recorded);
    if (read === undefined) return this.proofs.notCurrent(rt, fresh, recorded === undefined);
    const again = decideReleasedSweep(read, nowFresh, stampFresh);
    if (again.action === 'skip' || !(await this.proofs.proven(rt, fresh))) return 'forget';
    // Not due on the fresh reads (a cancelled stamp reads as none: a new countdown is marked): carried out as decided.
    if (!deletesNow(again)) return this.act(rt, fresh, again, nowFresh);
    const target = { apiVersion: rt.apiVersion, kind: rt.kind, name, namespace, uid: fresh.metadata.uid };
    // One send, decided on the fresh reads above; a stale or refused one is decided again from the start. A 422
    // without field causes counts as stale here (isStaleWrite), as the finalizer counts it; the prune counts only a 409.
    const deleted = await guardedDelete(
      this.writerFor(namespace),
      { rt, namespace, name },
      { opts: { uid: fresh.metadata.uid, resourceVersion: fresh.metadata.resourceVersion, guard }, stale: 'conflict-or-failed-test' },
    );
    if (deleted.kind === 'stale' || deleted.kind === 'refused') return 'requeue';
    // Gone before the DELETE: nothing is reported deleted. Its record stays for the prune: a 404 may also mean the
    // version stopped being served since the read, and the record of an object still there must not go (red team 31).
    if (deleted.kind === 'gone') return 'forget';
    if (deleted.kind !== 'written' && deleted.kind !== 'declined') throw deleted.error;
    const former = formerBundleOf(fresh.metadata) ?? '?';
    const when = again.action === 'expired' ? again.deleteAfter : formatRfc3339(nowFresh);
    await this.o.events.normal(
      target,
      EventReasons.DeletedAfterDelay,
      `deleted ${rt.kind} ${name}, released by deleted Bundle ${former}: its deletion delay ended at ${when}`,
    );
    return this.records.forgetGone(fresh.metadata.uid ?? '', this.o.logger);
  }

  /** A Bundle being deleted may release objects of kinds whose watch was refused: try those again soon. */
  private retryRefusedSoon(): void {
    if (this.stopped) return;
    this.refusedWatches.retrySoon(() =>
      this.syncInformers().catch((err: unknown) =>
        this.o.logger.warn({ err: errorMessage(err) }, 'retrying refused watches for the released-object sweep failed'),
      ),
    );
  }

  /** RBAC refused the watch of a resource: stop it (it holds nothing this operator applied); tried again later (RefusedWatches). */
  private refused(id: string, informer: SupervisedInformer): void {
    if (this.informers.get(id) !== informer) return;
    this.retire(id, informer);
    if (this.refusedWatches.refuse(id))
      this.o.logger.debug({ resource: id }, 'released-object sweep: not allowed to watch this resource; skipped');
  }

  /** Stops a watch and forgets it. */
  private retire(id: string, informer: SupervisedInformer): void {
    this.informers.delete(id);
    informer.stop().catch((err: unknown) => this.o.logger.warn({ resource: id, err: errorMessage(err) }, 'stopping a watch failed'));
  }

  /** Who writes to released objects of a namespace: the lockdown identity there, else the operator. */
  private writerFor(namespace: string): KubeClient {
    const account = this.o.defaultServiceAccount;
    return account ? this.o.client.impersonating({ user: serviceAccountUser(namespace, account) }) : this.o.client;
  }
}
