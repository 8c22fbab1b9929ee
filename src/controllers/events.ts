/**
 * Writes events (events.k8s.io/v1). An event that cannot be written is
 * logged and dropped: events are information and must never fail a
 * reconcile.
 */
import { EVENT_SOURCE } from '../api/names.js';
import type { KubeClient } from '../kube/client.js';
import { errorMessage } from '../kube/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Clock } from '../runtime/clock.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid: string;
}

export interface EventRecorder {
  normal(target: EventTarget, reason: string, message: string): Promise<void>;
  warning(target: EventTarget, reason: string, message: string): Promise<void>;
}

/** RFC 3339 with microseconds, as events.k8s.io's MicroTime wants. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function apiEventRecorder(client: KubeClient, clock: Clock, logger: Logger, instance: string): EventRecorder {
  const write = async (type: 'Normal' | 'Warning', target: EventTarget, reason: string, message: string): Promise<void> => {
    try {
      await client.createEvent({
        regarding: { apiVersion: target.apiVersion, kind: target.kind, name: target.name, uid: target.uid, ...(target.namespace ? { namespace: target.namespace } : {}) },
        type,
        reason,
        message,
        reportingController: `${EVENT_SOURCE}.smith.atlassian.com/${EVENT_SOURCE}`,
        reportingInstance: instance,
        action: reason,
        eventTime: microTime(clock.now()),
      });
    } catch (err) {
      logger.warn({ err: errorMessage(err), reason, object: `${target.kind}/${target.namespace ?? ''}/${target.name}` }, 'could not write event');
    }
  };
  return {
    normal: (t, r, m) => write('Normal', t, r, m),
    warning: (t, r, m) => write('Warning', t, r, m),
  };
}
