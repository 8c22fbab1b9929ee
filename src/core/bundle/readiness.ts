/**
 * Whether a live object is ready, as a pure function of the object, of the
 * CEL readiness rules that apply (spec.healthChecks over the operator's
 * defaults) and, for custom resources, of their CRD's readiness annotations.
 * Order: a rule for the object's apiVersion and kind; else the built-in
 * kinds' own checks (other built-in kinds are ready as soon as they exist);
 * else kstatus's conventions (observedGeneration, Reconciling, Stalled) and
 * Smith's CRD annotations, then a Ready condition.
 */
import { Annotations } from '../../api/names.js';
import type { CrdReadiness, CrdReadinessTable } from './kinds.js';
import { findCondition, groupOf, isRecord, kindKey, type JsonRecord, type LiveObject } from './objects.js';
import type { Evaluation } from './cel.js';
import { EMPTY_HEALTH_CHECKS, type CompiledHealthCheck, type HealthCheckTable } from './health-checks.js';
import { getPath } from './path.js';

export type Readiness =
  { state: 'ready' } | { state: 'in-progress'; message: string } | { state: 'error'; terminal: boolean; message: string };

const READY: Readiness = { state: 'ready' };
const inProgress = (message: string): Readiness => ({ state: 'in-progress', message });

/** The readiness rule a CRD declares through its annotations, if it declares both. */
export function crdReadinessFromAnnotations(annotations: Readonly<Record<string, string>> | undefined): CrdReadiness | undefined {
  const fieldPath = annotations?.[Annotations.crReadyWhenFieldPath];
  const fieldValue = annotations?.[Annotations.crReadyWhenFieldValue];
  return fieldPath === undefined || fieldValue === undefined ? undefined : { fieldPath, fieldValue };
}

export function readinessOf(
  live: LiveObject,
  crdReadiness: CrdReadinessTable = new Map(),
  healthChecks: HealthCheckTable = EMPTY_HEALTH_CHECKS,
): Readiness {
  const rule = healthChecks.get(kindKey(live.apiVersion, live.kind));
  if (rule !== undefined) return ruleReadiness(live, rule);
  const group = groupOf(live.apiVersion);
  const checker = BUILT_IN_CHECKS.get(`${group}/${live.kind}`);
  if (checker !== undefined) return checker(live);
  if (isBuiltInGroup(group)) return READY;
  return customResourceReadiness(live, crdReadiness.get(kindKey(live.apiVersion, live.kind)));
}

/** Groups served by Kubernetes itself: the core group, unqualified groups (apps, batch) and *.k8s.io. */
function isBuiltInGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

type Checker = (live: LiveObject) => Readiness;

const BUILT_IN_CHECKS: ReadonlyMap<string, Checker> = new Map([
  ['apps/Deployment', deploymentReadiness],
  ['apps/StatefulSet', statefulSetReadiness],
  ['apps/DaemonSet', daemonSetReadiness],
  ['batch/Job', jobReadiness],
  ['/PersistentVolumeClaim', pvcReadiness],
  ['/Service', serviceReadiness],
]);

function record(value: unknown): JsonRecord {
  return isRecord(value) ? value : {};
}

function num(value: unknown, fallback = 0): number {
  return typeof value === 'number' ? value : fallback;
}

/** The controller has seen the latest spec; otherwise the status describes an older one. */
function generationObserved(live: LiveObject): Readiness | undefined {
  const observed = num(record(live['status'])['observedGeneration'], -1);
  const generation = live.metadata.generation;
  if (generation !== undefined && observed < generation)
    return inProgress(`waiting for the controller to observe generation ${generation} (observed ${observed < 0 ? 'none' : observed})`);
  return undefined;
}

function deploymentReadiness(live: LiveObject): Readiness {
  const progressing = findCondition(live, 'Progressing');
  if (progressing?.['reason'] === 'ProgressDeadlineExceeded') {
    return {
      state: 'error',
      terminal: true,
      message: `rollout exceeded its progress deadline${typeof progressing['message'] === 'string' ? `: ${progressing['message']}` : ''}`,
    };
  }
  const pending = generationObserved(live);
  if (pending) return pending;
  const status = record(live['status']);
  const wanted = num(record(live['spec'])['replicas'], 1);
  const updated = num(status['updatedReplicas']);
  const available = num(status['availableReplicas']);
  const total = num(status['replicas']);
  const unavailable = num(status['unavailableReplicas']);
  if (updated < wanted) return inProgress(`${updated} of ${wanted} replicas updated`);
  if (total > updated) return inProgress(`${total - updated} old replicas pending termination`);
  if (available < wanted || unavailable > 0) return inProgress(`${available} of ${wanted} updated replicas available`);
  return READY;
}

function statefulSetReadiness(live: LiveObject): Readiness {
  const pending = generationObserved(live);
  if (pending) return pending;
  const spec = record(live['spec']);
  const status = record(live['status']);
  const wanted = num(spec['replicas'], 1);
  const ready = num(status['readyReplicas']);
  if (ready < wanted) return inProgress(`${ready} of ${wanted} replicas ready`);
  // With OnDelete, pods are only replaced by hand: revisions may legitimately differ.
  if (record(spec['updateStrategy'])['type'] === 'OnDelete') return READY;
  const updated = num(status['updatedReplicas']);
  if (updated < wanted) return inProgress(`${updated} of ${wanted} replicas updated`);
  if (status['currentRevision'] !== status['updateRevision']) return inProgress(`rolling out revision ${String(status['updateRevision'])}`);
  return READY;
}

function daemonSetReadiness(live: LiveObject): Readiness {
  const pending = generationObserved(live);
  if (pending) return pending;
  const status = record(live['status']);
  const desired = num(status['desiredNumberScheduled']);
  const ready = num(status['numberReady']);
  const updated = num(status['updatedNumberScheduled']);
  if (updated < desired) return inProgress(`${updated} of ${desired} pods updated`);
  if (ready < desired) return inProgress(`${ready} of ${desired} pods ready`);
  return READY;
}

function jobReadiness(live: LiveObject): Readiness {
  const failed = findCondition(live, 'Failed');
  if (failed?.['status'] === 'True') return { state: 'error', terminal: true, message: `job failed: ${conditionText(failed)}` };
  if (findCondition(live, 'Complete')?.['status'] === 'True') return READY;
  return inProgress('job has not completed');
}

function pvcReadiness(live: LiveObject): Readiness {
  const phase = record(live['status'])['phase'];
  if (phase === 'Bound') return READY;
  if (phase === 'Lost') return { state: 'error', terminal: true, message: 'claim lost its volume (phase Lost)' };
  return inProgress(`claim is ${typeof phase === 'string' ? phase : 'not bound yet'}`);
}

function serviceReadiness(live: LiveObject): Readiness {
  if (record(live['spec'])['type'] !== 'LoadBalancer') return READY;
  const ingress = record(record(live['status'])['loadBalancer'])['ingress'];
  return Array.isArray(ingress) && ingress.length > 0 ? READY : inProgress('waiting for a load balancer ingress');
}

function conditionText(c: JsonRecord): string {
  const reason = typeof c['reason'] === 'string' ? c['reason'] : '';
  const message = typeof c['message'] === 'string' ? c['message'] : '';
  return [reason, message].filter((s) => s !== '').join(': ') || 'no reason given';
}

/**
 * Custom resources: the CRD's field path/value if it declares them; else a
 * Ready condition; else, without any status, ready when present (Smith's rule
 * for kinds without status). A status without a Ready condition is still in
 * progress: the object reports state, just not readiness yet.
 */
function customResourceReadiness(live: LiveObject, crd: CrdReadiness | undefined): Readiness {
  const kstatus = kstatusReadiness(live);
  if (kstatus !== undefined) return kstatus;
  if (crd !== undefined) {
    const found = getPath(live, crd.fieldPath);
    if ('message' in found) return { state: 'error', terminal: false, message: `CRD readiness annotation: ${found.message}` };
    const actual = found.found ? scalarText(found.value) : undefined;
    if (actual === crd.fieldValue) return READY;
    return inProgress(`waiting for ${crd.fieldPath} to be "${crd.fieldValue}" (${actual === undefined ? 'not set' : `is "${actual}"`})`);
  }
  const status = live['status'];
  const ready = findCondition(live, 'Ready');
  if (ready === undefined) {
    if (status === undefined || status === null || (isRecord(status) && Object.keys(status).length === 0)) return READY;
    return inProgress('waiting for a Ready condition');
  }
  if (ready['status'] !== 'True') return inProgress(`not ready: ${conditionText(ready)}`);
  // The condition's own observedGeneration if it has one, else the status-wide one.
  const observed = ready['observedGeneration'] ?? record(status)['observedGeneration'];
  const generation = live.metadata.generation;
  if (typeof observed === 'number' && generation !== undefined && observed < generation)
    return inProgress(`Ready condition is for generation ${observed}, object is at ${generation}`);
  return READY;
}

/**
 * A status that names the generation it describes, and an older one. Unlike
 * the built-in kinds' controllers, a custom resource's may never write
 * observedGeneration: only a reported one counts (as kstatus and Flux read it).
 */
function reportedGenerationBehind(live: LiveObject): Readiness | undefined {
  const observed = record(live['status'])['observedGeneration'];
  const generation = live.metadata.generation;
  if (typeof observed !== 'number' || generation === undefined || observed >= generation) return undefined;
  return inProgress(`waiting for the controller to observe generation ${generation} (observed ${observed})`);
}

/**
 * kstatus's conventions that hold an object back whatever else it says: a
 * status for an older generation, Reconciling True, Stalled True (kstatus's
 * Failed: reported as an error, retried, since a stalled controller may
 * recover). Undefined when none applies.
 */
function kstatusReadiness(live: LiveObject): Readiness | undefined {
  const stale = reportedGenerationBehind(live);
  if (stale) return stale;
  const stalled = findCondition(live, 'Stalled');
  if (stalled?.['status'] === 'True') return { state: 'error', terminal: false, message: `stalled: ${conditionText(stalled)}` };
  const reconciling = findCondition(live, 'Reconciling');
  if (reconciling?.['status'] === 'True') return inProgress(`reconciling: ${conditionText(reconciling)}`);
  return undefined;
}

/**
 * A CEL rule, as Flux's kstatus reader runs it: a status for an older
 * generation is in progress; then inProgress, failed, current in that order;
 * none true is in progress. An expression that fails on this object (a
 * field not there yet) leaves it in progress, with the reason; one that
 * returns a non-bool or runs out of budget is an error of the resource,
 * never a silent "ready".
 */
function ruleReadiness(live: LiveObject, rule: CompiledHealthCheck): Readiness {
  const stale = reportedGenerationBehind(live);
  if (stale) return stale;
  const steps = [
    ['inProgress', rule.inProgress],
    ['failed', rule.failed],
    ['current', rule.current],
  ] as const;
  for (const [field, expression] of steps) {
    if (expression === undefined) continue;
    const result: Evaluation = expression.evaluate(live);
    const where = `${rule.source}.${field}`;
    if (!result.ok) {
      if (result.reason === 'error') return inProgress(`${where} cannot be evaluated yet: ${result.message}`);
      return { state: 'error', terminal: result.reason === 'not-bool', message: `${where}: ${result.message}` };
    }
    if (!result.value) continue;
    if (field === 'inProgress') return inProgress(`${where} is true`);
    if (field === 'failed') return { state: 'error', terminal: true, message: `failed by ${where} (${expression.text})` };
    return READY;
  }
  return inProgress(`${rule.source}.current is false`);
}

function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
