/**
 * One resource's part of the reconcile decision (planBundle decides the
 * resources dependencies first, so each sees what its dependencies got):
 * left alone in a conflict, waited for while its live object is being
 * deleted, blocked by its dependencies, or applied (adopted when nothing
 * controls it) with its references resolved. Pure.
 */
import type { Resource } from '../../api/bundle.js';
import { EventReasons, Reasons } from '../../api/names.js';
import { readDeletionRules } from '../softdelete/rules.js';
import { buildDesired, needsApply } from './desired.js';
import { dependenciesOf, type DependencyGraph } from './graph.js';
import type { CrdReadinessTable } from './kinds.js';
import { describeObject, type LiveObject } from './objects.js';
import type { Ownership } from './ownership.js';
import type { ApplyStep, PlanInput, ResourcePlan } from './plan.js';
import { readinessOf, type Readiness } from './readiness.js';
import { redactionsFor } from './redact.js';
import { resolveObject } from './references.js';

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

export function planResource(resource: Resource, graph: DependencyGraph, decided: ReadonlyMap<string, ResourcePlan>, input: PlanInput, ownership: Ownership, claimed: boolean): ResourcePlan {
  const name = resource.name;
  const object = resource.spec.object;
  // Validation rules out resources without an object; this keeps the type honest.
  if (object === undefined) return { name, action: 'error', terminal: true, message: 'resource has no object' };
  const live = input.live.get(name);

  // a. Somebody else's object (or one an older claim takes) stays untouched.
  if (ownership.kind === 'conflict') {
    const { message } = ownership;
    return { name, action: 'conflict', message, ...(ownership.controller !== undefined ? { controller: ownership.controller } : {}), event: { reason: EventReasons.Conflict, message: `resource "${name}": ${message}` } };
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
  // Deletion rules that cannot be read (a delay, policy or gate) would keep the object forever once it leaves the Bundle, with no word
  // until then: say so now, apply nothing of it, and (like any failing resource) prune nothing until it is fixed.
  const rules = readDeletionRules(resolved.object.metadata.annotations, input.spec.deletionDefaults);
  if (!rules.ok) return { name, action: 'error', terminal: true, message: `${rules.message}; the object is not applied, and nothing of this Bundle is pruned until it is fixed` };

  // e. The manifest, and whether the live object already has it.
  const dependencies = deps.flatMap((d) => liveOf(d) ?? []);
  const { policy, policyFromDefaults } = rules.rules;
  const keepingPolicyFromDefaults = policyFromDefaults && (policy === 'Orphan' || policy === 'Approve') ? policy : undefined;
  const { manifest, hash } = buildDesired({ bundle: input.bundle, object: resolved.object, dependencies, keepingPolicyFromDefaults });
  const needed = needsApply(manifest, live);
  const apply: ApplyStep = { desired: manifest, hash, needed, create: live === undefined, redactions: redactionsFor(resolved.substituted) };
  const readiness = effectiveReadiness(apply, live, input.crdReadiness);

  // A claimed object was taken (and its events planned) by the claim; the apply only brings it to the spec.
  if (live !== undefined && ownership.kind === 'adopt' && !claimed) return { name, action: 'adopt', apply, readiness, event: { reason: EventReasons.Adopted, message: `resource "${name}": adopted ${describeObject(live)}` } };
  return { name, action: 'apply', apply, readiness };
}

/** Until an apply that changes something has been observed, the live object's readiness says nothing about the new spec. */
function effectiveReadiness(apply: ApplyStep, live: LiveObject | undefined, crdReadiness: CrdReadinessTable): Readiness {
  if (live === undefined) return { state: 'in-progress', message: 'creating' };
  if (apply.needed) return { state: 'in-progress', message: 'applying changes' };
  return readinessOf(live, crdReadiness);
}
