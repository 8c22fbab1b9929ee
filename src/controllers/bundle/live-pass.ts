/**
 * One pass over a live Bundle (not being deleted, our finalizer on it),
 * steps 4 to 8 of the Bundle controller's pass: gather what it lists (kinds,
 * live objects, the workloads' env sources), decide (core/bundle's
 * planBundle), act (act.ts), and report the status and the next look as one
 * PassReport. The controller (controller.ts) owns the queue, the informers
 * and the caches this reads; apart so that a pass reads top to bottom.
 */
import type { Bundle } from '../../api/bundle.js';
import type { HealthCheck } from '../../api/health-checks.js';
import { Reasons } from '../../api/names.js';
import { errorEventReason, errorStatus, interruptedStatus, staleReadMessage } from '../../core/bundle/exit-status.js';
import { nextPass, type NextPass } from '../../core/bundle/next-pass.js';
import { nextClaimRecord, statusClaimsOf } from '../../core/bundle/claim-record.js';
import { dropCandidates, managedKinds, type GroupKind, type InventoryInput } from '../../core/bundle/kind-inventory.js';
import { buildPlanInput, crdReadinessTable, liveByResource } from '../../core/bundle/plan-input.js';
import { planBundle } from '../../core/bundle/plan.js';
import { buildBundleStatus } from '../../core/bundle/status.js';
import type { ActingIdentity } from '../../core/bundle/identity.js';
import { withListedCountdownsCancelled } from '../../core/bundle/countdown-record.js';
import { envSourcesOf } from '../../core/bundle/workload-env-hash.js';
import { readEnvSources, SOURCE_RESOURCES, type SourceKind } from '../../kube/env-sources.js';
import type { ServerTime } from '../../kube/clock.js';
import type { KubeObject } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { StampSeal } from '../../core/softdelete/stamp-seal.js';
import type { ControllerDeps } from '../deps.js';
import { actOnPlan } from './act.js';
import type { PruneFence } from './act-deps.js';
import type { BundleApi } from './api.js';
import { recordListingCancels, recordLiveListingCancels } from './listed-releases.js';
import { controlledElsewhere, gatherBundle, type Gathered } from './gather.js';
import { bundleTarget } from './bundle-resource.js';
import { WatchNotSynced, type BundleKey, type ObjectCache } from './object-cache.js';
import type { EnvSourceWatch } from './env-sources.js';
import type { UnlabelledObjects } from './unlabelled.js';
import { confirmedEmpty } from './record.js';
import { readUnseenClaims } from './claim-reads.js';
import type { PassReport } from './pass-report.js';
import { nextOnly } from './pass-report.js';
import { statusSubject, type BundleGauges } from './status-writer.js';
import type { NamespaceRecords } from './namespace-records.js';

/** After a pass that wrote, look again this soon (watch events usually come first). */
const WROTE_RECHECK_MS = 300;
/** The cache shows a gone incarnation of the Bundle: look again this soon (its watch event is on its way). */
const STALE_BUNDLE_RECHECK_MS = 200;
/** An object at the Bundle's coordinates that no watch of ours sees (another controller's): read it again this often. */
const UNWATCHED_POLL_MS = 30_000;
/** A Bundle waiting for a kind's watch looks again after this, then twice as long each time, up to WATCH_WAIT_MAX_MS. */
const WATCH_WAIT_FIRST_MS = 1_000;
const WATCH_WAIT_MAX_MS = 5 * 60_000;

/** What a live pass reads and writes through: the controller's caches and ports. */
export interface LivePassDeps extends Pick<ControllerDeps, 'discovery' | 'clock' | 'logger' | 'events' | 'metrics' | 'releaseRecords'> {
  objects: ObjectCache;
  unlabelled: UnlabelledObjects;
  envSources: EnvSourceWatch;
  records: NamespaceRecords;
  serverTime: ServerTime;
  healthCheckDefaults?: readonly HealthCheck[] | undefined;
  applyConcurrency: number;
  stampSeal: StampSeal;
  gauges: BundleGauges;
  /** Bundles waiting for a kind's watch, and how many times in a row: their next look grows with it. */
  watchWaits: Map<BundleKey, number>;
  crds(): readonly KubeObject[];
  crdDefines(gk: GroupKind): boolean;
  fenceFor(key: BundleKey): PruneFence;
  nowIso(): string;
}

export async function reconcileLive(
  d: LivePassDeps,
  key: BundleKey,
  bundle: Bundle,
  cached: KubeObject,
  identity: ActingIdentity,
  api: BundleApi,
  log: Logger,
): Promise<PassReport> {
  const namespace = bundle.metadata.namespace;
  // 4. Gather: kinds, live objects at the declared coordinates (watches started for every kind it may hold).
  let gathered: Gathered;
  try {
    gathered = await gatherBundle(
      { discovery: d.discovery, objects: d.objects, unlabelled: d.unlabelled, concurrency: d.applyConcurrency, log },
      key,
      bundle,
      identity,
      api,
    );
  } catch (err) {
    if (!(err instanceof WatchNotSynced)) throw err;
    // Nothing gathered, but the listing cancels all the same: each listed object read as the operator.
    await recordLiveListingCancels(d, d.discovery, cached, log);
    // Blocked on something outside the Bundle: say so, give the worker back, and look again when the watch lists
    // (the cache wakes it) or after a wait that doubles each time, so one tenant's unwatchable kinds cannot
    // crowd out another's Bundles.
    const waits = (d.watchWaits.get(key) ?? 0) + 1;
    d.watchWaits.set(key, waits);
    const stuck = errorStatus(statusSubject(cached), Reasons.WatchNotSynced, `waiting for a watch: ${err.message}`, d.nowIso());
    return {
      status: {
        over: cached,
        status: withListedCountdownsCancelled(stuck, d.records.listedNow(bundle), namespace, d.records.notHeldInCache(bundle)),
      },
      next: { kind: 'after', ms: Math.min(WATCH_WAIT_MAX_MS, WATCH_WAIT_FIRST_MS * 2 ** (waits - 1)) },
    };
  }
  d.watchWaits.delete(key);
  const { specObjects, kinds, types, atCoordinates, readFailures, unwatched } = gathered;
  // Listing a released object cancels its countdown: recorded before anything is written to it.
  await recordListingCancels(d, d.discovery, bundle, gathered, log);
  // What the workloads' envRefHash reads: declared first, so a change from here on wakes this Bundle again.
  const envRefs = envSourcesOf(bundle.spec.resources, liveByResource(bundle, kinds, atCoordinates));
  d.envSources.declare(key, namespace, envRefs);
  const atOwnCoordinates = (kind: SourceKind, sourceName: string) =>
    atCoordinates.find((o) => o.apiVersion === 'v1' && o.kind === kind && o.metadata.name === sourceName);
  const known =
    identity.kind === 'operator'
      ? (kind: SourceKind, sourceName: string) =>
          atOwnCoordinates(kind, sourceName) ?? d.objects.get(SOURCE_RESOURCES[kind], namespace, sourceName)
      : atOwnCoordinates;
  const envSources = await readEnvSources(api, namespace, envRefs, known, d.applyConcurrency);
  // Until the sources' watch lists (or where RBAC forbids it), a change is found by looking again.
  const envUnwatched = envRefs.some((r) => !d.envSources.watching(r.kind));

  // Soft-delete times are the API server's: expiry on a lower bound of its clock, new stamps on an upper bound.
  const now = d.serverTime.lowerBound();
  const stampAt = d.serverTime.upperBound();
  const plannedAt = d.clock.now();
  if (now === undefined || stampAt === undefined) {
    return {
      status: {
        over: cached,
        status: withListedCountdownsCancelled(
          interruptedStatus(statusSubject(cached), "waiting for the API server's time", d.nowIso()),
          d.records.listedNow(bundle),
          namespace,
          d.records.notHeldInCache(bundle),
        ),
      },
      next: { kind: 'retry' },
    };
  }

  // The objects its claim record names that the caches did not show are read fresh (claim-reads.ts).
  const cachedObjects = [...atCoordinates, ...controlledElsewhere(d.objects, bundle, identity, specObjects, types)];
  const recordedClaims = statusClaimsOf(bundle.status);
  const unseenClaims = await readUnseenClaims(
    api,
    namespace,
    recordedClaims ?? [],
    new Set(cachedObjects.flatMap((o) => o.metadata.uid ?? [])),
    log,
  );
  const objectsRead = [...cachedObjects, ...unseenClaims.objects];

  // 5. Decide. Claims come from every live Bundle of the namespace (the Bundle informer has synced before any
  // worker runs). buildPlanInput is shared with `bundlesmith diff` and `pending`: the CLI decides on the same input.
  const input = buildPlanInput({
    bundle,
    kinds,
    crdReadiness: crdReadinessTable(d.crds()),
    ...(d.healthCheckDefaults !== undefined ? { healthCheckDefaults: d.healthCheckDefaults } : {}),
    objects: objectsRead,
    bundles: [],
    listings: d.records.listingsOf(namespace),
    stampsElsewhere: d.records.stampsOf(namespace),
    now,
    stampAt,
    stampSeal: d.stampSeal,
    envSources,
  });
  const planned = planBundle(input);

  // 6. Act (act.ts): claims, applies level by level, prunes only after every apply, withdrawals.
  const acted = await actOnPlan(
    {
      api,
      fence: d.fenceFor(key),
      readFailures,
      events: d.events,
      serverTime: d.serverTime,
      log,
      applyConcurrency: d.applyConcurrency,
      releaseRecords: d.releaseRecords,
      crdReadiness: input.crdReadiness,
      ...(input.healthChecks !== undefined ? { healthChecks: input.healthChecks } : {}),
      ...(d.metrics ? { metrics: d.metrics.bundleDeletes() } : {}),
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
            status: interruptedStatus(statusSubject(acted.fresh), staleReadMessage(acted.fresh, bundle.metadata), d.nowIso()),
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
    d.nowIso(),
  );
  const inventory: InventoryInput = { recorded: bundle.status?.managedKinds, specObjects, controlled: input.controlled, plan };
  status.managedKinds = managedKinds(
    inventory,
    await confirmedEmpty(
      { api, crdDefines: (gk) => d.crdDefines(gk), unlabelled: d.unlabelled, logger: d.logger },
      bundle,
      dropCandidates(inventory),
    ),
  );
  status.claims = nextClaimRecord({
    previous: recordedClaims,
    claimed: input.claimed ?? [],
    seen: new Set(objectsRead.flatMap((o) => o.metadata.uid ?? [])),
    gone: unseenClaims.gone,
    landed: outcome.claimsSent?.landed ?? [],
    unknown: outcome.claimsSent?.unknown ?? [],
    withdrawn: outcome.withdrawn ?? new Set(),
  });
  d.gauges.record(key, status);

  // 8. When to look again (core/bundle/next-pass). Watches bring us back after our own writes.
  const next = nextPass(
    {
      plan,
      applyFailures: outcome.applyFailures,
      pruneFailures: outcome.pruneFailures,
      wrote: outcome.wrote,
      sincePlannedMs: d.clock.now() - plannedAt,
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
    decidedAtMs: d.clock.now(),
  };
}
