/**
 * The write-ahead of a Bundle's record, in its status: the kinds a pass will
 * make the Bundle own (status.managedKinds) before any object of them is
 * written, the claims it will write (status.claims, pending) before any
 * claim, and the countdowns it will stamp (status.pendingDeletions) before
 * any stamp is written. What the finalizer and the soft-delete decisions
 * read later (the kinds to list, the stamps to honour) is then never behind
 * what is on the objects. Each write is pinned to the fresh Bundle's
 * resourceVersion; one that loses to a newer Bundle stops the pass's writes.
 * And what the kind inventory lets go of (confirmedEmpty). The pure
 * decisions are core/bundle/kind-inventory.ts, claim-record.ts and countdown.ts.
 */
import type { Bundle } from '../../api/bundle.js';
import type { BundleStatus, ClaimEntry } from '../../api/bundle-status.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { groupKindKey, recordKinds, referencesBundle, unrecordedKinds, type GroupKind } from '../../core/bundle/kind-inventory.js';
import { pendingRecordedAhead } from '../../core/bundle/countdown-record.js';
import { claimRecordAhead, statusClaimsOf } from '../../core/bundle/claim-record.js';
import { pendingDeletionsOf } from '../../core/bundle/pending.js';
import type { BundlePlan } from '../../core/bundle/plan.js';
import { isRecord } from '../../core/bundle/objects.js';
import { errorMessage, isConflict, isNotFound } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { ActDeps, PassOutcome } from './act-deps.js';
import type { BundleApi } from './api.js';
import type { UnlabelledObjects } from './unlabelled.js';

/**
 * Write-ahead of status.managedKinds (see unrecordedKinds): the kinds this
 * pass will make the Bundle own are stored before any object of them is
 * written, on the fresh Bundle with its resourceVersion. The Bundle as
 * written (true: nothing to write); false when that write lost to a newer
 * Bundle: write nothing this pass.
 */
export async function recordKindsFirst(d: ActDeps, plan: BundlePlan, fresh: KubeObject): Promise<KubeObject | boolean> {
  const recorded = statusManagedKinds(fresh);
  const missing = unrecordedKinds(plan, recorded);
  if (missing.length === 0) return true;
  const written = await writeRecordAhead(d, fresh, { managedKinds: recordKinds(recorded, missing) });
  if (written) d.log.debug({ kinds: missing }, 'recorded new kinds in status.managedKinds before writing objects of them');
  return written;
}

/**
 * Write-ahead of status.claims (see claim-record.ts): the objects this pass
 * claims (a Conflict it loses) are recorded, pending, before any claim is
 * written: the annotation written with a claim counts only while an entry
 * names the object, so a claim that lands before the pass's status is
 * written is already the operator's. The Bundle as written (true: nothing to
 * write); false when the write lost to a newer Bundle.
 */
export async function recordClaimsFirst(d: ActDeps, plan: BundlePlan, fresh: KubeObject): Promise<KubeObject | boolean> {
  const claiming = claimingEntries(plan);
  const claims = claimRecordAhead(statusClaimsOf(fresh.status), claiming);
  if (claims === undefined) return true;
  const written = await writeRecordAhead(d, fresh, { claims });
  if (written) d.log.debug({ objects: claiming.length }, 'recorded new claims in status.claims before writing them');
  return written;
}

/** The objects the pass's take-holds claim (a reference beside another Bundle's controller reference). */
function claimingEntries(plan: Pick<BundlePlan, 'takeHolds'>): ClaimEntry[] {
  return plan.takeHolds.flatMap(({ kind, target: t }) =>
    kind === 'reference' && t.uid !== undefined ? [{ apiVersion: t.apiVersion, kind: t.kind, name: t.name, uid: t.uid }] : [],
  );
}

/**
 * Write-ahead of status.pendingDeletions (see pendingRecordedAhead): the
 * countdowns this pass will stamp are recorded before any stamp is written,
 * on the Bundle as the prune's fresh list read it. A stamp the record does
 * not hold reads as none, so a record cleared by another status writer
 * cannot let an earlier stamp written back decide (red team 9). The Bundle
 * as written (true: nothing to write); false when the write lost to a newer
 * Bundle: nothing is pruned this pass.
 */
export async function recordCountdownsFirst(d: ActDeps, plan: BundlePlan, fresh: KubeObject): Promise<KubeObject | boolean> {
  const stamping = pendingDeletionsOf({ ...plan, prune: plan.prune.filter((a) => a.action === 'mark') });
  if (stamping.length === 0) return true;
  const status = isRecord(fresh.status) ? (fresh.status as BundleStatus) : undefined;
  const pendingDeletions = pendingRecordedAhead(status?.pendingDeletions, stamping, plan.bundle.namespace);
  if (pendingDeletions === undefined) return true;
  const written = await writeRecordAhead(d, fresh, { pendingDeletions });
  if (written) d.log.debug({ countdowns: stamping.length }, 'recorded new countdowns in status.pendingDeletions before stamping them');
  return written;
}

/**
 * The pass's status goes over its own write-ahead only where that write
 * landed on the spec the pass planned: on a newer one the status write
 * loses (as over the older read) and the pass on the newer spec writes it.
 */
export function keepRecorded(outcome: PassOutcome, recorded: KubeObject, bundle: Bundle): void {
  if (recorded.metadata.generation === bundle.metadata.generation) outcome.recorded = recorded;
  else delete outcome.recorded;
}

/** One write-ahead: `fields` over the fresh Bundle's status, at its resourceVersion. False when a newer Bundle won. */
async function writeRecordAhead(d: ActDeps, fresh: KubeObject, fields: Partial<BundleStatus>): Promise<KubeObject | false> {
  const status = isRecord(fresh.status) ? fresh.status : {};
  try {
    return await d.api.replaceStatus(BUNDLE_RESOURCE_TYPE, { ...fresh, status: { ...status, ...fields } });
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return false;
    throw err;
  }
}

function statusManagedKinds(o: KubeObject): string[] {
  const kinds = isRecord(o.status) ? o.status['managedKinds'] : undefined;
  return Array.isArray(kinds) ? kinds.filter((k): k is string => typeof k === 'string') : [];
}

/** What confirmedEmpty reads with: the Bundle's API, the CRDs, where unlabelled objects are labelled again, the log. */
export interface ConfirmDeps {
  api: BundleApi;
  /** Whether a CustomResourceDefinition defines this group and kind, served or not. */
  crdDefines(gk: GroupKind): boolean;
  unlabelled: UnlabelledObjects;
  logger: Logger;
}

/**
 * What the kind inventory lets go of: of the recorded kinds a pass no longer
 * sees a use for, those that a fresh list (metadata only, no label selector:
 * the label is not evidence) shows to hold nothing referencing the Bundle,
 * and those that no longer exist at all. A list that fails proves nothing:
 * the kind stays.
 */
export async function confirmedEmpty(d: ConfirmDeps, bundle: Bundle, candidates: readonly GroupKind[]): Promise<Set<string>> {
  const empty = new Set<string>();
  for (const gk of candidates) {
    const found = await d.api.resolveGroupKind(gk.group, gk.kind);
    if (found.state === 'unknown') continue;
    if (found.state === 'not-served') {
      if (!d.crdDefines(gk)) empty.add(groupKindKey(gk));
      continue;
    }
    try {
      const { items } = await d.api.list(found.type, found.type.namespaced ? bundle.metadata.namespace : undefined, { metadataOnly: true });
      const held = items.filter((o) => referencesBundle(o, bundle.metadata.uid));
      if (held.length === 0) empty.add(groupKindKey(gk));
      // Still held, yet unseen by the caches: the managed label was taken off. Put it back so the passes see them.
      else if (found.type.namespaced) await d.unlabelled.label(d.api, bundle.metadata.namespace, found.type, held, d.logger);
    } catch (err) {
      d.logger.debug(
        { namespace: bundle.metadata.namespace, name: bundle.metadata.name, kind: groupKindKey(gk), err: errorMessage(err) },
        'could not confirm a kind holds nothing of the Bundle; it stays recorded',
      );
    }
  }
  return empty;
}
