/**
 * `bundlesmith status`: one line per Bundle (state, ready resources,
 * errors, pending deletions and the soonest), or one Bundle's conditions in
 * words. Pure: Bundles in, lines out. A Bundle counts as Ready only when its
 * status describes its current generation.
 */
import type { Bundle } from '../api/bundle.js';
import type { Condition } from '../api/bundle-status.js';
import { parseRfc3339 } from '../core/rfc3339.js';
import { isHeldByGate, pendingWords, resourceState } from './tree.js';

export interface BundleSummary {
  namespace: string;
  name: string;
  /** Ready, InProgress, Error, Deleting, or Unknown. */
  state: string;
  /** Ready for the spec as it is now (the status observed the current generation). */
  ready: boolean;
  resourcesReady: string;
  errors: number;
  pending: number;
  /**
   * The soonest pending deletion: "ConfigMap/x", milliseconds until it is
   * due, and what holds it when a gate does. One that time alone will delete
   * comes before any held by a gate.
   */
  soonest?: { object: string; remainingMs: number | undefined; waitingFor?: string };
}

function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

export function summarize(bundle: Bundle, now: number): BundleSummary {
  const status = bundle.status;
  const current = status?.observedGeneration !== undefined && status.observedGeneration === bundle.metadata.generation;
  const conditions = status?.conditions;
  const state = bundle.metadata.deletionTimestamp
    ? 'Deleting'
    : !current
      ? 'InProgress'
      : isTrue(conditions, 'Error')
        ? 'Error'
        : isTrue(conditions, 'Ready')
          ? 'Ready'
          : isTrue(conditions, 'InProgress')
            ? 'InProgress'
            : 'Unknown';
  const errors = (status?.resourceStatuses ?? []).filter((r) => resourceState(r.conditions).state === 'Error').length;
  const pending = status?.pendingDeletions ?? [];
  let soonest: BundleSummary['soonest'];
  // Sort key: held by a gate last, then by time (unreadable last).
  const rank = (s: { remainingMs: number | undefined; waitingFor?: string }): [number, number] => [
    isHeldByGate(s.waitingFor) ? 1 : 0,
    s.remainingMs ?? Infinity,
  ];
  for (const p of pending) {
    const at = parseRfc3339(p.deleteAfter);
    const candidate = {
      object: `${p.kind}/${p.name}`,
      remainingMs: at === undefined ? undefined : at - now,
      ...(p.waitingFor !== undefined ? { waitingFor: p.waitingFor } : {}),
    };
    const [held, ms] = rank(candidate);
    const best = soonest === undefined ? undefined : rank(soonest);
    if (best === undefined || held < best[0] || (held === best[0] && ms < best[1])) soonest = candidate;
  }
  return {
    namespace: bundle.metadata.namespace,
    name: bundle.metadata.name,
    state,
    ready: state === 'Ready',
    resourcesReady: status?.resourcesReady ?? `0/${bundle.spec.resources.length}`,
    errors,
    pending: pending.length,
    ...(soonest ? { soonest } : {}),
  };
}

export function formatSummaryTable(summaries: readonly BundleSummary[]): string[] {
  const rows = [
    ['NAMESPACE', 'BUNDLE', 'STATE', 'READY', 'ERRORS', 'PENDING', 'SOONEST'],
    ...summaries.map((s) => [
      s.namespace,
      s.name,
      s.state,
      s.resourcesReady,
      String(s.errors),
      String(s.pending),
      s.soonest ? `${s.soonest.object} ${pendingWords(s.soonest.waitingFor, s.soonest.remainingMs)}` : '-',
    ]),
  ];
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((r) => (r[col] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col] ?? 0))).join('  '));
}

function conditionWords(c: Condition): string {
  const since = c.lastTransitionTime ? ` since ${c.lastTransitionTime}` : '';
  return `${c.type}: ${c.status}${c.reason ? ` (${c.reason})` : ''}${since}${c.message ? `: ${c.message}` : ''}`;
}

/** One Bundle, in words: its state, each condition, what is not ready and why, what is about to be deleted. */
export function describeStatus(bundle: Bundle, now: number): string[] {
  const s = summarize(bundle, now);
  const out = [`Bundle ${s.namespace}/${s.name}: ${s.state}, ${s.resourcesReady} resources ready`];
  const status = bundle.status;
  if (status?.observedGeneration !== bundle.metadata.generation)
    out.push(
      `  the operator has not yet observed generation ${bundle.metadata.generation ?? '?'} (last observed: ${status?.observedGeneration ?? 'none'})`,
    );
  for (const c of status?.conditions ?? []) out.push(`  ${conditionWords(c)}`);
  const notReady = (status?.resourceStatuses ?? [])
    .map((r) => ({ name: r.name, ...resourceState(r.conditions) }))
    .filter((r) => r.state !== 'Ready');
  if (notReady.length > 0) {
    out.push('resources not ready:');
    for (const r of notReady) out.push(`  ${r.name}: ${r.state}${r.detail ? `: ${r.detail}` : ''}`);
  }
  if (s.pending > 0) {
    out.push('pending deletions (put the resource back in the Bundle to keep it):');
    for (const p of status?.pendingDeletions ?? []) {
      const at = parseRfc3339(p.deleteAfter);
      out.push(`  ${p.kind}/${p.name} ${pendingWords(p.waitingFor, at === undefined ? undefined : at - now)} (after ${p.deleteAfter})`);
    }
  }
  return out;
}
