/**
 * The one event writer (events.k8s.io/v1), for the Bundle controller, the
 * released-object sweeper and the garbage collector alike: one reporting
 * controller name, one time format. An event that cannot be written is
 * reported to the caller's callback and dropped: events are information and
 * must never fail a reconcile.
 */
import { REPORTING_CONTROLLER } from '../api/names.js';
import type { EventInput, KubeClient } from '../kube/client.js';
import { errorMessage } from '../kube/errors.js';
import type { Logger } from '../observability/logger.js';
import type { Clock } from '../kube/clock.js';

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

/** Where events go: KubeClient, or the GC's API (a fake in its step tests). */
export interface EventSink {
  /** Resolves with the new Event's name, where the sink knows it. */
  createEvent(input: EventInput): Promise<string | void>;
}

export interface EventWrite {
  target: EventTarget;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  message: string;
}

/** RFC 3339 with microseconds, as events.k8s.io's MicroTime wants. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The Event for `e`, as every writer of the operator says it. Cluster-scoped targets' events go to "default". */
export function eventInput(clock: Clock, instance: string, e: EventWrite): EventInput {
  const t = e.target;
  return {
    regarding: { apiVersion: t.apiVersion, kind: t.kind, name: t.name, uid: t.uid, ...(t.namespace ? { namespace: t.namespace } : {}) },
    namespace: t.namespace || 'default',
    type: e.type,
    reason: e.reason,
    message: e.message,
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: instance,
    action: e.action,
    eventTime: microTime(clock.now()),
  };
}

/** Writes one event; never rejects (a failure goes to onFailure). */
export async function writeEvent(
  sink: EventSink,
  clock: Clock,
  instance: string,
  e: EventWrite,
  onFailure: (err: unknown) => void,
): Promise<void> {
  try {
    await sink.createEvent(eventInput(clock, instance, e));
  } catch (err) {
    onFailure(err);
  }
}

export function apiEventRecorder(client: KubeClient, clock: Clock, logger: Logger, instance: string): EventRecorder {
  const write = (type: 'Normal' | 'Warning', target: EventTarget, reason: string, message: string): Promise<void> =>
    writeEvent(client, clock, instance, { target, type, reason, action: reason, message }, (err) =>
      logger.warn(
        { err: errorMessage(err), reason, object: { kind: target.kind, namespace: target.namespace, name: target.name } },
        'could not write event',
      ),
    );
  return {
    normal: (t, r, m) => write('Normal', t, r, m),
    warning: (t, r, m) => write('Warning', t, r, m),
  };
}
