/**
 * The Bundle's status, built from a plan and from how its actions went.
 * Pending soft deletions are information: the Bundle stays Ready while
 * objects count down to deletion.
 */
import type { BundleStatus, Condition, ObjectToDelete, ResourceStatus } from '../../api/bundle-status.js';
import { Reasons, ResourceConditionTypes } from '../../api/names.js';
import { decideBundleConditions, summaryOf, type PassProblem } from './bundle-conditions.js';
import { condition, mergeConditions } from './conditions.js';
import { describeDrift } from './drift.js';
import { canonicalJson } from './hash.js';
import { groupOf, versionOf } from './objects.js';
import { pendingDeletionsOf } from './pending.js';
import { pendingEntryKey } from './countdown-record.js';
import { withholdAfterFailedApplies, type BundlePlan, type ResourcePlan } from './plan.js';
import type { ObjectTarget } from './prune.js';
import { formatIssue } from './validate.js';

export interface ActionFailure {
  message: string;
  /** True when retrying cannot help (e.g. the API server rejected the manifest as invalid). */
  terminal?: boolean;
  /** A reason more precise than Terminal/RetriableError (Forbidden: the Bundle's identity may not do it). */
  reason?: string;
}

/** How the plan's writes went. Anything not listed succeeded (or was not needed). */
export interface PassResults {
  /** By resource name: the cancel patch or the apply failed. */
  applyFailures?: ReadonlyMap<string, ActionFailure>;
  /** Prune writes (delete, mark) that failed. */
  pruneFailures?: ReadonlyArray<{ target: ObjectTarget; message: string; reason?: string }>;
}

type ResourceState =
  | { state: 'ready' }
  | { state: 'in-progress'; reason: string; message: string }
  | { state: 'blocked'; reason: string; message: string }
  | { state: 'error'; reason: string; message: string; terminal: boolean; precise?: boolean };

export function buildBundleStatus(
  planIn: BundlePlan,
  results: PassResults,
  previous: BundleStatus | undefined,
  nowIso: string,
): BundleStatus {
  const applyFailures = results.applyFailures ?? new Map<string, ActionFailure>();
  // Nothing is deleted unless every apply went through; withholding here too keeps status honest if a caller forgot.
  const plan = withholdAfterFailedApplies(planIn, [...applyFailures.keys()]);

  // Indexed once: a lookup per resource keeps the status linear in the Bundle's size.
  const planned = new Map(plan.resources.map((r) => [r.name, r]));
  const issuesOf = groupBy(plan.issues, (i) => i.resource);
  const previousOf = new Map((previous?.resourceStatuses ?? []).map((r) => [r.name, r.conditions]));
  const states = new Map(
    plan.order.map((name) => [name, resourceState(name, { planned, issuesOf, anyIssue: plan.issues.length > 0 }, applyFailures)]),
  );
  const resourceStatuses: ResourceStatus[] = plan.order.map((name) => {
    const before = previousOf.get(name);
    return {
      name,
      conditions: mergeConditions(
        before,
        [...resourceConditions(states.get(name) ?? { state: 'ready' }), ...driftCondition(planned.get(name))],
        nowIso,
      ),
    };
  });

  const problems: PassProblem[] = [
    ...plan.issues.map((i) => ({ message: formatIssue(i), terminal: !i.retriable })),
    // With issues, a resource's error state is its issues, already said above: each problem is said once.
    ...[...states].flatMap(([name, s]) =>
      s.state === 'error' && plan.issues.length === 0
        ? [{ message: `resource "${name}": ${s.message}`, terminal: s.terminal, ...(s.precise ? { reason: s.reason } : {}) }]
        : [],
    ),
    ...plan.prune.flatMap((a) => (a.action === 'invalid' ? [{ message: a.message, terminal: true }] : [])),
    ...(results.pruneFailures ?? []).map((f) => ({
      message: `${f.target.kind} ${f.target.name}: ${f.message}`,
      terminal: false,
      ...(f.reason ? { reason: f.reason } : {}),
    })),
  ];
  const total = plan.order.length;
  const ready = [...states.values()].filter((s) => s.state === 'ready').length;
  const notReady = [...states].filter(([, st]) => st.state !== 'ready').map(([name]) => name);
  const conditions = mergeConditions(
    previous?.conditions,
    decideBundleConditions({ kind: 'reconciled', problems, ready, total, notReady }, plan.bundle.generation),
    nowIso,
  );
  // The record's entries of objects this pass did not decide (an invalid spec, prunes held back) stay: see carriedRecord.
  const decided = new Set(plan.prune.map((a) => pendingEntryKey(a.target, plan.bundle.namespace)));
  const carried = (plan.carriedPendingDeletions ?? []).filter((p) => !decided.has(pendingEntryKey(p, plan.bundle.namespace)));
  const pendingDeletions = [...pendingDeletionsOf(plan), ...carried];
  return {
    ...(plan.bundle.generation !== undefined ? { observedGeneration: plan.bundle.generation } : {}),
    conditions,
    message: summaryOf(conditions),
    resourceStatuses,
    objectsToDelete: objectsToDeleteOf(plan),
    pendingDeletions,
    declaredRules: plan.declaredRules,
    pendingDeletionCount: pendingDeletions.length,
    awaitingApprovalCount: pendingDeletions.filter((p) => p.waitingFor === 'Approval').length,
    resourcesReady: `${ready}/${total}`,
  };
}

/** True when writing `b` over `a` would change nothing (key order and absent-vs-undefined do not matter). */
export function statusEqual(a: BundleStatus | undefined, b: BundleStatus | undefined): boolean {
  return canonicalJson(a ?? {}) === canonicalJson(b ?? {});
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

interface PlanIndex {
  planned: ReadonlyMap<string, ResourcePlan>;
  issuesOf: ReadonlyMap<string | undefined, readonly BundlePlan['issues'][number][]>;
  anyIssue: boolean;
}

function resourceState(name: string, plan: PlanIndex, applyFailures: ReadonlyMap<string, ActionFailure>): ResourceState {
  if (plan.anyIssue) {
    const own = plan.issuesOf.get(name) ?? [];
    if (own.length === 0) return { state: 'blocked', reason: Reasons.InvalidSpec, message: 'the Bundle spec is invalid' };
    const terminal = own.some((i) => !i.retriable);
    return {
      state: 'error',
      reason: terminal ? Reasons.TerminalError : Reasons.RetriableError,
      message: own.map((i) => i.message).join('; '),
      terminal,
    };
  }
  const p: ResourcePlan | undefined = plan.planned.get(name);
  // Every name in plan.order has a plan once the spec is valid (the invalid case returned above).
  if (p === undefined) return { state: 'blocked', reason: Reasons.Working, message: 'not planned' };
  const failure = applyFailures.get(name);
  if (failure !== undefined) {
    const terminal = failure.terminal === true;
    if (failure.reason !== undefined) return { state: 'error', reason: failure.reason, message: failure.message, terminal, precise: true };
    return { state: 'error', reason: terminal ? Reasons.TerminalError : Reasons.RetriableError, message: failure.message, terminal };
  }
  switch (p.action) {
    case 'blocked':
      return { state: 'blocked', reason: p.reason, message: p.message };
    case 'conflict':
      return { state: 'error', reason: Reasons.Conflict, message: p.message, terminal: true };
    case 'error':
      return {
        state: 'error',
        reason: p.terminal ? Reasons.TerminalError : Reasons.RetriableError,
        message: p.message,
        terminal: p.terminal,
      };
    case 'wait-deleting':
      return { state: 'in-progress', reason: Reasons.BeingDeleted, message: p.message };
    default: {
      const r = p.readiness;
      if (r.state === 'ready') return { state: 'ready' };
      if (r.state === 'in-progress') return { state: 'in-progress', reason: Reasons.Working, message: r.message };
      return {
        state: 'error',
        reason: r.terminal ? Reasons.TerminalError : Reasons.RetriableError,
        message: r.message,
        terminal: r.terminal,
      };
    }
  }
}

function resourceConditions(s: ResourceState): Condition[] {
  const is = (state: ResourceState['state']): boolean => s.state === state;
  const detail = (state: ResourceState['state']): [string | undefined, string | undefined] =>
    s.state === state && s.state !== 'ready' ? [s.reason, s.message] : [undefined, undefined];
  return [
    condition(ResourceConditionTypes.Blocked, is('blocked'), ...detail('blocked')),
    condition(ResourceConditionTypes.InProgress, is('in-progress'), ...detail('in-progress')),
    condition(ResourceConditionTypes.Ready, is('ready'), is('ready') ? Reasons.Ready : undefined),
    condition(ResourceConditionTypes.Error, is('error'), ...detail('error')),
  ];
}

/**
 * Drifted, on a drift: Warn resource only: True naming the live fields that
 * differ from the manifest (capped), False once none does. Information, as
 * the soft deletes are: the resource stays Ready (kstatus reads Current), the
 * operator writes none of those fields.
 */
function driftCondition(p: ResourcePlan | undefined): Condition[] {
  if (p === undefined || (p.action !== 'apply' && p.action !== 'adopt') || p.apply.drifted === undefined) return [];
  const fields = p.apply.drifted;
  if (fields.length === 0) return [condition(ResourceConditionTypes.Drifted, false, Reasons.NoDrift)];
  return [
    condition(
      ResourceConditionTypes.Drifted,
      true,
      Reasons.FieldsDrifted,
      `${fields.length === 1 ? '1 field differs' : `${fields.length} fields differ`} from the manifest (drift: Warn, not written): ${describeDrift(fields)}`,
    ),
  ];
}

function objectToDelete(t: ObjectTarget): ObjectToDelete {
  const group = groupOf(t.apiVersion);
  return { ...(group !== '' ? { group } : {}), version: versionOf(t.apiVersion), kind: t.kind, name: t.name };
}

function objectsToDeleteOf(plan: BundlePlan): ObjectToDelete[] {
  return [...plan.prune.flatMap((a) => (a.action === 'delete' ? [a.target] : [])), ...plan.withheld.map((w) => w.action.target)].map(
    objectToDelete,
  );
}
