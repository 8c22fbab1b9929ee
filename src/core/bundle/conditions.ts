/**
 * Condition lists as values. The time is an input, and a condition keeps its
 * lastTransitionTime for as long as its status does not change, so writing
 * the same state twice produces the same status (and no write).
 */
import type { Condition, ConditionStatus } from '../../api/bundle-status.js';

export function condition(type: string, status: boolean | ConditionStatus, reason?: string, message?: string): Condition {
  const c: Condition = { type, status: typeof status === 'boolean' ? (status ? 'True' : 'False') : status };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined && message !== '') c.message = message;
  return c;
}

/**
 * `next` with transition times: a condition whose status is unchanged from
 * `previous` keeps the previous lastTransitionTime; a new or changed one gets
 * `nowIso`. Conditions only in `previous` are dropped.
 */
export function mergeConditions(previous: readonly Condition[] | undefined, next: readonly Condition[], nowIso: string): Condition[] {
  return next.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const lastTransitionTime =
      before !== undefined && before.status === c.status && before.lastTransitionTime !== undefined ? before.lastTransitionTime : nowIso;
    return { ...c, lastTransitionTime };
  });
}

export function findConditionByType(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
