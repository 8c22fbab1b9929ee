/**
 * `bundlesmith diff FILE`: what the operator will do when each Bundle in FILE
 * is applied. The CLI reads what the controller's pass would see, builds the
 * same PlanInput (core/bundle buildPlanInput) and runs the same planBundle;
 * the entries are the plan's actions, in words (describe-plan.ts). A
 * server-side dry run of each apply the plan would send adds the fields it
 * changes (and catches what the API server would reject, which holds the
 * prune back as in the controller).
 */
import { FIELD_MANAGER } from '../api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../kube/bundle-resource.js';
import { BundleSpecSchema, type BundleSpec } from '../api/bundle.js';
import type { CrdReadinessTable, KindInfo, KindTable } from '../core/bundle/kinds.js';
import { kindKey } from '../core/bundle/objects.js';
import { buildPlanInput, type BundleToPlan } from '../core/bundle/plan-input.js';
import { planBundle, withholdAfterFailedApplies } from '../core/bundle/plan.js';
import { errorMessage } from '../kube/errors.js';
import { formatObjectRef } from './args.js';
import type { Cluster } from './cluster.js';
import { managedKindsOf, readPlanSources } from './cluster-state.js';
import { describePlan, type DiffEntry, type DryRunResult } from './describe-plan.js';
import { fieldChanges, formatFieldChange, maskSecretValues, redactChanges } from './field-changes.js';
import { redact } from '../core/bundle/redact.js';
import type { CliIo } from './io.js';
import type { BundleManifest } from './validate.js';

export interface BundleDiff {
  namespace: string;
  name: string;
  exists: boolean;
  entries: DiffEntry[];
}

/** The uid a Bundle not created yet is planned with: it controls nothing, and its owner references have this shape. */
export const NEW_BUNDLE_UID = '00000000-0000-0000-0000-000000000000';

/** A kind table from discovery, for the semantic checks with the cluster's real scopes. */
export function discoveryKindTable(cluster: Cluster, spec: BundleSpec): KindTable {
  const table = new Map<string, KindInfo>();
  for (const r of spec.resources) {
    const o = r.spec.object;
    if (!o) continue;
    const rt = cluster.discovery.lookup(o.apiVersion, o.kind);
    if (rt) table.set(kindKey(o.apiVersion, o.kind), { namespaced: rt.namespaced, plural: rt.plural });
  }
  return table;
}

/** The Bundle to plan for `manifest`, as it will stand once applied over `live` (if any). */
export function bundleToPlan(
  manifest: BundleManifest,
  live: { metadata: { uid?: string; generation?: number; creationTimestamp?: string } } | undefined,
): BundleToPlan {
  return {
    metadata: {
      name: manifest.name,
      namespace: manifest.namespace,
      uid: live?.metadata.uid ?? NEW_BUNDLE_UID,
      ...(live?.metadata.creationTimestamp !== undefined ? { creationTimestamp: live.metadata.creationTimestamp } : {}),
    },
    spec: manifest.spec,
  };
}

export async function diffBundle(
  cluster: Cluster,
  manifest: BundleManifest,
  crdReadiness: CrdReadinessTable,
  io: CliIo,
): Promise<BundleDiff> {
  const { namespace, name } = manifest;
  const liveBundle = await cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
  if (liveBundle?.metadata.deletionTimestamp !== undefined) {
    return {
      namespace,
      name,
      exists: true,
      entries: [
        {
          apiVersion: BUNDLE_RESOURCE_TYPE.apiVersion,
          kind: BUNDLE_RESOURCE_TYPE.kind,
          name,
          action: 'invalid',
          detail: `the Bundle is being deleted (since ${liveBundle.metadata.deletionTimestamp}): applying it changes nothing until it is gone`,
        },
      ],
    };
  }
  io.err(`reading Bundles in ${namespace}`);
  const { items: bundles } = await cluster.client.list(BUNDLE_RESOURCE_TYPE, namespace);
  const bundle = bundleToPlan(manifest, liveBundle);
  const { sources, types } = await readPlanSources(
    cluster,
    { bundle, controls: liveBundle !== undefined, managedKinds: managedKindsOf(liveBundle), bundles, crdReadiness },
    io,
  );
  const input = buildPlanInput(sources);
  let plan = planBundle(input);

  // The applies the controller would send, as dry runs.
  const dryRuns = new Map<string, DryRunResult>();
  if (plan.issues.length === 0) {
    for (const rp of plan.resources) {
      // A bookkeeping patch (drift controls) writes no field of the user's: there is nothing to dry-run.
      if ((rp.action !== 'apply' && rp.action !== 'adopt') || !rp.apply.needed || rp.apply.bookkeeping !== undefined) continue;
      const desired = rp.apply.desired;
      const rt = types.get(kindKey(desired.apiVersion, desired.kind));
      if (!rt) continue;
      io.err(`dry-run apply ${formatObjectRef(desired.apiVersion, desired.kind, desired.metadata.name)}`);
      try {
        const after = await cluster.client.apply(rt, desired, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
        const changes = maskSecretValues(desired, fieldChanges(input.live.get(rp.name), after));
        dryRuns.set(rp.name, { ok: true, changes: redactChanges(changes, rp.apply.redactions) });
      } catch (err) {
        // The API server echoes a refused value: one a reference read (from a Secret, say) is blanked, as the operator does.
        dryRuns.set(rp.name, { ok: false, error: redact(errorMessage(err), rp.apply.redactions) });
      }
    }
  }
  // As in the controller: nothing is pruned unless every apply goes through.
  plan = withholdAfterFailedApplies(
    plan,
    [...dryRuns].filter(([, r]) => !r.ok).map(([n]) => n),
  );
  const entries = describePlan(input, plan, dryRuns);
  const specChange = liveBundle === undefined ? undefined : bundleSpecEntry(manifest, liveBundle.spec);
  return { namespace, name, exists: liveBundle !== undefined, entries: specChange ? [specChange, ...entries] : entries };
}

/**
 * The Bundle's own spec change (deletionDefaults, serviceAccountName), read
 * as the operator reads both. Its resources are not shown here: each listed
 * object has its own entry, where a Secret's values are masked.
 */
function bundleSpecEntry(manifest: BundleManifest, liveSpec: unknown): DiffEntry | undefined {
  const parsed = BundleSpecSchema.safeParse(liveSpec ?? {});
  const live: Partial<BundleSpec> = parsed.success ? parsed.data : {};
  const { resources: liveResources, ...liveRest } = live;
  const { resources, ...rest } = manifest.spec;
  const changes = fieldChanges({ spec: liveRest }, { spec: rest }, 3);
  const resourcesChange = JSON.stringify(liveResources ?? []) !== JSON.stringify(resources);
  if (changes.length === 0 && !resourcesChange) return undefined;
  const detail = resourcesChange ? "the Bundle's spec: its resources (each object's entry says what changes)" : "the Bundle's spec";
  return {
    apiVersion: BUNDLE_RESOURCE_TYPE.apiVersion,
    kind: BUNDLE_RESOURCE_TYPE.kind,
    name: manifest.name,
    action: 'change',
    detail,
    ...(changes.length > 0 ? { changes } : {}),
  };
}

export function formatDiff(diff: BundleDiff): string[] {
  const lines = [`Bundle ${diff.namespace}/${diff.name} (${diff.exists ? 'exists' : 'would be created'})`];
  const width = Math.max(...diff.entries.map((e) => e.action.length), 6);
  for (const e of diff.entries) {
    lines.push(`  ${e.action.padEnd(width)}  ${formatObjectRef(e.apiVersion, e.kind, e.name)}${e.detail ? `: ${e.detail}` : ''}`);
    for (const c of e.changes ?? []) lines.push(`  ${''.padEnd(width)}    ${formatFieldChange(c)}`);
  }
  if (diff.entries.length === 0) lines.push('  (no objects)');
  return lines;
}
