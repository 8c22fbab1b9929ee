/**
 * What the CLI reads to decide as the controller decides: the same sources
 * (objects at the spec's coordinates, everything the Bundle controls in the
 * kinds it spans, the namespace's Bundles, the CRD readiness table, the API
 * server's time), read from the API instead of the controller's caches, and
 * handed to the same core/bundle buildPlanInput.
 */
import { envSourcesOf } from '../core/bundle/workload-env-hash.js';
import { readEnvSources, type SourceKind } from '../kube/env-sources.js';
import type { BundleSpec } from '../api/bundle.js';
import type { CrdReadinessTable } from '../core/bundle/kinds.js';
import { isControlledBy, kindKey, type LiveObject } from '../core/bundle/objects.js';
import { crdReadinessTable, liveByResource, type BundleToPlan, type PlanSources } from '../core/bundle/plan-input.js';
import { CRD_RESOURCE } from '../kube/crds.js';
import { resolveGroupKinds, resolveSpecKinds } from '../kube/discovery.js';
import { inventoryKinds } from '../core/bundle/kind-inventory.js';
import { errorMessage } from '../kube/errors.js';
import type { KubeObject, ResourceType } from '../kube/types.js';
import { EXIT_PROBLEMS } from './args.js';
import type { Cluster } from './cluster.js';
import { CliError, type CliIo } from './io.js';

/** The readiness annotations of the cluster's CRDs; empty (and said on stderr) when CRDs cannot be listed. */
export async function readCrdReadiness(cluster: Cluster, io: CliIo): Promise<CrdReadinessTable> {
  try {
    return crdReadinessTable((await cluster.client.list(CRD_RESOURCE, undefined, { metadataOnly: false })).items);
  } catch (err) {
    io.err(
      `cannot list CustomResourceDefinitions (${errorMessage(err)}): custom resources' readiness is read without their CRD annotations`,
    );
    return new Map();
  }
}

/** The API server's time as the controller takes it: expiry on a lower bound, new stamps on an upper bound. */
export function serverNow(cluster: Cluster): { now: number; stampAt: number } {
  const now = cluster.client.serverTime.lowerBound();
  const stampAt = cluster.client.serverTime.upperBound();
  if (now === undefined || stampAt === undefined)
    throw new CliError('the API server sent no Date header: its time is unknown', EXIT_PROBLEMS);
  return { now, stampAt };
}

/** Resource types of the kind inventory (status.managedKinds) at the versions served now, skipping what the server does not serve. */
export function resolveKinds(cluster: Cluster, keys: readonly string[]): Promise<ResourceType[]> {
  return resolveGroupKinds(cluster.discovery, inventoryKinds(keys));
}

/** Every object of these types in the namespace whose controller is the Bundle with this uid. */
export async function listControlled(
  cluster: Cluster,
  namespace: string,
  bundleUid: string,
  types: readonly ResourceType[],
  io: CliIo,
): Promise<LiveObject[]> {
  const out: LiveObject[] = [];
  const seen = new Set<string>();
  for (const rt of types) {
    const id = `${rt.group}/${rt.plural}`; // one list per resource, whatever versions it was named at
    if (seen.has(id) || !rt.namespaced || !rt.verbs.includes('list')) continue;
    seen.add(id);
    io.err(`listing ${rt.plural}${rt.group ? `.${rt.group}` : ''} in ${namespace}`);
    const { items } = await cluster.client.list(rt, namespace);
    for (const item of items) if (isControlledBy(item, bundleUid)) out.push(item);
  }
  return out;
}

/** managedKinds from a live Bundle's status, read leniently. */
export function managedKindsOf(bundle: KubeObject | undefined): string[] {
  const kinds = (bundle?.status as { managedKinds?: unknown } | undefined)?.managedKinds;
  return Array.isArray(kinds) ? kinds.filter((k): k is string => typeof k === 'string') : [];
}

export interface ReadSources {
  sources: PlanSources;
  /** The resource type of each spec kind discovery resolved, by kindKey. */
  types: Map<string, ResourceType>;
}

/**
 * Reads what the controller's pass would see for `bundle`: the spec's kinds
 * (discovery), the object at each resource's coordinates, and, when the
 * Bundle exists (`controls`), what it controls in the spec's kinds and in
 * `managedKinds`.
 */
export async function readPlanSources(
  cluster: Cluster,
  args: {
    bundle: BundleToPlan;
    controls: boolean;
    managedKinds: readonly string[];
    bundles: readonly KubeObject[];
    crdReadiness: CrdReadinessTable;
  },
  io: CliIo,
): Promise<ReadSources> {
  const { bundle } = args;
  const namespace = bundle.metadata.namespace;
  const spec: BundleSpec = bundle.spec;
  const { kinds, types } = await resolveSpecKinds(
    cluster.discovery,
    spec.resources.flatMap((r) => (r.spec.object ? [r.spec.object] : [])),
  );
  const objects: LiveObject[] = [];
  for (const r of spec.resources) {
    const o = r.spec.object;
    const rt = o ? types.get(kindKey(o.apiVersion, o.kind)) : undefined;
    if (!o || !rt?.namespaced) continue;
    const found = await cluster.client.tryGet(rt, namespace, o.metadata.name);
    if (found) objects.push(found);
  }
  // The ConfigMaps and Secrets the workloads read, for their envRefHash, as the controller reads them.
  const atOwn = (kind: SourceKind, name: string) =>
    objects.find((o) => o.apiVersion === 'v1' && o.kind === kind && o.metadata.name === name);
  const envSources = await readEnvSources(
    cluster.client,
    namespace,
    envSourcesOf(spec.resources, liveByResource(bundle, kinds, objects)),
    atOwn,
    8,
  );
  if (args.controls)
    objects.push(
      ...(await listControlled(
        cluster,
        namespace,
        bundle.metadata.uid,
        [...types.values(), ...(await resolveKinds(cluster, args.managedKinds))],
        io,
      )),
    );
  // Taken after the reads, as the controller takes it after its caches synced.
  const { now, stampAt } = serverNow(cluster);
  return { sources: { bundle, kinds, crdReadiness: args.crdReadiness, objects, bundles: args.bundles, now, stampAt, envSources }, types };
}
