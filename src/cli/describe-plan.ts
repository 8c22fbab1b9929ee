/**
 * What a plan will do, in words: one entry per object, as `bundlesmith diff`
 * prints them (the listed objects with their claims and resource plans,
 * then what left the spec). Pure: the plan is planBundle's, the dry-run
 * results are diff.ts's.
 */
import { Annotations } from '../api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../kube/bundle-resource.js';
import type { TakeHold } from '../core/bundle/take-holds.js';
import { objectKey, type LiveObject } from '../core/bundle/objects.js';
import { listedObjectKeys } from '../core/bundle/ownership.js';
import type { BundlePlan, PlanInput, ResourcePlan } from '../core/bundle/plan.js';
import type { PruneAction, WithheldPrune } from '../core/bundle/prune.js';
import { formatIssue } from '../core/bundle/validate.js';
import { deletedAfterWords } from '../core/softdelete/decide.js';
import type { FieldChange } from './field-changes.js';

export type DiffAction =
  | 'create'
  | 'change'
  | 'unchanged'
  | 'adopt'
  | 'hand-over'
  | 'cancel-deletion'
  | 'refuse'
  | 'blocked'
  | 'wait-deleting'
  | 'unresolved'
  | 'invalid'
  | 'delete'
  | 'soft-delete'
  | 'await'
  | 'release'
  | 'keep'
  | 'listed-elsewhere'
  | 'held'
  | 'terminating';

/**
 * Actions that mean the Bundle will report an error: an object it may not
 * take (Conflict), a manifest or spec the server or the checks reject, an
 * object kept for an unreadable deletionDelay.
 */
export const PROBLEM_ACTIONS: ReadonlySet<DiffAction> = new Set(['refuse', 'invalid', 'keep']);

export interface DiffEntry {
  action: DiffAction;
  apiVersion: string;
  kind: string;
  name: string;
  /** Resource name in the Bundle, when the object is listed. */
  resource?: string;
  detail?: string;
  /** Soft deletes: the countdown's stamp (written now for a new countdown) and when the object goes. */
  deletionTimestamp?: string;
  deleteAfter?: string;
  /** change, adopt and the like: each field the apply changes, old → new (Secret values masked). */
  changes?: FieldChange[];
  /** A countdown an earlier pass started: applying the file writes nothing for it. */
  ongoing?: boolean;
}

/** Actions after which the cluster stands as it did: nothing is written for the object. */
const UNCHANGING_ACTIONS: ReadonlySet<DiffAction> = new Set([
  'unchanged',
  'await',
  'listed-elsewhere',
  'held',
  'terminating',
  'wait-deleting',
  'keep',
  'refuse',
  'invalid',
]);

/** Whether applying the file writes something for this entry's object (diff's exit 1). */
export function isChange(entry: DiffEntry): boolean {
  return !UNCHANGING_ACTIONS.has(entry.action) && entry.ongoing !== true;
}

/** What the dry run of one apply said: the changed fields, or why the server rejects it. */
export type DryRunResult = { ok: true; changes: FieldChange[] } | { ok: false; error: string };

function summarize(paths: readonly string[]): string | undefined {
  if (paths.length === 0) return undefined;
  return paths.length > 6 ? `${paths.slice(0, 6).join(', ')} and ${paths.length - 6} more` : paths.join(', ');
}

type Verdict = { action: DiffAction; detail?: string; changes?: FieldChange[] };

/** A resource's plan (after its claim, if any) in words; `dryRun` adds the fields an apply changes. */
function resourceVerdict(rp: ResourcePlan, dryRun: DryRunResult | undefined): Verdict {
  switch (rp.action) {
    case 'apply':
    case 'adopt': {
      if (dryRun !== undefined && !dryRun.ok) return { action: 'invalid', detail: dryRun.error };
      if (!rp.apply.needed) return rp.action === 'adopt' ? { action: 'adopt' } : { action: 'unchanged' };
      if (rp.apply.create) return { action: 'create' };
      if (rp.apply.bookkeeping !== undefined)
        return {
          action: rp.action === 'adopt' ? 'adopt' : 'change',
          detail: "the operator's references, label and annotations only (drift controls: no field of the manifest is written)",
        };
      const changes = dryRun?.ok ? dryRun.changes : [];
      const summary = summarize(changes.map((c) => c.path));
      if (rp.action === 'adopt') return summary ? { action: 'adopt', detail: `then changes ${summary}`, changes } : { action: 'adopt' };
      // Without a dry run (or when it shows nothing) the hash still says an apply is sent.
      if (dryRun?.ok && summary === undefined) return { action: 'unchanged' };
      return summary ? { action: 'change', detail: summary, changes } : { action: 'change' };
    }
    case 'conflict':
      return { action: 'refuse', detail: rp.message };
    case 'blocked':
      return { action: 'blocked', detail: rp.message };
    case 'wait-deleting':
      return { action: 'wait-deleting', detail: `${rp.message}; created again once it is gone` };
    case 'error':
      return { action: rp.terminal ? 'invalid' : 'unresolved', detail: rp.message };
  }
}

function claimVerdict(c: TakeHold, live: LiveObject | undefined): Verdict | undefined {
  const stamp = live?.metadata.annotations?.[Annotations.deletionTimestamp];
  const countdown = stamp !== undefined ? `its deletion (pending since ${stamp}) is cancelled` : 'its release is cancelled';
  switch (c.kind) {
    case 'cancel':
      return { action: 'cancel-deletion', detail: `listed again: ${countdown}` };
    case 'adopt':
      return { action: 'adopt', detail: `no controller: adopted, ${countdown}` };
    case 'hand-over':
      return {
        action: 'hand-over',
        detail: `handed over from Bundle ${c.from?.name ?? '?'}, which no longer lists it${stamp !== undefined ? `; ${countdown}` : ''}`,
      };
    case 'reference':
      // The resource stays in Conflict; the claim reference is a note on that verdict (see withClaimReference).
      return undefined;
    case 'declare':
      // Bookkeeping the apply does too: the resource's own verdict says what happens to it.
      return undefined;
  }
}

/** A Conflict this Bundle loses to another Bundle: its claim is written as a non-controller reference. */
function withClaimReference(verdict: Verdict, claim: TakeHold | undefined): Verdict {
  if (claim?.kind !== 'reference') return verdict;
  const note =
    'claim recorded as a non-controller ownerReference to this Bundle (spared by the cascade if the controlling Bundle is deleted, then let go to this Bundle and adopted)';
  return { ...verdict, detail: verdict.detail !== undefined ? `${verdict.detail}; ${note}` : note };
}

/** A claim and what follows it in the same pass. */
function claimedVerdict(claim: Verdict, after: Verdict | undefined): Verdict {
  if (after === undefined) return claim;
  // The claim goes through first; a failing apply afterwards is still the Bundle's error.
  if (PROBLEM_ACTIONS.has(after.action))
    return { action: after.action, detail: `${claim.action} first (${claim.detail ?? ''}), then ${after.detail ?? after.action}` };
  const rest =
    after.action === 'change'
      ? `then changes ${after.detail ?? 'the object'}`
      : after.action === 'adopt'
        ? after.detail
        : after.action === 'unchanged' || after.action === 'create'
          ? undefined
          : `then ${after.action}: ${after.detail ?? ''}`;
  const changes = after.changes !== undefined ? { changes: after.changes } : {};
  return rest ? { action: claim.action, detail: `${claim.detail ?? ''}; ${rest}`, ...changes } : claim;
}

function targetEntry(t: PruneAction['target']): Pick<DiffEntry, 'apiVersion' | 'kind' | 'name'> {
  return { apiVersion: t.apiVersion, kind: t.kind, name: t.name };
}

function pruneEntry(a: PruneAction): DiffEntry {
  const base = targetEntry(a.target);
  switch (a.action) {
    case 'delete':
      if (!a.afterDelay) return { ...base, action: 'delete', detail: 'no longer listed and no deletionDelay: deleted now' };
      return {
        ...base,
        action: 'delete',
        detail: `its deletion delay ended at ${a.deleteAfter ?? '?'}: deleted now`,
        ...(a.deletionTimestamp !== undefined ? { deletionTimestamp: a.deletionTimestamp } : {}),
        ...(a.deleteAfter !== undefined ? { deleteAfter: a.deleteAfter } : {}),
      };
    case 'mark':
      return {
        ...base,
        action: 'soft-delete',
        detail: `countdown starts now, deleted ${deletedAfterWords(a.deleteAfter, a.gates)}`,
        deletionTimestamp: a.deletionTimestamp,
        deleteAfter: a.deleteAfter,
      };
    case 'wait':
      return {
        ...base,
        action: 'soft-delete',
        detail: `pending since ${a.deletionTimestamp}, deleted ${deletedAfterWords(a.deleteAfter, a.gates)}`,
        deletionTimestamp: a.deletionTimestamp,
        deleteAfter: a.deleteAfter,
        ongoing: true,
      };
    case 'await':
      return { ...base, action: 'await', detail: a.message, deletionTimestamp: a.deletionTimestamp, deleteAfter: a.deleteAfter };
    case 'release':
      return { ...base, action: 'release', detail: 'deletionPolicy Orphan: released for good (kept), never deleted' };
    case 'invalid':
      return { ...base, action: 'keep', detail: a.message };
    case 'terminating':
      return { ...base, action: 'terminating', detail: 'already being deleted by the API server' };
    case 'listed-elsewhere':
      return { ...base, action: 'listed-elsewhere', detail: a.message };
  }
}

function withheldEntry(w: WithheldPrune): DiffEntry {
  const would =
    w.action.action === 'delete'
      ? 'delete'
      : w.action.action === 'release'
        ? 'release it (deletionPolicy Orphan)'
        : `start its countdown (deleted ${deletedAfterWords(w.action.deleteAfter, w.action.gates)})`;
  return { ...targetEntry(w.action.target), action: 'held', detail: `would ${would}; ${w.reason}` };
}

/**
 * The plan in words, one entry per object: the listed objects in spec order
 * (each with its claim, if any, and what its resource plan does), then what
 * left the spec (the prune actions and those held back). `dryRuns` (by
 * resource name) add the fields an apply changes or the server's rejection.
 */
export function describePlan(input: PlanInput, plan: BundlePlan, dryRuns: ReadonlyMap<string, DryRunResult> = new Map()): DiffEntry[] {
  const entries: DiffEntry[] = [];
  const invalidSpec = plan.issues.length > 0;
  for (const r of input.spec.resources) {
    const o = r.spec.object;
    if (o === undefined) continue;
    const base = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, resource: r.name };
    const claim = plan.takeHolds.find((c) => c.name === r.name);
    const claimed = claim ? claimVerdict(claim, input.live.get(r.name)) : undefined;
    let verdict: Verdict;
    if (invalidSpec) {
      const own = plan.issues.filter((i) => i.resource === r.name);
      const after: Verdict =
        own.length > 0
          ? { action: 'invalid', detail: own.map((i) => i.message).join('; ') }
          : { action: 'blocked', detail: 'not applied: the Bundle spec is invalid' };
      verdict = claimed ? claimedVerdict(claimed, after) : after;
    } else {
      const rp = plan.resources.find((p) => p.name === r.name);
      const after = rp ? resourceVerdict(rp, dryRuns.get(r.name)) : undefined;
      verdict = claimed ? claimedVerdict(claimed, after) : (after ?? { action: 'blocked', detail: 'not planned' });
    }
    entries.push({ ...base, ...withClaimReference(verdict, claim) });
  }
  for (const issue of plan.issues.filter((i) => i.resource === undefined)) {
    entries.push({
      apiVersion: BUNDLE_RESOURCE_TYPE.apiVersion,
      kind: BUNDLE_RESOURCE_TYPE.kind,
      name: input.bundle.name,
      action: 'invalid',
      detail: formatIssue(issue),
    });
  }
  entries.push(...plan.prune.map(pruneEntry), ...plan.withheld.map(withheldEntry));
  if (invalidSpec) {
    // planBundle prunes nothing for an invalid spec: say so for each object that left it.
    const listed = new Set(listedObjectKeys({ metadata: input.bundle, spec: input.spec }));
    for (const o of input.controlled) {
      if (listed.has(objectKey(o))) continue;
      entries.push({
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: o.metadata.name,
        action: 'keep',
        detail: 'not deleted while the Bundle spec is invalid',
      });
    }
  }
  return entries;
}
