/**
 * Reads for `bundlesmith tree` and `status`: the Bundle(s) as stored, the
 * live object at each resource's coordinates, and every object of the
 * namespace that carries an ownerReference (the collector's view).
 * Read-only: nothing here writes.
 */
import { BundleSchema, type Bundle } from '../api/bundle.js';
import { BUNDLE_RESOURCE_TYPE } from '../kube/bundle-resource.js';
import { preferredVersions } from '../kube/discovery.js';
import { errorMessage } from '../kube/errors.js';
import type { KubeObject } from '../kube/types.js';
import { EXIT_PROBLEMS } from './args.js';
import type { Cluster } from './cluster.js';
import { CliError, type CliIo } from './io.js';
import type { TreeObject } from './tree.js';

/** A stored Bundle, parsed; a spec the schema rejects still has metadata and status worth showing. */
export function parseStoredBundle(o: KubeObject): Bundle {
  const parsed = BundleSchema.safeParse(o);
  if (parsed.success) return parsed.data;
  const status = BundleSchema.shape.status.safeParse(o.status);
  return BundleSchema.parse({
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: o.metadata,
    spec: { resources: [] },
    ...(status.success && status.data ? { status: status.data } : {}),
  });
}

export async function readBundle(cluster: Cluster, namespace: string, name: string): Promise<Bundle> {
  const o = await cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
  if (!o) throw new CliError(`Bundle ${namespace}/${name} not found`, EXIT_PROBLEMS);
  return parseStoredBundle(o);
}

/** Bundles of one namespace, or of every namespace. */
export async function readBundles(cluster: Cluster, namespace: string | undefined): Promise<Bundle[]> {
  const { items } = await cluster.client.list(BUNDLE_RESOURCE_TYPE, namespace);
  return items
    .map(parseStoredBundle)
    .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
}

/** The live object at each resource's coordinates (metadata only), by resource name. */
export async function readLiveObjects(cluster: Cluster, bundle: Bundle): Promise<Map<string, TreeObject>> {
  const live = new Map<string, TreeObject>();
  for (const r of bundle.spec.resources) {
    const obj = r.spec.object;
    if (!obj) continue;
    const rt = await cluster.discovery.resolve(obj.apiVersion, obj.kind);
    if (!rt?.namespaced) continue;
    const found = await cluster.client.tryGet(rt, bundle.metadata.namespace, obj.metadata.name, { metadataOnly: true });
    if (found) live.set(r.name, { ...found, apiVersion: obj.apiVersion, kind: obj.kind });
  }
  return live;
}

/**
 * Every object of the namespace that carries an ownerReference, over every
 * namespaced kind the server lists (metadata only, as kubectl-tree reads
 * them). A kind that cannot be listed (RBAC) is skipped with a note.
 */
export async function readOwnedObjects(cluster: Cluster, namespace: string, io: CliIo): Promise<TreeObject[]> {
  const kinds = preferredVersions(cluster.discovery.resources()).filter(
    (rt) => rt.namespaced && rt.verbs.includes('list') && !rt.plural.includes('/'),
  );
  const out: TreeObject[] = [];
  const skipped: string[] = [];
  for (const rt of kinds) {
    try {
      const { items } = await cluster.client.list(rt, namespace, { metadataOnly: true });
      for (const o of items)
        if ((o.metadata.ownerReferences ?? []).length > 0) out.push({ ...o, apiVersion: rt.apiVersion, kind: rt.kind });
    } catch (err) {
      skipped.push(`${rt.plural}${rt.group ? `.${rt.group}` : ''} (${errorMessage(err)})`);
    }
  }
  if (skipped.length > 0) io.err(`note: could not list ${skipped.join(', ')}; what they own is not shown`);
  return out;
}
