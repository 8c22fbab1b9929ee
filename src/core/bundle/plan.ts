/**
 * The reconcile decision for one Bundle, as data: what to apply, adopt,
 * leave alone or prune, in which order, and when to look again. The
 * controller gathers the inputs (live objects, kind tables, the time) and
 * carries the plan out; nothing here talks to the API server.
 */
import type { DeclaredRules, PendingDeletion } from '../../api/bundle-status.js';
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import type { Resource } from '../../api/resource.js';
import {
  carriedRecord,
  declaredIdentityOf,
  declaredRulesOf,
  identityKey,
  readableDeclaredRules,
  type CountdownRecord,
} from './countdown-record.js';
import { buildGraph, levels, topologicalOrder, type DependencyGraph } from './graph.js';
import type { HealthCheckTable } from './health-checks.js';
import type { CrdReadinessTable } from './kinds.js';
import { objectKey, type LiveObject } from './objects.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import { decideOwnership, listedObjectKeys, type BundleListing, type Ownership } from './ownership.js';
import { planTakeHolds, planWithdrawals, type TakeHold, type ClaimWithdrawal } from './take-holds.js';
import { planResource } from './plan-resource.js';
import { planPrune, type PruneAction, type WithheldPrune } from './prune.js';
import { readinessOf } from './readiness.js';
import { validateBundle, type ValidationIssue } from './validate.js';
import type { PlanBundle, PlanInput, ResourcePlan } from './plan-types.js';

export type { ApplyStep, EnvSourceRead, PlanBundle, PlanInput, ResourcePlan } from './plan-types.js';

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
  /** Claims to carry out first, before any apply (and also when the spec is invalid). */
  takeHolds: TakeHold[];
  /** Claim references to take out of objects the Bundle no longer lists (a valid spec only). */
  withdrawals: ClaimWithdrawal[];
  /** Prune actions to carry out, dependents first. */
  prune: PruneAction[];
  /** Prune actions held back this pass, and why. */
  withheld: WithheldPrune[];
  /** Wait at most this long before reconciling again (the next soft-delete expiry). */
  requeueAfterMs?: number;
  /** What the deletion rules were read with: a delete decided again on a fresh read (redecideDelete) uses the same. */
  deletionContext: {
    defaults?: DeletionDefaults | undefined;
    bundleReady: boolean;
    stampSeal?: StampSeal;
    countdownRecord?: CountdownRecord;
  };
  /**
   * status.declaredRules: the deletion rules each listed object's manifest
   * declares, and the record's entries this pass carries on (carriedRecord).
   */
  declaredRules: DeclaredRules[];
  /**
   * The record's status.pendingDeletions entries of objects the Bundle
   * still holds and no longer lists (carriedRecord): the status keeps those
   * whose prune the pass did not carry out (buildBundleStatus).
   */
  carriedPendingDeletions?: PendingDeletion[];
}

export function planBundle(input: PlanInput): BundlePlan {
  const plan = planWithoutRecord(input);
  const namespace = input.bundle.namespace;
  const keyOf = (o: { apiVersion: string; kind: string; metadata: { name: string } }): string =>
    identityKey(declaredIdentityOf(o, namespace));
  const carried = carriedRecord(input.countdownRecord, {
    listed: new Set(input.spec.resources.flatMap((r) => (r.spec.object !== undefined ? [keyOf(r.spec.object)] : []))),
    held: new Set(input.controlled.map(keyOf)),
  });
  const fromSpec = readableDeclaredRules(plan.declaredRules, input.countdownRecord, input.spec.deletionDefaults, namespace);
  return { ...plan, declaredRules: [...fromSpec, ...carried.declared], carriedPendingDeletions: carried.pending };
}

function planWithoutRecord(input: PlanInput): BundlePlan {
  const { bundle, spec } = input;
  const graph = resourceGraph(spec.resources);
  const order = topologicalOrder(graph);
  const countdown = {
    ...(input.stampSeal ? { stampSeal: input.stampSeal } : {}),
    ...(input.countdownRecord ? { countdownRecord: input.countdownRecord } : {}),
  };
  const base = {
    bundle,
    order,
    levels: levels(graph),
    deletionContext: { defaults: spec.deletionDefaults, bundleReady: input.bundleReady === true, ...countdown },
    declaredRules: declaredRulesOf(spec.resources),
  };

  const pruneRules = {
    now: input.now,
    selfUid: bundle.uid,
    bundleName: bundle.name,
    defaults: spec.deletionDefaults,
    ...(input.stampAt !== undefined ? { stampAt: input.stampAt } : {}),
    ...countdown,
    ...(input.listings !== undefined ? { listings: input.listings } : {}),
    ...(input.bundleReady !== undefined ? { bundleReady: input.bundleReady } : {}),
  };

  // A Bundle being deleted is never planned: its finalizer (core/bundle/finalize.ts) decides, and
  // the controller, `diff` and `pending` all stop before planBundle for it.

  // 1. Claims: what the Bundle lists and may hold, it takes hold of now, before any gate.
  const ownership = new Map(spec.resources.map((r) => [r.name, ownershipOf(r, input)] as const));
  const claims = planTakeHolds(spec.resources, ownership, input);

  // 2. An invalid spec changes nothing else in the cluster (cancelling a countdown only keeps an object).
  const issues = validateBundle(bundle, spec, input.kinds);
  if (issues.length > 0) return { ...base, issues, resources: [], takeHolds: claims, withdrawals: [], prune: [], withheld: [] };

  // 3. Each resource, dependencies first, so a resource sees its dependencies' decisions.
  const byName = new Map(spec.resources.map((r) => [r.name, r]));
  const claimed = new Set(claims.map((c) => c.name));
  const decided = new Map<string, ResourcePlan>();
  for (const name of order) {
    const resource = byName.get(name);
    if (resource === undefined) continue;
    decided.set(name, planResource(resource, graph, decided, input, ownership.get(name) ?? { kind: 'absent' }, claimed.has(name)));
  }
  const resources = order.flatMap((name) => decided.get(name) ?? []);

  // 4. Prune what left the spec, unless this pass could not apply everything. What another live Bundle lists is never pruned.
  const inSpec = new Set(listedObjectKeys({ metadata: bundle, spec }));
  const listedUids = new Set([...input.live.values()].flatMap((o) => (o.metadata.uid !== undefined ? [o.metadata.uid] : [])));
  // deleteWhen BundleReady opens on the count of ready resources the Bundle's status reports at its current generation
  // only while every resource reads ready this pass too: a count another status writer put there opens no gate (red team 10).
  const bundleReady =
    input.bundleReady === true && resources.every((r) => (r.action === 'apply' || r.action === 'adopt') && r.readiness.state === 'ready');
  const candidates = planPrune({ controlled: input.controlled, inSpec, listedUids, ...pruneRules, bundleReady });
  const holdReason = pruneHoldReason(resources);
  const withdrawals = planWithdrawals(input.claimed ?? [], inSpec, input);
  const plan: BundlePlan = {
    ...base,
    deletionContext: { ...base.deletionContext, bundleReady },
    issues,
    resources,
    takeHolds: claims,
    withdrawals,
    prune: candidates,
    withheld: [],
  };
  return withRequeue(holdReason === undefined ? plan : withholdPrunes(plan, holdReason), input.now);
}

/**
 * Moves every writing prune action (delete, mark, release) to `withheld`.
 * Also applied when an apply of the pass failed, before anything is pruned
 * (withholdAfterFailedApplies): nothing is deleted unless every apply went
 * through.
 */
export function withholdPrunes(plan: BundlePlan, reason: string): BundlePlan {
  const prune: PruneAction[] = [];
  const withheld: WithheldPrune[] = [...plan.withheld];
  for (const action of plan.prune) {
    if (action.action === 'delete' || action.action === 'mark' || action.action === 'release') withheld.push({ action, reason });
    else prune.push(action);
  }
  return { ...plan, prune, withheld };
}

/**
 * withholdPrunes for a pass in which these resources could not be applied
 * (the controller's applies, `diff`'s dry runs): the one wording of why.
 */
export function withholdAfterFailedApplies(plan: BundlePlan, failed: readonly string[]): BundlePlan {
  return failed.length === 0 ? plan : withholdPrunes(plan, `not pruning: ${failed.join(', ')} could not be applied`);
}

/**
 * Turns every prune action on an object another live Bundle lists (in
 * `claims`, read fresh right before pruning) into `listed-elsewhere`: an
 * object a live Bundle lists is never stamped or deleted.
 */
export function keepListedElsewhere(plan: BundlePlan, claims: ReadonlyMap<string, readonly BundleListing[]>): BundlePlan {
  const prune = plan.prune.map((action): PruneAction => {
    if (action.action !== 'delete' && action.action !== 'mark') return action;
    const t = action.target;
    const by = claims
      .get(
        objectKey({
          apiVersion: t.apiVersion,
          kind: t.kind,
          metadata: { name: t.name, ...(t.namespace !== undefined ? { namespace: t.namespace } : {}) },
        }),
      )
      ?.find((c) => c.uid !== plan.bundle.uid);
    if (by === undefined) return action;
    return {
      action: 'listed-elsewhere',
      target: t,
      by,
      message: `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name} is kept: Bundle ${by.name} lists it and takes it over`,
    };
  });
  return { ...plan, prune };
}

/**
 * The readiness of every resource this pass applied, read from the object
 * the API server answered the apply with: the same object a watch event
 * would deliver next, so the status can say Ready in the pass that applied
 * it rather than in the next one. A resource whose apply did not go through
 * (absent from `applied`) keeps its planned readiness.
 */
export function withAppliedReadiness(
  plan: BundlePlan,
  applied: ReadonlyMap<string, LiveObject>,
  crdReadiness: CrdReadinessTable,
  healthChecks?: HealthCheckTable,
): BundlePlan {
  if (applied.size === 0) return plan;
  const resources = plan.resources.map((r): ResourcePlan => {
    if (r.action !== 'apply' && r.action !== 'adopt') return r;
    const answer = applied.get(r.name);
    return answer === undefined ? r : { ...r, readiness: readinessOf(answer, crdReadiness, healthChecks) };
  });
  return { ...plan, resources };
}

function withRequeue(plan: BundlePlan, now: number): BundlePlan {
  const expiries = plan.prune.flatMap((a) => (a.action === 'mark' || a.action === 'wait' ? [a.deleteAtMs] : []));
  if (expiries.length === 0) return plan;
  return { ...plan, requeueAfterMs: Math.max(0, Math.min(...expiries) - now) };
}

/** Why pruning must wait this pass, if it must: some resource could not be applied. */
function pruneHoldReason(resources: readonly ResourcePlan[]): string | undefined {
  const failing = resources.filter(
    (r) =>
      r.action === 'error' ||
      r.action === 'conflict' ||
      (r.action === 'blocked' && r.blockedByError) ||
      ('readiness' in r && r.readiness.state === 'error'),
  );
  if (failing.length === 0) return undefined;
  return `not pruning while resources are failing: ${failing.map((r) => r.name).join(', ')}`;
}

function resourceGraph(resources: readonly Resource[]): DependencyGraph {
  return buildGraph(
    resources.map((r) => r.name),
    resources.flatMap((r) => (r.references ?? []).map((ref) => [r.name, ref.resource] as const)),
  );
}

function ownershipOf(resource: Resource, input: PlanInput): Ownership {
  const live = input.live.get(resource.name);
  const self: BundleListing = {
    name: input.bundle.name,
    uid: input.bundle.uid,
    ...(input.bundle.creationTimestamp !== undefined ? { creationTimestamp: input.bundle.creationTimestamp } : {}),
  };
  return decideOwnership({ live, self, listings: live === undefined ? [] : (input.listings?.get(objectKey(live)) ?? []) });
}
