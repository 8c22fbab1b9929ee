/**
 * The reconcile decision for one Bundle, as data: what to apply, adopt,
 * leave alone or prune, in which order, and when to look again. The
 * controller gathers the inputs (live objects, kind tables, the time) and
 * carries the plan out; nothing here talks to the API server.
 */
import type { BundleSpec, KubeObjectManifest, OwnerReference, Resource } from '../../api/bundle.js';
import { Annotations, EventReasons, Reasons } from '../../api/names.js';
import { decideSoftDelete } from '../softdelete/decide.js';
import { buildDesired, needsApply } from './desired.js';
import { buildGraph, dependenciesOf, levels, topologicalOrder, type DependencyGraph } from './graph.js';
import type { CrdReadinessTable, KindTable } from './kinds.js';
import { controllerOf, describeObject, jsonPointerSegment, objectKey, type JsonPatchOperation, type LiveObject } from './objects.js';
import { planPrune, type PlannedEvent, type PruneAction, type WithheldPrune } from './prune.js';
import { readinessOf, type Readiness } from './readiness.js';
import { resolveObject } from './references.js';
import { formatIssue, validateBundle, type ValidationIssue } from './validate.js';

export interface PlanBundle {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  /** Set when the Bundle is being deleted. */
  deletionTimestamp?: string;
}

export interface PlanInput {
  bundle: PlanBundle;
  spec: BundleSpec;
  kinds: KindTable;
  crdReadiness: CrdReadinessTable;
  /** The live object at each resource's coordinates, by resource name; absent when there is none. */
  live: ReadonlyMap<string, LiveObject>;
  /** Every live object whose controller ownerReference has the Bundle's uid, wherever found. */
  controlled: readonly LiveObject[];
  /** Epoch milliseconds. */
  now: number;
}

/** What to send for a resource: the manifest to server-side apply and whether it differs from the live object. */
export interface ApplyStep {
  desired: KubeObjectManifest;
  hash: string;
  /** False when the live object already matches: send nothing. */
  needed: boolean;
  /** True when there is no live object yet. */
  create: boolean;
}

export type ResourcePlan =
  | { name: string; action: 'apply'; apply: ApplyStep; readiness: Readiness }
  /** The live object has no controller: the apply takes ownership. */
  | { name: string; action: 'adopt'; apply: ApplyStep; readiness: Readiness; event: PlannedEvent }
  /**
   * The live object counts down to deletion but is in the spec again. Send
   * `patch` (JSON patch) before the apply: an apply that merely omits the
   * annotation does not remove it when another field manager wrote it.
   */
  | { name: string; action: 'cancel-deletion'; patch: JsonPatchOperation[]; apply: ApplyStep; readiness: Readiness; event: PlannedEvent; adopt: boolean }
  | { name: string; action: 'blocked'; reason: typeof Reasons.DependenciesNotReady; message: string; waitingFor: string[]; blockedByError: boolean }
  /** Controlled by something else: left untouched. */
  | { name: string; action: 'conflict'; message: string; controller: OwnerReference; event: PlannedEvent }
  /** The live object is being deleted by the API server; apply again once it is gone. */
  | { name: string; action: 'wait-deleting'; message: string }
  | { name: string; action: 'error'; terminal: boolean; message: string };

export type ResourceAction = ResourcePlan['action'];

export interface BundlePlan {
  bundle: PlanBundle;
  /** Validation issues; when there are any, nothing is applied or pruned. */
  issues: ValidationIssue[];
  /** Resource names, dependencies first. */
  order: string[];
  /** Resource names grouped for bounded parallelism: each level depends only on earlier ones. */
  levels: string[][];
  /** One entry per resource, in `order`. */
  resources: ResourcePlan[];
  /** Prune actions to carry out, dependents first. */
  prune: PruneAction[];
  /** Prune actions held back this pass, and why. */
  withheld: WithheldPrune[];
  /** Wait at most this long before reconciling again (the next soft-delete expiry). */
  requeueAfterMs?: number;
}

export function planBundle(input: PlanInput): BundlePlan {
  const { bundle, spec } = input;
  const graph = resourceGraph(spec.resources);
  const order = topologicalOrder(graph);
  const base = { bundle, order, levels: levels(graph) };

  // 1. A Bundle being deleted applies nothing; every controlled object goes through the prune rules.
  if (bundle.deletionTimestamp !== undefined) {
    const prune = planPrune({ controlled: input.controlled, inSpec: new Set(), now: input.now });
    return withRequeue({ ...base, issues: [], resources: [], prune, withheld: [] }, input.now);
  }

  // 2. An invalid spec changes nothing in the cluster.
  const issues = validateBundle(bundle, spec, input.kinds);
  if (issues.length > 0) return { ...base, issues, resources: [], prune: [], withheld: [] };

  // 3. Each resource, dependencies first, so a resource sees its dependencies' decisions.
  const byName = new Map(spec.resources.map((r) => [r.name, r]));
  const decided = new Map<string, ResourcePlan>();
  for (const name of order) {
    const resource = byName.get(name);
    if (resource === undefined) continue;
    decided.set(name, planResource(resource, graph, decided, input));
  }
  const resources = order.flatMap((name) => decided.get(name) ?? []);

  // 4. Prune what left the spec, unless this pass could not apply everything.
  const candidates = planPrune({ controlled: input.controlled, inSpec: specKeys(spec, bundle.namespace), now: input.now });
  const holdReason = pruneHoldReason(resources);
  const plan: BundlePlan = { ...base, issues, resources, prune: candidates, withheld: [] };
  return withRequeue(holdReason === undefined ? plan : withholdPrunes(plan, holdReason), input.now);
}

/**
 * Moves every writing prune action (delete, mark) to `withheld`. The
 * controller also calls this when an apply of the pass failed, before it
 * prunes: nothing is deleted unless every apply went through.
 */
export function withholdPrunes(plan: BundlePlan, reason: string): BundlePlan {
  const prune: PruneAction[] = [];
  const withheld: WithheldPrune[] = [...plan.withheld];
  for (const action of plan.prune) {
    if (action.action === 'delete' || action.action === 'mark') withheld.push({ action, reason });
    else prune.push(action);
  }
  return { ...plan, prune, withheld };
}

function withRequeue(plan: BundlePlan, now: number): BundlePlan {
  const expiries = plan.prune.flatMap((a) => (a.action === 'mark' || a.action === 'wait' ? [a.deleteAtMs] : []));
  if (expiries.length === 0) return plan;
  return { ...plan, requeueAfterMs: Math.max(0, Math.min(...expiries) - now) };
}

/** Why pruning must wait this pass, if it must: some resource could not be applied. */
function pruneHoldReason(resources: readonly ResourcePlan[]): string | undefined {
  const failing = resources.filter((r) => r.action === 'error' || r.action === 'conflict' || (r.action === 'blocked' && r.blockedByError) || ('readiness' in r && r.readiness.state === 'error'));
  if (failing.length === 0) return undefined;
  return `not pruning while resources are failing: ${failing.map((r) => r.name).join(', ')}`;
}

/** objectKey of every object the spec lists, as it is applied: in the Bundle's namespace. */
function specKeys(spec: BundleSpec, namespace: string): Set<string> {
  return new Set(spec.resources.flatMap((r) => (r.spec.object === undefined ? [] : [objectKey({ ...r.spec.object, metadata: { name: r.spec.object.metadata.name, namespace } })])));
}

function resourceGraph(resources: readonly Resource[]): DependencyGraph {
  return buildGraph(
    resources.map((r) => r.name),
    resources.flatMap((r) => (r.references ?? []).map((ref) => [r.name, ref.resource] as const)),
  );
}

/** Whether a decided resource failed (so what depends on it is blocked by an error, not by progress). */
function isFailing(plan: ResourcePlan): boolean {
  switch (plan.action) {
    case 'error':
    case 'conflict':
      return true;
    case 'blocked':
      return plan.blockedByError;
    case 'wait-deleting':
      return false;
    default:
      return plan.readiness.state === 'error';
  }
}

function describeWait(plan: ResourcePlan | undefined): string {
  if (plan === undefined) return 'not planned';
  switch (plan.action) {
    case 'blocked':
      return 'blocked';
    case 'conflict':
      return 'in conflict';
    case 'error':
      return 'failed';
    case 'wait-deleting':
      return 'being deleted';
    default:
      return plan.readiness.state === 'in-progress' ? 'in progress' : plan.readiness.state === 'error' ? 'failed' : 'ready';
  }
}

function isReady(plan: ResourcePlan | undefined): boolean {
  return plan !== undefined && 'readiness' in plan && plan.readiness.state === 'ready';
}

function planResource(resource: Resource, graph: DependencyGraph, decided: ReadonlyMap<string, ResourcePlan>, input: PlanInput): ResourcePlan {
  const name = resource.name;
  const object = resource.spec.object;
  // Validation rules out resources without an object; this keeps the type honest.
  if (object === undefined) return { name, action: 'error', terminal: true, message: 'resource has no object' };
  const live = input.live.get(name);

  // a. Somebody else's object stays untouched.
  const controller = live === undefined ? undefined : controllerOf(live);
  if (live !== undefined && controller !== undefined && controller.uid !== input.bundle.uid) {
    const message = `${describeObject(live)} is controlled by ${controller.kind} ${controller.name} (uid ${controller.uid})`;
    return { name, action: 'conflict', message, controller, event: { reason: EventReasons.Conflict, message: `resource "${name}": ${message}` } };
  }
  // b. An object on its way out is waited for, then created afresh.
  if (live?.metadata.deletionTimestamp !== undefined) {
    return { name, action: 'wait-deleting', message: `${describeObject(live)} is being deleted (since ${live.metadata.deletionTimestamp})` };
  }
  // c. Dependencies first.
  const deps = dependenciesOf(graph, name);
  const waitingFor = deps.filter((d) => !isReady(decided.get(d)));
  if (waitingFor.length > 0) {
    const blockedByError = waitingFor.some((d) => {
      const plan = decided.get(d);
      return plan !== undefined && isFailing(plan);
    });
    const message = `waiting for ${waitingFor.map((d) => `"${d}" (${describeWait(decided.get(d))})`).join(', ')}`;
    return { name, action: 'blocked', reason: Reasons.DependenciesNotReady, message, waitingFor, blockedByError };
  }
  // d. References, from the dependencies' live objects.
  const liveOf = (n: string): LiveObject | undefined => input.live.get(n);
  const resolved = resolveObject(object, resource, liveOf);
  if (!resolved.ok) return { name, action: 'error', terminal: false, message: resolved.errors.join('; ') };

  // e. The manifest, and whether the live object already has it.
  const dependencies = deps.flatMap((d) => liveOf(d) ?? []);
  const { manifest, hash } = buildDesired({ bundle: input.bundle, object: resolved.object, dependencies });
  const needed = needsApply(manifest, live);
  const apply: ApplyStep = { desired: manifest, hash, needed, create: live === undefined };
  const readiness = effectiveReadiness(apply, live, input.crdReadiness);
  const adopt = live !== undefined && controller === undefined;

  if (live !== undefined && decideSoftDelete({ inSpec: true, annotations: live.metadata.annotations, now: input.now }).action === 'cancel') {
    return {
      name,
      action: 'cancel-deletion',
      patch: cancelPatch(live),
      apply,
      readiness,
      adopt,
      event: { reason: EventReasons.DeletionCancelled, message: `resource "${name}": deletion of ${describeObject(live)} cancelled, it is in the Bundle again` },
    };
  }
  if (adopt) return { name, action: 'adopt', apply, readiness, event: { reason: EventReasons.Adopted, message: `resource "${name}": adopted ${describeObject(live)}` } };
  return { name, action: 'apply', apply, readiness };
}

/** Until an apply that changes something has been observed, the live object's readiness says nothing about the new spec. */
function effectiveReadiness(apply: ApplyStep, live: LiveObject | undefined, crdReadiness: CrdReadinessTable): Readiness {
  if (live === undefined) return { state: 'in-progress', message: 'creating' };
  if (apply.needed) return { state: 'in-progress', message: 'applying changes' };
  return readinessOf(live, crdReadiness);
}

/** Removes our countdown stamp, if it still has the value we read (a test op guards against a concurrent change). */
function cancelPatch(live: LiveObject): JsonPatchOperation[] {
  const path = `/metadata/annotations/${jsonPointerSegment(Annotations.deletionTimestamp)}`;
  return [
    { op: 'test', path, value: live.metadata.annotations?.[Annotations.deletionTimestamp] },
    { op: 'remove', path },
  ];
}

/** One line per validation issue, for events and conditions. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map(formatIssue).join('; ');
}
