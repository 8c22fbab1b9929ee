/**
 * One resource's part of the reconcile decision (planBundle decides the
 * resources dependencies first, so each sees what its dependencies got):
 * left alone in a conflict, waited for while its live object is being
 * deleted, blocked by its dependencies, or applied (adopted when nothing
 * controls it) with its references resolved. Pure.
 */
import type { KubeObjectManifest, Resource } from '../../api/resource.js';
import { Annotations, EventReasons, Reasons } from '../../api/names.js';
import { readDeletionRules, unreadableRulesMessage } from '../softdelete/rules.js';
import { declarationToSeal } from './countdown.js';
import { declaredIdentityOf } from './countdown-record.js';
import { declaresSameRules } from '../softdelete/stamp-seal.js';
import { buildDesired, needsApply } from './desired.js';
import { decideDrift } from './drift.js';
import { readDriftControls } from './drift-controls.js';
import { withIgnoredFrom, withoutIgnored } from './drift-ignore.js';
import { dependenciesOf, type DependencyGraph } from './graph.js';
import type { HealthCheckTable } from './health-checks.js';
import type { CrdReadinessTable } from './kinds.js';
import { describeObject, type LiveObject } from './objects.js';
import type { Ownership } from './ownership.js';
import type { ApplyStep, PlanInput, ResourcePlan } from './plan-types.js';
import { readinessOf, type Readiness } from './readiness.js';
import { redactionsFor } from './redact.js';
import { resolveObject } from './references.js';
import { decideEnvRefHash, workloadSourceRefs } from './workload-env-hash.js';

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

export function planResource(
  resource: Resource,
  graph: DependencyGraph,
  decided: ReadonlyMap<string, ResourcePlan>,
  input: PlanInput,
  ownership: Ownership,
  claimed: boolean,
): ResourcePlan {
  const name = resource.name;
  const object = resource.spec.object;
  // Validation rules out resources without an object; this keeps the type honest.
  if (object === undefined) return { name, action: 'error', terminal: true, message: 'resource has no object' };
  const live = input.live.get(name);

  // a. Somebody else's object (or one an older claim takes) stays untouched.
  if (ownership.kind === 'conflict') {
    const { message } = ownership;
    return {
      name,
      action: 'conflict',
      message,
      ...(ownership.controller !== undefined ? { controller: ownership.controller } : {}),
      event: { reason: EventReasons.Conflict, message: `resource "${name}": ${message}` },
    };
  }
  // b. An object on its way out is waited for, then created afresh.
  if (live?.metadata.deletionTimestamp !== undefined) {
    return {
      name,
      action: 'wait-deleting',
      message: `${describeObject(live)} is being deleted (since ${live.metadata.deletionTimestamp})`,
    };
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
  if (!rules.ok) return { name, action: 'error', terminal: true, message: unreadableRulesMessage(rules.message) };

  // e. A workload's pod template carries the hash of the ConfigMaps and Secrets it reads (Smith's envRefHash).
  const env = withEnvRefHash(name, resolved.object, live, decided, input);
  if (!env.ok) return env.plan;

  // f. The manifest, and whether the live object already has it.
  const dependencies = deps.flatMap((d) => liveOf(d) ?? []);
  const { policy, policyFromDefaults } = rules.rules;
  const keepingPolicyFromDefaults = policyFromDefaults && (policy === 'Orphan' || policy === 'Approve') ? policy : undefined;
  // The manifest's own deletion rules, sealed onto the object: a floor for what a later hand edit writes there (countdown.ts).
  // Without the key (the CLI), the live object's proof stands in when it declares the same rules: the same manifest, the same hash.
  const manifestRules = declarationToSeal(resolved.object.metadata.annotations, input.spec.deletionDefaults);
  const liveProof = live?.metadata.annotations?.[Annotations.declaredRules];
  const declaredRulesProof = input.stampSeal
    ? input.stampSeal.sealDeclared(declaredIdentityOf(env.object, input.bundle.namespace), manifestRules)
    : declaresSameRules(liveProof, manifestRules)
      ? liveProof
      : undefined;
  // Drift controls (drift-controls.ts): validateBundle refuses what cannot be read; this keeps the type honest.
  const drift = readDriftControls(resolved.object.metadata.annotations, input.spec.driftDefaults);
  if (!drift.ok) return { name, action: 'error', terminal: true, message: drift.message };
  const { ignore } = drift.controls;
  // The hash leaves the ignored fields out, so another manager's change to one is not a change of the manifest.
  const built = buildDesired({
    bundle: input.bundle,
    object: withoutIgnored(env.object, ignore),
    dependencies,
    keepingPolicyFromDefaults,
    declaredRulesProof,
  });
  const { hash } = built;
  const manifest = withIgnoredFrom(built.manifest, live ?? env.object, ignore, live?.metadata['managedFields']);
  const decision = decideDrift(drift.controls, manifest, hash, live);
  const redactions = redactionsFor(resolved.substituted);
  const apply: ApplyStep =
    decision.kind === 'apply'
      ? { desired: manifest, hash, needed: needsApply(manifest, live), create: live === undefined, redactions }
      : {
          desired: manifest,
          hash,
          needed: decision.patch.length > 0,
          create: false,
          redactions,
          bookkeeping: decision.patch,
          ...(decision.drifted !== undefined ? { drifted: decision.drifted } : {}),
        };
  const readiness = effectiveReadiness(apply, live, input.crdReadiness, input.healthChecks);

  // A claimed object was taken (and its events planned) by the claim; the apply only brings it to the spec.
  if (live !== undefined && ownership.kind === 'adopt' && !claimed)
    return {
      name,
      action: 'adopt',
      apply,
      readiness,
      event: { reason: EventReasons.Adopted, message: `resource "${name}": adopted ${describeObject(live)}` },
    };
  return { name, action: 'apply', apply, readiness };
}

/** The Bundle's own ConfigMaps and Secrets by `${kind}/${name}` -> resource name, once per spec. */
const sourceResourcesBySpec = new WeakMap<PlanInput['spec'], Map<string, string>>();

function sourceResources(spec: PlanInput['spec']): Map<string, string> {
  let byRef = sourceResourcesBySpec.get(spec);
  if (byRef === undefined) {
    byRef = new Map();
    for (const r of spec.resources) {
      const o = r.spec.object;
      if (o?.apiVersion === 'v1' && (o.kind === 'ConfigMap' || o.kind === 'Secret')) byRef.set(`${o.kind}/${o.metadata.name}`, r.name);
    }
    sourceResourcesBySpec.set(spec, byRef);
  }
  return byRef;
}

/**
 * The workload with its envRefHash (workload-env-hash.ts), or why it waits.
 * A ConfigMap or Secret of this Bundle whose apply is still to come holds
 * the workload back for a pass: the hash is then taken over the data the
 * Pods will read, and one change rolls them once.
 */
function withEnvRefHash(
  name: string,
  object: KubeObjectManifest,
  live: LiveObject | undefined,
  decided: ReadonlyMap<string, ResourcePlan>,
  input: PlanInput,
): { ok: true; object: KubeObjectManifest } | { ok: false; plan: ResourcePlan } {
  const refs = workloadSourceRefs(object);
  if (refs.length === 0) return { ok: true, object };
  const own = sourceResources(input.spec);
  const pending = new Set<string>();
  let blockedByError = false;
  for (const ref of refs) {
    const resourceName = own.get(`${ref.kind}/${ref.name}`);
    const plan = resourceName === undefined || resourceName === name ? undefined : decided.get(resourceName);
    if (plan === undefined || resourceName === undefined) continue;
    if ((plan.action === 'apply' || plan.action === 'adopt') && !plan.apply.needed) continue;
    pending.add(resourceName);
    blockedByError ||= isFailing(plan);
  }
  if (pending.size > 0) {
    const waitingFor = [...pending];
    const message = `waiting for ${waitingFor.map((d) => `"${d}" (${describeWait(decided.get(d)) === 'ready' ? 'applying' : describeWait(decided.get(d))})`).join(', ')}: the pod template's envRefHash reads it`;
    return { ok: false, plan: { name, action: 'blocked', reason: Reasons.DependenciesNotReady, message, waitingFor, blockedByError } };
  }
  for (const ref of refs) {
    const read = input.envSources?.get(`${ref.kind}/${ref.name}`);
    if (read !== undefined && read !== null && 'unreadable' in read)
      return {
        ok: false,
        plan: {
          name,
          action: 'error',
          terminal: false,
          message: `cannot read ${ref.kind} "${ref.name}" for the pod template's envRefHash: ${read.unreadable}`,
        },
      };
  }
  const decision = decideEnvRefHash(object, live, (kind, sourceName) => {
    const read = input.envSources?.get(`${kind}/${sourceName}`);
    return read === undefined || read === null || 'unreadable' in read ? undefined : read;
  });
  switch (decision.kind) {
    case 'unchanged':
      return { ok: true, object };
    case 'stamped':
      return { ok: true, object: decision.object };
    case 'missing':
      return {
        ok: false,
        plan: {
          name,
          action: 'blocked',
          reason: Reasons.EnvSourceNotFound,
          message: `waiting for ${decision.message}: the pod template reads it (not optional)`,
          waitingFor: [],
          blockedByError: false,
        },
      };
  }
}

/** Until an apply that changes something has been observed, the live object's readiness says nothing about the new spec. */
function effectiveReadiness(
  apply: ApplyStep,
  live: LiveObject | undefined,
  crdReadiness: CrdReadinessTable,
  healthChecks: HealthCheckTable | undefined,
): Readiness {
  if (live === undefined) return { state: 'in-progress', message: 'creating' };
  // A bookkeeping patch changes no field the object's controller acts on: its readiness is the live object's.
  if (apply.needed && apply.bookkeeping === undefined) return { state: 'in-progress', message: 'applying changes' };
  return readinessOf(live, crdReadiness, healthChecks);
}
