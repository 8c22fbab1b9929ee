/**
 * The reconcile's inputs, from what was read. The controller (from its
 * caches) and `bundlesmith diff` / `pending` (from the API) read the same
 * things and hand them here, so the plan they decide on cannot differ:
 * the live object at each resource's coordinates, what the Bundle controls,
 * the claims of the namespace's live Bundles, the CRD readiness table.
 */
import type { BundleSpec } from '../../api/bundle.js';
import type { Condition, DeclaredRules, PendingDeletion } from '../../api/bundle-status.js';
import type { HealthCheck } from '../../api/health-checks.js';
import { healthCheckTable } from './health-checks.js';
import { countdownRecordOf, latestStampsElsewhere } from './countdown-record.js';
import { BundleConditionTypes } from '../../api/names.js';
import { findConditionByType } from './conditions.js';
import type { CrdReadiness, CrdReadinessTable, KindTable } from './kinds.js';
import { versionedObjectKey, isControlledBy, isRecord, kindKey, type LiveObject } from './objects.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import { listingsByObject, type BundleListing, type BundleLike } from './ownership.js';
import { hasClaimReference } from './owner-references.js';
import { claimRecordsOf } from './claim-record.js';
import type { EnvSourceRead, PlanBundle, PlanInput } from './plan.js';
import { crdReadinessFromAnnotations } from './readiness.js';

/** The Bundle to plan for, as the API returns it once parsed (or as a manifest would create it). */
export interface BundleToPlan {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation?: number | undefined;
    creationTimestamp?: string | undefined;
    deletionTimestamp?: string | undefined;
  };
  spec: BundleSpec;
  /** As stored: its count of ready resources at its observedGeneration opens deleteWhen BundleReady gates. */
  status?:
    | {
        observedGeneration?: number | undefined;
        resourcesReady?: string | undefined;
        conditions?: readonly Condition[] | undefined;
        declaredRules?: readonly DeclaredRules[] | undefined;
        pendingDeletions?: readonly PendingDeletion[] | undefined;
      }
    | undefined;
}

/**
 * Whether the Bundle, as last reported, had every resource ready with the
 * spec it has now (what `deleteWhen: BundleReady` waits for): at an
 * observedGeneration equal to its generation, `resourcesReady` all of them
 * (or, in a status without that count, Ready True). A spec that drops an
 * object bumps the generation, so a report from before the change never
 * counts. Not the Ready condition itself: a prune that failed (RBAC refused
 * the delete) makes the Bundle not Ready, and that must not close the gate,
 * or the failed delete closes it, the next pass (nothing to delete, nothing
 * failing) reports Ready and opens it, and the refused delete is sent again:
 * a loop without backoff for as long as the refusal lasts. The pass checks
 * its resources' readiness itself too (plan.ts), so this report alone never
 * opens the gate.
 */
export function isReadyWithCurrentSpec(bundle: BundleToPlan): boolean {
  const generation = bundle.metadata.generation;
  if (generation === undefined || bundle.status?.observedGeneration !== generation) return false;
  const counted = /^(\d+)\/(\d+)$/.exec(bundle.status.resourcesReady ?? '');
  if (counted) return counted[1] === counted[2];
  return findConditionByType(bundle.status.conditions, BundleConditionTypes.Ready)?.status === 'True';
}

export interface PlanSources {
  bundle: BundleToPlan;
  /** The spec's kinds that discovery resolved, by kindKey; a kind missing here is not served. */
  kinds: KindTable;
  crdReadiness: CrdReadinessTable;
  /** The operator's --health-checks-file rules; the Bundle's spec.healthChecks win for the same kind. */
  healthCheckDefaults?: readonly HealthCheck[];
  /**
   * Live objects as read: at least the ones at the spec's coordinates and
   * every one that references the Bundle (it controls them, or they carry
   * its claim). Others are ignored; an object read twice
   * (same apiVersion, kind, namespace, name) counts once, the first read.
   */
  objects: readonly LiveObject[];
  /** The Bundles of the namespace as read; `bundle` stands in for this one's stored version. */
  bundles: readonly BundleLike[];
  /**
   * The claims of those Bundles (claimsByObject over them, this one's
   * stored version included), when the caller keeps them already: the
   * controller rebuilds them only when a Bundle of the namespace changes,
   * so a pass does not walk every Bundle's resources. Only for a `bundle`
   * whose spec is the stored one.
   */
  listings?: ReadonlyMap<string, readonly BundleListing[]>;
  /** Lower bound of the API server's time (epoch ms). */
  now: number;
  /** Upper bound of the API server's time (epoch ms). */
  stampAt: number;
  /** Proves the countdown stamps the operator wrote (the controller's; the CLI reads stamps as written). */
  stampSeal?: StampSeal;
  /**
   * The latest countdown stamp the namespace's other Bundles record for each
   * object (latestStampsElsewhere), when the caller keeps them already; else
   * read from `bundles`.
   */
  stampsElsewhere?: ReadonlyMap<string, string>;
  /** What was read of the ConfigMaps and Secrets the workloads read (see PlanInput.envSources). */
  envSources?: ReadonlyMap<string, EnvSourceRead>;
}

export function planBundleOf(bundle: BundleToPlan): PlanBundle {
  const m = bundle.metadata;
  return {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    ...(m.generation !== undefined ? { generation: m.generation } : {}),
    // Loose metadata from the API: only a string is a timestamp.
    ...(typeof m.creationTimestamp === 'string' ? { creationTimestamp: m.creationTimestamp } : {}),
  };
}

function byCoordinatesOf(objects: readonly LiveObject[]): Map<string, LiveObject> {
  const byCoordinates = new Map<string, LiveObject>();
  for (const o of objects) {
    const key = versionedObjectKey(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name);
    if (!byCoordinates.has(key)) byCoordinates.set(key, o);
  }
  return byCoordinates;
}

/** The object at each resource's coordinates, by resource name, for kinds the server serves in the namespace (as the cache is keyed). */
export function liveByResource(
  bundle: Pick<BundleToPlan, 'metadata' | 'spec'>,
  kinds: KindTable,
  objects: readonly LiveObject[] | Map<string, LiveObject>,
): Map<string, LiveObject> {
  const byCoordinates = objects instanceof Map ? objects : byCoordinatesOf(objects);
  const live = new Map<string, LiveObject>();
  for (const r of bundle.spec.resources) {
    const o = r.spec.object;
    if (o === undefined || kinds.get(kindKey(o.apiVersion, o.kind))?.namespaced !== true) continue;
    const found = byCoordinates.get(versionedObjectKey(o.apiVersion, o.kind, bundle.metadata.namespace, o.metadata.name));
    if (found !== undefined) live.set(r.name, found);
  }
  return live;
}

export function buildPlanInput(s: PlanSources): PlanInput {
  const { bundle } = s;
  const namespace = bundle.metadata.namespace;
  const byCoordinates = byCoordinatesOf(s.objects);
  const live = liveByResource(bundle, s.kinds, byCoordinates);
  // A Bundle owns objects of its own namespace only (the spec cannot name another). An object elsewhere that
  // names the Bundle as its controller was not made by it: it is not the Bundle's to prune.
  const ownNamespace = [...byCoordinates.values()].filter((o) => (o.metadata.namespace ?? '') === namespace);
  const controlled = ownNamespace.filter((o) => isControlledBy(o, bundle.metadata.uid));
  // A claim is this Bundle's when the object's annotation or a Bundle's status records it (claim-record.ts).
  const claimRecords = claimRecordsOf([bundle, ...othersOf(s.bundles, bundle)]);
  const claimed = ownNamespace.filter(
    (o) => !isControlledBy(o, bundle.metadata.uid) && hasClaimReference(o, bundle.metadata.uid, claimRecords),
  );

  // Claims as they will stand: this Bundle's current spec replaces whatever version of it was read.
  const planned = planBundleOf(bundle);
  const listings = s.listings ?? listingsWithCurrentSpec(s.bundles, bundle, planned);

  return {
    bundle: planned,
    spec: bundle.spec,
    kinds: s.kinds,
    crdReadiness: s.crdReadiness,
    healthChecks: healthCheckTable(s.healthCheckDefaults, bundle.spec.healthChecks),
    live,
    controlled,
    claimed,
    claimRecords,
    now: s.now,
    stampAt: s.stampAt,
    listings,
    bundleReady: isReadyWithCurrentSpec(bundle),
    countdownRecord: countdownRecordOf(
      bundle.status,
      namespace,
      s.stampsElsewhere ??
        latestStampsElsewhere(
          othersOf(s.bundles, bundle).map((b) => statusOf(b)),
          namespace,
        ),
    ),
    ...(s.stampSeal !== undefined ? { stampSeal: s.stampSeal } : {}),
    ...(s.envSources !== undefined ? { envSources: s.envSources } : {}),
  };
}

/** The namespace's Bundles but this one. */
function othersOf(bundles: readonly BundleLike[], bundle: BundleToPlan): BundleLike[] {
  const namespace = bundle.metadata.namespace;
  return bundles.filter(
    (b) => (b.metadata.namespace ?? '') === namespace && b.metadata.name !== bundle.metadata.name && b.metadata.uid !== bundle.metadata.uid,
  );
}

/** A Bundle's status as read, for its record of countdowns; only its pendingDeletions are read, each checked for shape. */
function statusOf(b: BundleLike): { pendingDeletions: PendingDeletion[] } {
  const status = (b as { status?: unknown }).status;
  const pending = isRecord(status) && Array.isArray(status['pendingDeletions']) ? status['pendingDeletions'] : [];
  return {
    pendingDeletions: pending.filter(
      (p): p is PendingDeletion =>
        isRecord(p) &&
        typeof p['apiVersion'] === 'string' &&
        typeof p['kind'] === 'string' &&
        typeof p['name'] === 'string' &&
        typeof p['deletionTimestamp'] === 'string' &&
        typeof p['deleteAfter'] === 'string',
    ),
  };
}

/** Claims as they will stand: this Bundle's current spec replaces whatever version of it was read. */
function listingsWithCurrentSpec(bundles: readonly BundleLike[], bundle: BundleToPlan, planned: PlanBundle): Map<string, BundleListing[]> {
  return listingsByObject([...othersOf(bundles, bundle), { metadata: planned, spec: bundle.spec }]);
}

/** The readiness table from the cluster's CRDs (their CrReadyWhenField annotations), for every served version. */
export function crdReadinessTable(
  crds: readonly { metadata: { annotations?: Readonly<Record<string, string>> | undefined }; spec?: unknown }[],
): Map<string, CrdReadiness> {
  const table = new Map<string, CrdReadiness>();
  for (const crd of crds) {
    const readiness = crdReadinessFromAnnotations(crd.metadata.annotations);
    if (!readiness || !isRecord(crd.spec)) continue;
    const { group, names, versions } = crd.spec;
    const kind = isRecord(names) ? names['kind'] : undefined;
    if (typeof group !== 'string' || group === '' || typeof kind !== 'string' || kind === '' || !Array.isArray(versions)) continue;
    for (const v of versions)
      if (isRecord(v) && typeof v['name'] === 'string') table.set(kindKey(`${group}/${v['name']}`, kind), readiness);
  }
  return table;
}
