/**
 * `bundlesmith pending`: soft-deleted objects, listed
 * (`cancel` and `delete-now` are in pending-target.ts, `approve` in approve.ts).
 * Two kinds exist: objects a live Bundle dropped from its spec, and objects a
 * deleted Bundle released (labelled former-bundle, swept by the operator with
 * no Bundle left). Both are decided as the operator decides them: a live
 * Bundle's through the controller's plan (buildPlanInput, planBundle, and the
 * pendingDeletionsOf that fills status.pendingDeletions), a released
 * object's through the sweep's decideReleasedSweep. Stamped objects the
 * operator will not delete are listed too, with the reason.
 */
import { formerBundleOf } from '../core/softdelete/former-bundle.js';
import { BundleSchema } from '../api/bundle.js';
import { BUNDLE_RESOURCE_TYPE } from '../kube/bundle-resource.js';
import { Annotations, Labels, ReleaseRecordLabel } from '../api/names.js';
import type { CrdReadinessTable } from '../core/bundle/kinds.js';
import { controllerOf, objectKey, type LiveObject } from '../core/bundle/objects.js';
import { listingsByObject, type BundleListing } from '../core/bundle/ownership.js';
import { pendingDeletionsOf } from '../core/bundle/pending.js';
import { buildPlanInput } from '../core/bundle/plan-input.js';
import { planBundle, type BundlePlan, type PlanInput } from '../core/bundle/plan.js';
import { formatRemaining } from '../core/duration.js';
import { pendingDeletionOf } from '../core/softdelete/decide.js';
import { decideReleasedSweep, sweepable } from '../core/softdelete/sweep.js';
import { parseReleaseRecord, readWithRecord, recordedUidOf, type ReleaseRecord } from '../core/softdelete/release-record.js';
import { parseRfc3339 } from '../core/rfc3339.js';
import { preferredVersions } from '../kube/discovery.js';
import { errorMessage } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { formatObjectRef } from './args.js';
import type { Cluster } from './cluster.js';
import { listControlled, managedKindsOf, readCrdReadiness, readPlanSources, resolveKinds, serverNow } from './cluster-state.js';
import type { CliIo } from './io.js';

export interface PendingObject {
  namespace: string;
  apiVersion: string;
  kind: string;
  name: string;
  /** Bundle that dropped (pending) or released (released) it. */
  bundle: string;
  state: 'pending' | 'released';
  /**
   * The countdown's stamp as the Bundle's status reports it: the object's
   * annotation, or the stamp the operator writes now for a countdown it has
   * not started yet. Empty when there is no countdown to report.
   */
  deletionTimestamp: string;
  /** When it will be deleted; undefined when the operator will not delete it (then `problem` says why). */
  deleteAfter?: string;
  /** What the deletion waits for now (the status's waitingFor); absent once it is due and open. */
  waitingFor?: 'Delay' | 'Approval' | 'BundleReady';
  problem?: string;
}

/** "in 1h29m0s", "overdue by 3s", "when approved", "when its Bundle's resources are Ready" or "-". */
export function formatDue(deleteAfter: string | undefined, now: number, waitingFor?: PendingObject['waitingFor']): string {
  if (waitingFor === 'Approval') return 'when approved';
  if (waitingFor === 'BundleReady') return "when its Bundle's resources are Ready";
  const at = deleteAfter === undefined ? undefined : parseRfc3339(deleteAfter);
  if (at === undefined) return '-';
  return formatRemaining(at - now);
}

/** Soonest first; rows without a time (kept) last; then by namespace and name. RFC 3339 UTC times of one format sort as text. */
export function comparePending(a: PendingObject, b: PendingObject): number {
  const timeless = (p: PendingObject): number => (p.deleteAfter === undefined ? 1 : 0);
  return (
    timeless(a) - timeless(b) ||
    (a.deleteAfter ?? '').localeCompare(b.deleteAfter ?? '') ||
    a.namespace.localeCompare(b.namespace) ||
    a.name.localeCompare(b.name)
  );
}

export function formatPendingTable(items: readonly PendingObject[], now: number): string[] {
  const rows = [
    ['NAMESPACE', 'OBJECT', 'BUNDLE', 'STATE', 'WAITING-FOR', 'DELETE-AFTER', 'DUE'],
    ...items.map((p) => [
      p.namespace,
      formatObjectRef(p.apiVersion, p.kind, p.name),
      p.bundle,
      p.state,
      p.waitingFor ?? '-',
      p.deleteAfter ?? `- (${p.problem ?? 'unknown'})`,
      formatDue(p.deleteAfter, now, p.waitingFor),
    ]),
  ];
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col] ?? 0))).join('  '));
}

function stampOf(o: LiveObject): string | undefined {
  return o.metadata.annotations?.[Annotations.deletionTimestamp];
}

/** Why a stamped object the Bundle controls is not among the plan's pending deletions: what the operator does instead. */
function keptBecause(o: LiveObject, plan: BundlePlan): string {
  const uid = o.metadata.uid;
  if (plan.takeHolds.some((c) => c.target.uid === uid)) return 'listed in the Bundle again: the operator cancels the countdown';
  const prune = plan.prune.find((a) => a.target.uid === uid);
  if (prune?.action === 'invalid' || prune?.action === 'listed-elsewhere') return prune.message;
  const withheld = plan.withheld.find((w) => w.action.target.uid === uid);
  if (withheld !== undefined) return `held back: ${withheld.reason}`;
  if (plan.issues.length > 0) return 'the Bundle spec is invalid: the operator deletes nothing until it is fixed';
  return 'the operator keeps it';
}

/**
 * The objects one live Bundle will delete after a countdown, exactly as its
 * status.pendingDeletions reports them (the same pendingDeletionsOf over the
 * same plan), plus the stamped objects it controls that it will not delete,
 * each with the reason.
 */
export function pendingOfPlan(input: PlanInput, plan: BundlePlan): PendingObject[] {
  const { namespace, name: bundle } = input.bundle;
  const out: PendingObject[] = pendingDeletionsOf(plan).map((p) => ({
    namespace,
    apiVersion: p.apiVersion,
    kind: p.kind,
    name: p.name,
    bundle,
    state: 'pending',
    deletionTimestamp: p.deletionTimestamp,
    deleteAfter: p.deleteAfter,
    ...(p.waitingFor !== undefined ? { waitingFor: p.waitingFor } : {}),
  }));
  const listed = new Set(out.map((p) => objectKey({ apiVersion: p.apiVersion, kind: p.kind, metadata: { name: p.name, namespace } })));
  for (const o of input.controlled) {
    const stamp = stampOf(o);
    if (stamp === undefined || o.metadata.deletionTimestamp !== undefined || listed.has(objectKey(o))) continue;
    out.push({
      namespace,
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.metadata.name,
      bundle,
      state: 'pending',
      deletionTimestamp: stamp,
      problem: keptBecause(o, plan),
    });
  }
  return out;
}

/**
 * A stamped object controlled by a Bundle the operator does not plan for
 * (one the schema rejects, or one being deleted): kept, and why.
 */
export function unplannedEntry(o: LiveObject, bundle: { namespace: string; name: string }, why: string): PendingObject | undefined {
  const stamp = stampOf(o);
  if (stamp === undefined) return undefined;
  return {
    namespace: bundle.namespace,
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    bundle: bundle.name,
    state: 'pending',
    deletionTimestamp: stamp,
    problem: why,
  };
}

/**
 * What the operator's sweep does with an object a deleted Bundle released
 * (the same decideReleasedSweep and pendingDeletionOf): undefined when it is
 * not a released object. A live Bundle that lists it takes hold of it, so
 * it is not swept. `record`: the record of its release, or 'unread' where
 * the caller may not read the records (the object is shown as it reads).
 */
export function releasedEntry(
  o: LiveObject,
  listings: ReadonlyMap<string, readonly BundleListing[]>,
  now: number,
  stampAt: number,
  record?: ReleaseRecord | 'unread',
): PendingObject | undefined {
  const base = {
    namespace: o.metadata.namespace ?? '',
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    bundle: formerBundleOf(o.metadata) ?? '',
    state: 'released' as const,
  };
  const stamp = stampOf(o) ?? '';
  if (o.metadata.annotations?.[Annotations.deletionPolicy] === 'Orphan' && controllerOf(o) === undefined)
    return { ...base, deletionTimestamp: '', problem: `${Annotations.deletionPolicy} Orphan: kept, never deleted` };
  // Read as the sweep reads it, against the record of its release (release-record.ts).
  const read = record === 'unread' ? o.metadata : readWithRecord(o.metadata, record);
  if (read === undefined)
    return {
      ...base,
      deletionTimestamp: stamp,
      problem:
        record === undefined
          ? 'its release record is gone: kept (`bundlesmith delete-now` deletes it)'
          : "not the operator's latest release of it (written back, or ended): kept",
    };
  const decision = decideReleasedSweep(read, now, stampAt);
  if (decision.action === 'skip') return undefined;
  const listing = listings.get(objectKey(o))?.[0];
  if (listing !== undefined)
    return {
      ...base,
      deletionTimestamp: stamp,
      problem: `Bundle ${listing.name} lists it: the operator takes hold of it or cancels its countdown`,
    };
  const pending = pendingDeletionOf(decision);
  if (pending !== undefined) return { ...base, ...pending };
  if (decision.action === 'invalid') return { ...base, deletionTimestamp: stamp, problem: `${decision.message}: the operator keeps it` };
  // No deletionDelay and no stamp: nothing to count down.
  return { ...base, deletionTimestamp: stamp, problem: `no ${Annotations.deletionDelay}: the operator deletes it at once` };
}

/** A live Bundle's pending deletions, decided as its controller decides them. */
async function pendingOfBundle(
  cluster: Cluster,
  raw: KubeObject,
  namespaceBundles: readonly KubeObject[],
  crdReadiness: CrdReadinessTable,
  io: CliIo,
): Promise<PendingObject[]> {
  const namespace = raw.metadata.namespace ?? '';
  const id = { namespace, name: raw.metadata.name };
  const parsed = BundleSchema.safeParse(raw);
  if (!parsed.success || parsed.data.metadata.deletionTimestamp !== undefined) {
    // Not planned by the controller: an invalid Bundle changes nothing; a deleted one releases or deletes its objects (its finalizer).
    const why = parsed.success
      ? 'its Bundle is being deleted: the finalizer releases or deletes it'
      : 'its Bundle is invalid (schema): the operator changes nothing';
    const types = await resolveKinds(cluster, managedKindsOf(raw));
    const controlled = await listControlled(cluster, namespace, raw.metadata.uid, types, io);
    return controlled.flatMap((o) => unplannedEntry(o, id, why) ?? []);
  }
  const { sources } = await readPlanSources(
    cluster,
    { bundle: parsed.data, controls: true, managedKinds: managedKindsOf(raw), bundles: namespaceBundles, crdReadiness },
    io,
  );
  const input = buildPlanInput(sources);
  return pendingOfPlan(input, planBundle(input));
}

export async function listPending(cluster: Cluster, namespace: string | undefined, io: CliIo): Promise<PendingObject[]> {
  const out: PendingObject[] = [];
  io.err(`reading Bundles${namespace ? ` in ${namespace}` : ' in all namespaces'}`);
  const { items: bundles } = await cluster.client.list(BUNDLE_RESOURCE_TYPE, namespace);
  const byNamespace = new Map<string, KubeObject[]>();
  for (const b of bundles) {
    const ns = b.metadata.namespace ?? '';
    byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), b]);
  }
  const crdReadiness = bundles.length > 0 ? await readCrdReadiness(cluster, io) : new Map<string, never>();
  for (const bundle of bundles)
    out.push(...(await pendingOfBundle(cluster, bundle, byNamespace.get(bundle.metadata.namespace ?? '') ?? [], crdReadiness, io)));

  // Where the sweeper looks for released objects: the same resources.
  const resources = preferredVersions(cluster.discovery.resources()).filter(sweepable);
  io.err(`scanning ${resources.length} resource types for objects released by deleted Bundles`);
  const released: LiveObject[] = [];
  for (const rt of resources) {
    try {
      released.push(...(await cluster.client.list(rt, namespace, { metadataOnly: true, labelSelector: Labels.formerBundle })).items);
    } catch (err) {
      io.err(`  skipped ${rt.plural}${rt.group ? `.${rt.group}` : ''}: ${errorMessage(err)}`);
    }
  }
  const { now, stampAt } = serverNow(cluster);
  const listingsByNamespace = new Map([...byNamespace].map(([ns, list]) => [ns, listingsByObject(list)] as const));
  const records = released.length > 0 ? await readReleaseRecords(cluster, io) : new Map<string, ReleaseRecord>();
  for (const o of released) {
    const listings = listingsByNamespace.get(o.metadata.namespace ?? '') ?? new Map();
    const entry = releasedEntry(o, listings, now, stampAt, records === 'unread' ? 'unread' : records.get(o.metadata.uid ?? ''));
    if (entry) out.push(entry);
  }
  return out.sort(comparePending);
}

/**
 * The release records the caller may list (every namespace; the operator
 * keeps them beside its release key), as the stamp each names by the uid of
 * its object. Where they may not be listed, 'unread': the objects are read
 * alone, and a stamp a record supersedes shows its old times.
 */
async function readReleaseRecords(cluster: Cluster, io: CliIo): Promise<Map<string, ReleaseRecord> | 'unread'> {
  const recorded = new Map<string, ReleaseRecord>();
  try {
    const rt = await cluster.discovery.resolve('v1', 'ConfigMap');
    if (rt === undefined) return 'unread';
    const { items } = await cluster.client.list(rt, undefined, { labelSelector: `${ReleaseRecordLabel.key}=${ReleaseRecordLabel.value}` });
    for (const record of items) {
      const data = (record as { data?: unknown }).data;
      const uid = recordedUidOf(data);
      if (uid !== undefined) recorded.set(uid, parseReleaseRecord(data));
    }
  } catch (err) {
    io.err(`  release records not read (${errorMessage(err)}): released objects are shown as they read`);
    return 'unread';
  }
  return recorded;
}
