/**
 * The one exit of a Bundle pass. Every pass, a reconcile or a finalize, ends
 * by returning a PassReport: the status it leaves on the Bundle (written over
 * which stored Bundle, and whether its transitions call for events) and when
 * to look again. finishPass is the one place that writes a pass's status and
 * maps its next step onto the work queue, so status on every exit holds by
 * construction rather than by discipline at each return.
 */
import type { BundleStatus } from '../../api/bundle-status.js';
import type { NextPass } from '../../core/bundle/next-pass.js';
import type { KubeObject } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { WorkResult } from '../../runtime/workers.js';
import type { EventRecorder, EventTarget } from '../events.js';
import type { BundleApi } from './api.js';
import { reportTransitions, writeBundleStatus } from './status-writer.js';

/** The status a pass leaves on its Bundle. */
export interface StatusReport {
  /** The stored Bundle it is written over: its resourceVersion pins the write (a newer Bundle wins; its pass writes). */
  over: KubeObject;
  status: BundleStatus;
  /** Given: once the write went through, the events its transitions from `before` call for (exit-status.ts). */
  transitions?: { target: EventTarget; before: BundleStatus | undefined; errorReason: string };
}

/** What a pass reports: the status to write, if any, and when to look again. */
export interface PassReport {
  status?: StatusReport;
  next: NextPass;
  /**
   * When `next` was decided (the pass's clock): a wait counts from then, so
   * the time the status write takes does not push a countdown's expiry pass
   * later.
   */
  decidedAtMs?: number;
}

/** A report that writes no status. */
export function nextOnly(next: NextPass): PassReport {
  return { next };
}

/** The work queue's word for a pass's next step; a wait less what has passed since it was decided. */
export function workResultOf(next: NextPass, elapsedMs = 0): WorkResult {
  switch (next.kind) {
    case 'retry':
      return 'requeue';
    case 'after':
      return { requeueAfterMs: Math.max(0, next.ms - elapsedMs) };
    case 'idle':
      return 'forget';
  }
}

/** Writes the report's status (when it changed), then its transitions' events (when the write went through); the queue's next step. */
export async function finishPass(
  d: { api: Pick<BundleApi, 'replaceStatus'>; events: EventRecorder; log: Logger; now: () => number },
  report: PassReport,
): Promise<WorkResult> {
  const s = report.status;
  if (s !== undefined && (await writeBundleStatus(d.api, s.over, statusToWrite(s), d.log)) && s.transitions !== undefined) {
    await reportTransitions(d.events, s.transitions.target, s.transitions.before, s.status, s.transitions.errorReason);
  }
  return workResultOf(report.next, report.decidedAtMs === undefined ? 0 : d.now() - report.decidedAtMs);
}

/**
 * A Bundle not being deleted records no deletion: a status restored or
 * copied from one being deleted carries no orphan reading into a later
 * deletion of this one (status.deletionPropagation, controllers/bundle/finalize.ts).
 */
function statusToWrite(s: StatusReport): BundleStatus {
  if (s.over.metadata.deletionTimestamp !== undefined || s.status.deletionPropagation === undefined) return s.status;
  const { deletionPropagation: _noDeletion, ...status } = s.status;
  return status;
}
