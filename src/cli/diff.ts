/**
 * `bundlesmith diff FILE`: what applying each Bundle in FILE would do. Every
 * object goes through a server-side dry run of the apply the controller
 * would send (same manifest, owner references, field manager), and the live
 * Bundle's controlled objects that the new spec drops are listed as deletions.
 */
import { API_VERSION, Annotations, FIELD_MANAGER } from '../api/names.js';
import type { BundleSpec } from '../api/bundle.js';
import type { KindInfo, KindTable } from '../core/bundle/kinds.js';
import { buildDesired } from '../core/bundle/desired.js';
import { controllerOf, isRecord, kindKey, objectKey, type LiveObject } from '../core/bundle/objects.js';
import { resolveObject } from '../core/bundle/references.js';
import { errorMessage } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { BUNDLE_RESOURCE_TYPE } from '../controllers/bundle/bundle-resource.js';
import { formatObjectRef } from './args.js';
import type { Cluster } from './cluster.js';
import type { CliIo } from './io.js';
import type { BundleManifest } from './validate.js';

export type DiffAction = 'create' | 'change' | 'unchanged' | 'adopt' | 'refuse' | 'invalid' | 'unresolved' | 'cancel-deletion' | 'delete' | 'soft-delete';

/** Actions that mean the apply would not go through as written. */
export const PROBLEM_ACTIONS: ReadonlySet<DiffAction> = new Set(['refuse', 'invalid']);

export interface DiffEntry {
  action: DiffAction;
  apiVersion: string;
  kind: string;
  name: string;
  /** Resource name in the Bundle, when the object is listed. */
  resource?: string;
  detail?: string;
}

export interface BundleDiff {
  namespace: string;
  name: string;
  exists: boolean;
  entries: DiffEntry[];
}

/** Server-owned fields that say nothing about what an apply changes. */
const IGNORED_METADATA = new Set(['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid', 'selfLink']);

/**
 * Dotted paths where `after` differs from `before`, down to `depth` levels
 * (deeper differences are reported at that level). status and server-owned
 * metadata are ignored.
 */
export function changedPaths(before: unknown, after: unknown, depth = 3, prefix = ''): string[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  if (!isRecord(before) || !isRecord(after) || depth === 0) return [prefix || '(root)'];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const out: string[] = [];
  for (const key of keys) {
    if (prefix === '' && key === 'status') continue;
    if (prefix === 'metadata' && IGNORED_METADATA.has(key)) continue;
    out.push(...changedPaths(before[key], after[key], depth - 1, prefix === '' ? key : `${prefix}.${key}`));
  }
  return out;
}

/**
 * What applying one object would do, given the live object (if any) and the
 * dry run's result: `refuse` when another controller owns it, `adopt` when
 * no one does, otherwise `create`, `change` or `unchanged`.
 */
export function classifyApply(input: { live: LiveObject | undefined; dryRun: unknown; bundleUid: string | undefined }): { action: DiffAction; detail?: string } {
  const { live, dryRun, bundleUid } = input;
  if (live === undefined) return { action: 'create' };
  const conflict = controllerConflict(live, bundleUid);
  if (conflict !== undefined) return { action: 'refuse', detail: conflict };
  const controller = controllerOf(live);
  const paths = changedPaths(live, dryRun);
  const summary = paths.length === 0 ? undefined : paths.length > 6 ? `${paths.slice(0, 6).join(', ')} and ${paths.length - 6} more` : paths.join(', ');
  if (controller === undefined) return summary ? { action: 'adopt', detail: `then changes ${summary}` } : { action: 'adopt' };
  if (live.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined) {
    return { action: 'cancel-deletion', detail: `pending since ${live.metadata.annotations[Annotations.deletionTimestamp]}; listing it again keeps it` };
  }
  return summary ? { action: 'change', detail: summary } : { action: 'unchanged' };
}

/** Why the Bundle may not take the live object (another controller owns it); undefined when it may. */
export function controllerConflict(live: LiveObject, bundleUid: string | undefined): string | undefined {
  const controller = controllerOf(live);
  if (controller === undefined || (bundleUid !== undefined && controller.uid === bundleUid)) return undefined;
  return `controlled by ${controller.kind} ${controller.name}`;
}

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

export async function diffBundle(cluster: Cluster, manifest: BundleManifest, io: CliIo): Promise<BundleDiff> {
  const { client, discovery } = cluster;
  const { namespace, name, spec } = manifest;
  const liveBundle = await client.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
  const bundleUid = liveBundle?.metadata.uid;
  const entries: DiffEntry[] = [];
  const liveByResource = new Map<string, LiveObject>();
  const desiredKeys = new Set<string>();

  for (const resource of spec.resources) {
    const object = resource.spec.object;
    if (!object) continue;
    const base = { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, resource: resource.name };
    desiredKeys.add(objectKey({ ...object, metadata: { ...object.metadata, namespace } }));
    io.err(`dry-run apply ${formatObjectRef(object.apiVersion, object.kind, object.metadata.name)}`);
    const rt = await discovery.resolve(object.apiVersion, object.kind);
    if (!rt) {
      entries.push({ ...base, action: 'invalid', detail: `${object.apiVersion} ${object.kind} is not served by the API server` });
      continue;
    }
    const live = (await client.tryGet(rt, namespace, object.metadata.name)) as LiveObject | undefined;
    if (live) liveByResource.set(resource.name, live);
    const resolved = resolveObject(object, resource, (other) => liveByResource.get(other));
    if (!resolved.ok) {
      entries.push({ ...base, action: 'unresolved', detail: `${live ? 'exists' : 'would be created'} once its references resolve: ${resolved.errors.join('; ')}` });
      continue;
    }
    const dependencies = (resource.references ?? []).flatMap((ref) => liveByResource.get(ref.resource) ?? []);
    // A Bundle not created yet has no uid: any placeholder shows the same owner reference shape.
    const desired = buildDesired({ bundle: { name, namespace, uid: bundleUid ?? '00000000-0000-0000-0000-000000000000' }, object: resolved.object, dependencies });
    const conflict = live ? controllerConflict(live, bundleUid) : undefined;
    if (conflict !== undefined) {
      entries.push({ ...base, action: 'refuse', detail: conflict });
      continue;
    }
    let dryRun: KubeObject;
    try {
      dryRun = await client.apply(rt, desired.manifest, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
    } catch (err) {
      entries.push({ ...base, action: 'invalid', detail: errorMessage(err) });
      continue;
    }
    entries.push({ ...base, ...classifyApply({ live, dryRun, bundleUid }) });
  }

  if (liveBundle) entries.push(...(await prunes(cluster, liveBundle, spec, desiredKeys, io)));
  return { namespace, name, exists: liveBundle !== undefined, entries };
}

/** The live Bundle's controlled objects that the new spec no longer lists. */
async function prunes(cluster: Cluster, liveBundle: KubeObject, spec: BundleSpec, desiredKeys: ReadonlySet<string>, io: CliIo): Promise<DiffEntry[]> {
  const namespace = liveBundle.metadata.namespace ?? '';
  const kinds = new Set<string>(((liveBundle.status as { managedKinds?: string[] } | undefined)?.managedKinds ?? []).filter((k) => typeof k === 'string'));
  for (const r of spec.resources) if (r.spec.object) kinds.add(`${r.spec.object.apiVersion}/${r.spec.object.kind}`);
  const entries: DiffEntry[] = [];
  for (const key of [...kinds].sort()) {
    const slash = key.lastIndexOf('/');
    const rt = await cluster.discovery.resolve(key.slice(0, slash), key.slice(slash + 1));
    if (!rt || !rt.verbs.includes('list')) continue;
    io.err(`listing ${rt.plural} controlled by Bundle ${namespace}/${liveBundle.metadata.name}`);
    const { items } = await cluster.client.list(rt, namespace, { metadataOnly: true });
    for (const item of items) {
      const controller = controllerOf(item);
      if (controller?.uid !== liveBundle.metadata.uid || controller.apiVersion !== API_VERSION) continue;
      if (desiredKeys.has(objectKey(item))) continue;
      const annotations = item.metadata.annotations ?? {};
      const delay = annotations[Annotations.deletionDelay];
      const stamp = annotations[Annotations.deletionTimestamp];
      const base = { apiVersion: rt.apiVersion, kind: rt.kind, name: item.metadata.name };
      if (delay === undefined) entries.push({ ...base, action: 'delete' });
      else entries.push({ ...base, action: 'soft-delete', detail: stamp ? `already pending since ${stamp} (deletionDelay ${delay})` : `kept for deletionDelay ${delay}, then deleted` });
    }
  }
  return entries;
}

export function formatDiff(diff: BundleDiff): string[] {
  const lines = [`Bundle ${diff.namespace}/${diff.name} (${diff.exists ? 'exists' : 'would be created'})`];
  const width = Math.max(...diff.entries.map((e) => e.action.length), 6);
  for (const e of diff.entries) {
    lines.push(`  ${e.action.padEnd(width)}  ${formatObjectRef(e.apiVersion, e.kind, e.name)}${e.detail ? `: ${e.detail}` : ''}`);
  }
  if (diff.entries.length === 0) lines.push('  (no objects)');
  return lines;
}
