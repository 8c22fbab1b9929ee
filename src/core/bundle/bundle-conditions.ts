/**
 * The Bundle's five conditions, decided in one place from what a pass found.
 * Smith's InProgress, Ready and Error are kept as Smith writes them; beside
 * them, kstatus' Reconciling and Stalled (sigs.k8s.io/cli-utils
 * pkg/kstatus/status), which Helm 4's --wait, Flux's wait and healthChecks
 * and Config Sync read: Reconciling=True reads as InProgress, Stalled=True as
 * Failed (Helm stops waiting at once), and with neither True the Ready
 * condition decides (True: Current). The two are never True together:
 * kstatus takes whichever it meets first in the list. Pure: no clock (the
 * caller merges transition times).
 */
import type { Condition } from '../../api/bundle-status.js';
import { BundleConditionTypes, Reasons } from '../../api/names.js';
import { condition } from './conditions.js';

/** One thing that keeps the Bundle from being Ready. */
export interface PassProblem {
  message: string;
  /** Retrying cannot help: the spec or the object must change. */
  terminal: boolean;
  /** A reason more precise than TerminalError/RetriableError (Forbidden). */
  reason?: string | undefined;
}

/** What a pass found, as far as the conditions go. */
export type PassResult =
  /** A full pass: the plan was carried out. */
  | { kind: 'reconciled'; total: number; ready: number; notReady: readonly string[]; problems: readonly PassProblem[] }
  /** The pass failed as a whole (the schema refused the Bundle, a request failed). */
  | { kind: 'failed'; problem: PassProblem & { reason: string } }
  /** The pass stopped before deciding; Ready and Error stay as the last full pass left them. */
  | { kind: 'interrupted'; message: string; ready?: Condition | undefined; error?: Condition | undefined }
  /** The Bundle is being deleted and its finalizer has work left. */
  | { kind: 'finalizing'; message: string; failures: readonly PassProblem[] };

/** True when the Bundle cannot progress until someone changes it or the cluster: kstatus' Stalled. */
export function needsChange(p: PassProblem): boolean {
  // Forbidden is retried (a RoleBinding may come), but nothing changes until someone grants it.
  return p.terminal || p.reason === Reasons.Forbidden;
}

/** InProgress, Ready, Error, Reconciling and Stalled, in that order, each carrying `generation` when known. */
export function decideBundleConditions(result: PassResult, generation: number | undefined): Condition[] {
  // Ready and Error kept from an earlier pass (interrupted) keep the generation they were decided on.
  const kept: readonly string[] = result.kind === 'interrupted' ? [BundleConditionTypes.Ready, BundleConditionTypes.Error] : [];
  return decide(result).map((c) => (generation === undefined || kept.includes(c.type) ? c : { ...c, observedGeneration: generation }));
}

function decide(result: PassResult): Condition[] {
  switch (result.kind) {
    case 'reconciled':
      return reconciled(result);
    case 'failed': {
      const { reason, message } = result.problem;
      return [
        condition(BundleConditionTypes.InProgress, false),
        condition(BundleConditionTypes.Ready, false, reason, message),
        condition(BundleConditionTypes.Error, true, reason, message),
        ...progress(needsChange(result.problem) ? { stalled: reason, message } : { reconciling: reason, message: `retrying: ${message}` }),
      ];
    }
    case 'interrupted':
      return [
        condition(BundleConditionTypes.InProgress, true, Reasons.Working, result.message),
        withoutDecidedFields(result.ready ?? condition(BundleConditionTypes.Ready, false, Reasons.ResourcesNotReady, 'not reconciled yet')),
        withoutDecidedFields(result.error ?? condition(BundleConditionTypes.Error, false)),
        ...progress({ reconciling: Reasons.Working, message: result.message }),
      ];
    case 'finalizing': {
      const failed = result.failures.map((f) => f.message).join('; ');
      const blocked = result.failures.filter(needsChange);
      return [
        condition(BundleConditionTypes.InProgress, true, Reasons.BeingDeleted, result.message),
        condition(BundleConditionTypes.Ready, false, Reasons.BeingDeleted, result.message),
        failed === ''
          ? condition(BundleConditionTypes.Error, false)
          : condition(BundleConditionTypes.Error, true, Reasons.RetriableError, `being deleted: ${failed}`),
        ...progress(
          blocked.length > 0
            ? {
                stalled: blocked.every((f) => f.reason === Reasons.Forbidden) ? Reasons.Forbidden : Reasons.TerminalError,
                message: `the deletion cannot finish without a change: ${blocked.map((f) => f.message).join('; ')}`,
              }
            : { reconciling: Reasons.BeingDeleted, message: result.message },
        ),
      ];
    }
  }
}

function reconciled(r: Extract<PassResult, { kind: 'reconciled' }>): Condition[] {
  const hasError = r.problems.length > 0;
  const allReady = !hasError && r.ready === r.total;
  const errorMessage = r.problems.map((p) => p.message).join('; ');
  const waiting = `waiting for ${r.notReady.join(', ')}`;
  const blocking = r.problems.filter(needsChange);
  return [
    condition(
      BundleConditionTypes.InProgress,
      !hasError && !allReady,
      !hasError && !allReady ? Reasons.Working : undefined,
      !hasError && !allReady ? waiting : undefined,
    ),
    condition(
      BundleConditionTypes.Ready,
      allReady,
      allReady ? Reasons.AllResourcesReady : Reasons.ResourcesNotReady,
      `${r.ready}/${r.total} resources ready`,
    ),
    condition(BundleConditionTypes.Error, hasError, hasError ? errorReason(r.problems) : undefined, hasError ? errorMessage : undefined),
    ...progress(
      blocking.length > 0
        ? { stalled: errorReason(blocking), message: blocking.map((p) => p.message).join('; ') }
        : hasError
          ? { reconciling: Reasons.RetriableError, message: `retrying: ${errorMessage}` }
          : allReady
            ? { done: `all ${r.total} resources ready` }
            : { reconciling: Reasons.Working, message: waiting },
    ),
  ];
}

/**
 * The reason of an Error condition: one precise reason every problem shares
 * (Forbidden) says more than either generic one; TerminalError when no
 * problem may go away by itself.
 */
function errorReason(problems: readonly PassProblem[]): string {
  const precise = problems[0]?.reason;
  if (precise !== undefined && problems.every((p) => p.reason === precise)) return precise;
  return problems.every((p) => p.terminal) ? Reasons.TerminalError : Reasons.RetriableError;
}

type Progress = { reconciling: string; message: string } | { stalled: string; message: string } | { done: string };

/** Reconciling and Stalled, exactly one of them True unless the Bundle is done. */
function progress(p: Progress): Condition[] {
  if ('done' in p) {
    return [
      condition(BundleConditionTypes.Reconciling, false, Reasons.Reconciled, p.done),
      condition(BundleConditionTypes.Stalled, false, Reasons.CanProgress, 'nothing blocks progress'),
    ];
  }
  if ('stalled' in p) {
    return [
      condition(BundleConditionTypes.Reconciling, false, Reasons.Stalled, 'stopped: a change is needed (see Stalled)'),
      condition(BundleConditionTypes.Stalled, true, p.stalled, p.message),
    ];
  }
  return [
    condition(BundleConditionTypes.Reconciling, true, p.reconciling, p.message),
    condition(BundleConditionTypes.Stalled, false, Reasons.CanProgress, 'nothing blocks progress'),
  ];
}

/** A kept condition without the fields its own pass set (the caller merges times; the generation is that pass's). */
function withoutDecidedFields(c: Condition): Condition {
  const { lastTransitionTime: _time, ...rest } = c;
  return rest;
}

/**
 * A short line for people (the Status printer column): what blocks the
 * Bundle, what is wrong, what it waits for, or that it is Ready.
 */
export function summaryOf(conditions: readonly Condition[]): string {
  const byType = (type: string) => conditions.find((c) => c.type === type && c.status === 'True');
  const stalled = byType(BundleConditionTypes.Stalled);
  const error = byType(BundleConditionTypes.Error);
  const reconciling = byType(BundleConditionTypes.Reconciling);
  const line = stalled
    ? `Stalled: ${stalled.message ?? ''}`
    : error
      ? `Error: ${error.message ?? ''}`
      : reconciling
        ? (reconciling.message ?? 'reconciling')
        : byType(BundleConditionTypes.Ready)
          ? 'Ready'
          : 'Not ready';
  return line.length > SUMMARY_MAX ? `${line.slice(0, SUMMARY_MAX - 1)}…` : line;
}

const SUMMARY_MAX = 80;
