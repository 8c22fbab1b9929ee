/**
 * The Bundle's status on the exits of a pass that do not build it from a
 * full plan (core/bundle/status.ts does that), and the events a status
 * change calls for. Every exit leaves a true status: a Bundle the schema
 * rejects, a pass that failed, a pass stopped because what it read was
 * stale, the finalizer added, a deletion that has not finished. Pure.
 */
import type { BundleStatus, Condition } from '../../api/bundle-status.js';
import { BundleConditionTypes, EventReasons, Reasons, ResourceConditionTypes } from '../../api/names.js';
import { decideBundleConditions, summaryOf } from './bundle-conditions.js';
import { findConditionByType, mergeConditions } from './conditions.js';
import type { DeletionPropagation } from '../../api/names.js';
import type { FinalizeStep } from './finalize-types.js';
import type { BundlePlan } from './plan.js';
import type { ObjectTarget } from './prune.js';

/** The stored Bundle a status is written on: its generation and the status it has. */
export interface StatusSubject {
  metadata: { generation?: number | undefined };
  status?: BundleStatus | undefined;
}

/**
 * Error=True with this reason and message, Ready=False; the rest of the
 * status is kept. TerminalError (the schema refused the spec) and Forbidden
 * stall the Bundle; any other reason is retried (Reconciling).
 */
export function errorStatus(live: StatusSubject, reason: string, message: string, nowIso: string): BundleStatus {
  const previous = live.status ?? {};
  const problem = { reason, message, terminal: reason === Reasons.TerminalError };
  const generation = live.metadata.generation;
  // The count of ready resources was taken at the generation the last full pass observed: carried to a newer one it
  // would say what no pass saw (and deleteWhen BundleReady reads it: plan-input.ts isReadyWithCurrentSpec).
  const { resourcesReady: _countOfAnOlderGeneration, ...rest } = previous;
  const carried = generation === undefined || previous.observedGeneration === generation ? previous : rest;
  return withConditions(
    { ...carried, ...(generation !== undefined ? { observedGeneration: generation } : {}) },
    decideBundleConditions({ kind: 'failed', problem }, generation),
    nowIso,
  );
}

/**
 * A pass that stopped before deciding (the finalizer just added, a stale
 * read, the server's time not known yet): InProgress=True and
 * Reconciling=True say why; Ready and Error stay as the last full pass left
 * them (Ready=False when there was none), and so does observedGeneration:
 * nothing new was observed.
 */
export function interruptedStatus(live: StatusSubject, message: string, nowIso: string): BundleStatus {
  const previous = live.status ?? {};
  const ready = findConditionByType(previous.conditions, BundleConditionTypes.Ready);
  const error = findConditionByType(previous.conditions, BundleConditionTypes.Error);
  return withConditions(previous, decideBundleConditions({ kind: 'interrupted', message, ready, error }, live.metadata.generation), nowIso);
}

/** What one finalizer pass that could not let the Bundle go did and met. */
export interface FinalizeReport {
  propagation: DeletionPropagation;
  /** The plan's steps (those that write, and those left alone). */
  steps: readonly FinalizeStep[];
  /** Writes refused because the object changed since it was read, or went. */
  changed: readonly ObjectTarget[];
  /** Orphan steps whose marks wait for the steps before them (only their references went this pass). */
  heldBack?: readonly ObjectTarget[];
  /**
   * Writes that failed otherwise. `terminal` (retrying cannot help) or
   * reason Forbidden (the identity may not do it) mark a deletion that
   * cannot finish without a change: Stalled.
   */
  failures: readonly { target: ObjectTarget; action: FinalizeStep['action']; message: string; terminal?: boolean; reason?: string }[];
}

/**
 * A Bundle whose deletion has not finished says why: what the finalizer
 * wrote this pass (and will check on fresh lists before it goes), what
 * changed under it, what failed (Error=True), what is terminating.
 */
export function finalizingStatus(live: StatusSubject, report: FinalizeReport, nowIso: string): BundleStatus {
  const previous = live.status ?? {};
  const held = new Set(report.heldBack ?? []);
  const doing = (['delete', 'release', 'let-go', 'orphan', 'disown', 'withdraw'] as const).flatMap((action) => {
    const targets = report.steps.filter((s) => s.action === action && !held.has(s.target)).map((s) => s.target);
    return targets.length === 0 ? [] : [`${STEP_VERBS[action]} ${listTargets(targets)}`];
  });
  const terminating = report.steps.filter((s) => s.action === 'leave' && s.reason === 'terminating').map((s) => s.target);
  const parts = [
    ...doing,
    ...(terminating.length > 0 ? [`terminating: ${listTargets(terminating)}`] : []),
    ...(held.size > 0 ? [`their marks waiting for the steps before them: ${listTargets([...held])}`] : []),
    ...(report.changed.length > 0 ? [`changed since read (deciding again): ${listTargets(report.changed)}`] : []),
  ];
  const message = `being deleted (${report.propagation.toLowerCase()} propagation)${parts.length > 0 ? `: ${parts.join('; ')}` : ''}; the finalizer goes once a pass on fresh lists finds nothing left to write`;
  const failures = report.failures.map((f) => ({
    message: `${f.action} ${describeTarget(f.target)} failed: ${f.message}`,
    terminal: f.terminal === true,
    reason: f.reason,
  }));
  return withConditions(previous, decideBundleConditions({ kind: 'finalizing', message, failures }, live.metadata.generation), nowIso);
}

/** `status` with `conditions` merged over its own (transition times kept where unchanged) and the summary line they give. */
function withConditions(status: BundleStatus, conditions: readonly Condition[], nowIso: string): BundleStatus {
  const merged = mergeConditions(status.conditions, conditions, nowIso);
  return { ...status, conditions: merged, message: summaryOf(merged) };
}

const STEP_VERBS: Record<Exclude<FinalizeStep['action'], 'leave'>, string> = {
  delete: 'deleting',
  release: 'releasing with a countdown',
  'let-go': 'letting go to the Bundle that lists it',
  orphan: 'orphaning',
  disown: "taking the Bundle's references out of (they have other owners)",
  withdraw: 'withdrawing the claim on',
};

/** At most five named, then a count: the message stays readable and changes only when the set does. */
function listTargets(targets: readonly ObjectTarget[]): string {
  const named = targets.slice(0, 5).map(describeTarget).join(', ');
  return targets.length > 5 ? `${named} and ${targets.length - 5} more` : named;
}

function describeTarget(t: ObjectTarget): string {
  return `${t.kind} ${t.name}`;
}

/** The reason of the Warning event for a pass's Error condition: the most specific problem the plan shows. */
export function errorEventReason(plan: Pick<BundlePlan, 'issues' | 'resources' | 'prune'>): string {
  if (plan.issues.length > 0) return EventReasons.InvalidSpec;
  if (plan.resources.some((r) => r.action === 'conflict')) return EventReasons.Conflict;
  if (plan.prune.some((a) => a.action === 'invalid')) return EventReasons.InvalidDeletionDelay;
  return EventReasons.ReconcileError;
}

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * Events for what changed, not for every pass: Ready when it becomes True,
 * and a Warning (reason by the kind of problem) when the Error condition
 * appears or its message changes; a Bundle stuck on the same problem does
 * not repeat it on each retry.
 */
export function transitionEvents(before: BundleStatus | undefined, after: BundleStatus, errorReason: string): StatusEvent[] {
  const out: StatusEvent[] = [];
  const was = findConditionByType(before?.conditions, BundleConditionTypes.Ready)?.status;
  const is = findConditionByType(after.conditions, BundleConditionTypes.Ready);
  if (is?.status === 'True' && was !== 'True')
    out.push({ type: 'Normal', reason: EventReasons.Ready, message: `all ${after.resourcesReady ?? ''} resources are ready` });
  const err = findConditionByType(after.conditions, BundleConditionTypes.Error);
  const errBefore = findConditionByType(before?.conditions, BundleConditionTypes.Error);
  if (err?.status === 'True' && (errBefore?.status !== 'True' || errBefore.message !== err.message))
    out.push({ type: 'Warning', reason: errorReason, message: err.message ?? 'error' });
  // A drift: Warn resource: once when its drift appears or the fields named change, not on every pass.
  const driftBefore = new Map(
    (before?.resourceStatuses ?? []).map((r) => [r.name, findConditionByType(r.conditions, ResourceConditionTypes.Drifted)]),
  );
  for (const r of after.resourceStatuses ?? []) {
    const drifted = findConditionByType(r.conditions, ResourceConditionTypes.Drifted);
    const was = driftBefore.get(r.name);
    if (drifted?.status === 'True' && (was?.status !== 'True' || was.message !== drifted.message))
      out.push({ type: 'Warning', reason: EventReasons.Drifted, message: `resource "${r.name}": ${drifted.message ?? 'drifted'}` });
  }
  return out;
}

/**
 * Why a pass stopped on a stale read, as the Bundle read fresh (`fresh`)
 * shows it against the one the pass decided on (`read`).
 */
export function staleReadMessage(
  fresh: { metadata: { uid: string; generation?: number | undefined; deletionTimestamp?: string | undefined } },
  read: { uid: string; generation?: number | undefined },
): string {
  if (fresh.metadata.uid !== read.uid)
    return "waiting for the operator's cache to show this Bundle (an earlier Bundle of this name was read); nothing written";
  if (fresh.metadata.deletionTimestamp !== undefined) return 'being deleted; the finalizer takes over';
  return `the spec changed since it was read (generation ${read.generation ?? '?'} read, ${fresh.metadata.generation ?? '?'} now); deciding again before pruning`;
}
