/**
 * The fetch step of a Bundle pass: resolve the spec's kinds, declare its
 * coordinates (so events on them wake the Bundle), make sure every kind it
 * may hold (spec and status.managedKinds) is watched, listed and labelled,
 * and read the objects at its coordinates. The operator's own Bundles read
 * what the cache holds (what bundlesmith applied) and GET the rest; a Bundle
 * with an identity GETs everything as that identity (what it may not read,
 * it may not use: a forbidden read is that resource's failure).
 */
import type { Bundle } from '../../api/bundle.js';
import type { KubeObjectManifest } from '../../api/resource.js';
import { Labels } from '../../api/names.js';
import type { ActingIdentity } from '../../core/bundle/identity.js';
import type { KindTable } from '../../core/bundle/kinds.js';
import { isRequestableName, kindKey, type LiveObject } from '../../core/bundle/objects.js';
import type { ActionFailure } from '../../core/bundle/status.js';
import { resolveGroupKinds, resolveSpecKinds, type Discovery } from '../../kube/discovery.js';
import { inventoryKinds } from '../../core/bundle/kind-inventory.js';
import { isForbidden } from '../../kube/errors.js';
import type { ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import { forbiddenFailure, forEachBounded } from './act-deps.js';
import type { BundleApi } from './api.js';
import { WatchNotSynced, type BundleKey, type ObjectCache } from './object-cache.js';
import type { UnlabelledObjects } from './unlabelled.js';

export interface GatherDeps {
  discovery: Discovery;
  objects: ObjectCache;
  unlabelled: UnlabelledObjects;
  /** Reads in flight at once. */
  concurrency: number;
  log: Logger;
}

export async function gatherBundle(
  d: GatherDeps,
  key: BundleKey,
  bundle: Bundle,
  identity: ActingIdentity,
  api: BundleApi,
): Promise<Gathered> {
  const namespace = bundle.metadata.namespace;
  const specObjects = bundle.spec.resources.flatMap((r) => (r.spec.object ? [r.spec.object] : []));
  const { kinds, types } = await resolveSpecKinds(d.discovery, specObjects);
  d.objects.declare(
    key,
    specObjects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, namespace, name: o.metadata.name })),
  );
  const managed = await resolveGroupKinds(d.discovery, inventoryKinds(bundle.status?.managedKinds));
  // One watch per group and kind: a recorded kind the spec names at another version is the same objects.
  const specKinds = new Set([...types.values()].map((rt) => `${rt.group}/${rt.kind}`));
  // Every kind's watch is started before any is waited for; one that has not listed stops the pass (WatchNotSynced)
  // and the Bundle is woken when it lists.
  let notSynced: WatchNotSynced | undefined;
  for (const rt of [...types.values(), ...managed.filter((m) => !specKinds.has(`${m.group}/${m.kind}`))]) {
    if (!rt.namespaced) continue;
    try {
      await d.objects.ensure(rt, key);
    } catch (err) {
      if (!(err instanceof WatchNotSynced)) throw err;
      notSynced ??= err;
      continue;
    }
    await d.unlabelled.labelOnce(api, identity.kind === 'operator' ? '' : identity.user, namespace, rt, d.log);
  }
  if (notSynced) throw notSynced;
  const cached =
    identity.kind === 'operator' ? (rt: ResourceType, objectName: string) => d.objects.get(rt, namespace, objectName) : undefined;
  return { specObjects, kinds, types, ...(await readAtCoordinates(api, bundle, types, d.concurrency, cached)) };
}

/**
 * What the cache says references this Bundle (prune candidates, claims).
 * For a Bundle with an identity, objects at its own coordinates come only
 * from the identity's reads, never from the operator's cache.
 */
export function controlledElsewhere(
  objects: ObjectCache,
  bundle: Bundle,
  identity: ActingIdentity,
  specObjects: readonly KubeObjectManifest[],
  types: ReadonlyMap<string, ResourceType>,
): LiveObject[] {
  const referencing = objects.referencing(bundle.metadata.uid);
  if (identity.kind === 'operator') return referencing;
  const declared = new Set(
    specObjects.flatMap((o) => (types.has(kindKey(o.apiVersion, o.kind)) ? [`${kindKey(o.apiVersion, o.kind)}|${o.metadata.name}`] : [])),
  );
  return referencing.filter(
    (o) =>
      !declared.has(`${kindKey(o.apiVersion, o.kind)}|${o.metadata.name}`) || (o.metadata.namespace ?? '') !== bundle.metadata.namespace,
  );
}

export interface Gathered {
  specObjects: KubeObjectManifest[];
  kinds: KindTable;
  types: Map<string, ResourceType>;
  atCoordinates: LiveObject[];
  /** By resource name: reads the Bundle's identity may not make (those resources are neither applied nor used). */
  readFailures: Map<string, ActionFailure>;
  /** Objects at the coordinates that no watch of ours sees change (see readAtCoordinates). */
  unwatched: number;
}

/** Misses of one kind from which one metadata list of the namespace costs less than a GET each (issue 28). */
const LIST_FROM_MISSES = 16;

/**
 * The objects at a Bundle's coordinates: from `cached` when it has them,
 * else with a GET through the Bundle's port (so as its identity); 403s
 * become those resources' failures. Where many objects of one kind are not
 * cached (a new Bundle), one metadata list of the kind in the namespace
 * says which exist, and only those are read: a name the list does not hold
 * reads as absent, as a GET's 404 would (the list is as fresh a read). A
 * list that fails (the identity may get but not list) falls back to a GET
 * each. `unwatched`: objects read that the caches do not watch (no managed
 * label: an uncontrolled object, another controller's).
 */
async function readAtCoordinates(
  api: BundleApi,
  bundle: Bundle,
  types: ReadonlyMap<string, ResourceType>,
  concurrency: number,
  cached: ((rt: ResourceType, name: string) => LiveObject | undefined) | undefined,
): Promise<{ atCoordinates: LiveObject[]; readFailures: Map<string, ActionFailure>; unwatched: number }> {
  const namespace = bundle.metadata.namespace;
  const atCoordinates: LiveObject[] = [];
  const readFailures = new Map<string, ActionFailure>();
  let unwatched = 0;
  const misses: { name: string; rt: ResourceType; objectName: string }[] = [];
  for (const r of bundle.spec.resources) {
    const o = r.spec.object;
    const rt = o ? types.get(kindKey(o.apiVersion, o.kind)) : undefined;
    // A name no request can carry ("..", "a/b") holds nothing: validation refuses the spec, nothing is read.
    if (!o || !rt?.namespaced || !isRequestableName(o.metadata.name)) continue;
    const hit = cached?.(rt, o.metadata.name);
    if (hit) atCoordinates.push(hit);
    else misses.push({ name: r.name, rt, objectName: o.metadata.name });
  }
  const existing = await existingNames(api, namespace, misses);
  const reads = misses.filter((m) => existing.get(m.rt)?.has(m.objectName) ?? true);
  await forEachBounded(reads, concurrency, async (r) => {
    try {
      const found = await api.tryGet(r.rt, namespace, r.objectName);
      if (found) atCoordinates.push(found);
      if (found && found.metadata.labels?.[Labels.managed] !== 'true') unwatched++;
    } catch (err) {
      if (!isForbidden(err)) throw err;
      readFailures.set(r.name, forbiddenFailure(err));
    }
  });
  return { atCoordinates, readFailures, unwatched };
}

/** The names that exist of each kind with LIST_FROM_MISSES misses or more (one metadata list each); a kind absent here is read by GETs. */
async function existingNames(
  api: BundleApi,
  namespace: string,
  misses: readonly { rt: ResourceType }[],
): Promise<Map<ResourceType, Set<string>>> {
  const count = new Map<ResourceType, number>();
  for (const m of misses) count.set(m.rt, (count.get(m.rt) ?? 0) + 1);
  const names = new Map<ResourceType, Set<string>>();
  for (const [rt, n] of count) {
    if (n < LIST_FROM_MISSES) continue;
    try {
      const { items } = await api.list(rt, namespace, { metadataOnly: true });
      names.set(rt, new Set(items.map((o) => o.metadata.name)));
    } catch {
      // Not allowed to list, or the list failed: a GET each, as for a few misses.
    }
  }
  return names;
}
