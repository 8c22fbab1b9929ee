/**
 * The Bundle controller's narrow API port: the verbs its act phase and its
 * finalizer use, and nothing else (as GcApi is for the collector). The
 * operator backs it with KubeClient and Discovery (kubeBundleApi); the step
 * tests with a small in-memory double.
 */
import type { ApplyOptions, DeleteOptions, KubeClient, PatchOptions, PatchType } from '../../kube/client.js';
import type { Discovery, GroupKindLookup } from '../../kube/discovery.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { FIELD_MANAGER } from '../../api/names.js';
import type { ActingIdentity } from '../../core/bundle/identity.js';

export interface BundleApi {
  /** The resource type of apiVersion + kind; undefined when the server does not serve it. */
  resolve(apiVersion: string, kind: string): Promise<ResourceType | undefined>;
  /** A group and kind at the version the server serves now (see Discovery.resolveGroupKind). */
  resolveGroupKind(group: string, kind: string): Promise<GroupKindLookup>;
  tryGet(rt: ResourceType, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
  list(
    rt: ResourceType,
    namespace: string | undefined,
    opts?: { metadataOnly?: boolean; labelSelector?: string },
  ): Promise<{ items: KubeObject[] }>;
  /** Server-side apply. */
  apply(rt: ResourceType, manifest: Record<string, unknown>, opts: ApplyOptions): Promise<KubeObject>;
  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts?: PatchOptions,
  ): Promise<KubeObject>;
  /** Always with a uid precondition (DeleteOptions requires it). */
  delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<'deleted' | 'not-found'>;
  replaceStatus(rt: ResourceType, obj: KubeObject): Promise<KubeObject>;
}

/**
 * The port over the API. `objectsClient` makes the requests for the Bundle's
 * objects (an impersonating client when the Bundle has an identity of its
 * own); the Bundle itself (fresh reads, the namespace's Bundle list, status)
 * is always the operator's, through `client`.
 */
export function kubeBundleApi(
  client: KubeClient,
  discovery: Pick<Discovery, 'resolve' | 'resolveGroupKind'>,
  objectsClient: KubeClient = client,
): BundleApi {
  const forType = (rt: ResourceType): KubeClient => (isBundleType(rt) ? client : objectsClient);
  return {
    resolve: (apiVersion, kind) => discovery.resolve(apiVersion, kind),
    resolveGroupKind: (group, kind) => discovery.resolveGroupKind(group, kind),
    tryGet: (rt, namespace, name) => forType(rt).tryGet(rt, namespace, name),
    list: (rt, namespace, opts) => forType(rt).list(rt, namespace, opts),
    apply: (rt, manifest, opts) => forType(rt).apply(rt, manifest, opts),
    patch: (rt, namespace, name, patch, type, opts) => forType(rt).patch(rt, namespace, name, patch, type, opts),
    delete: (rt, namespace, name, opts) => forType(rt).delete(rt, namespace, name, opts),
    // Named in managedFields as the operator (kubectl's convention), not "unknown".
    replaceStatus: (rt, obj) => client.replaceStatus(rt, obj, { fieldManager: FIELD_MANAGER }),
  };
}

/**
 * The ports of every identity Bundles act as: the operator's own, and one per
 * impersonated ServiceAccount (built on first use; they share the
 * operator's connections and rate limit).
 */
export class BundleApis {
  private readonly own: BundleApi;
  private readonly impersonated = new Map<string, BundleApi>();

  constructor(
    private readonly client: KubeClient,
    private readonly discovery: Pick<Discovery, 'resolve' | 'resolveGroupKind'>,
  ) {
    this.own = kubeBundleApi(client, discovery);
  }

  for(identity: ActingIdentity): BundleApi {
    if (identity.kind === 'operator') return this.own;
    let api = this.impersonated.get(identity.user);
    if (!api) {
      api = kubeBundleApi(this.client, this.discovery, this.client.impersonating({ user: identity.user }));
      this.impersonated.set(identity.user, api);
    }
    return api;
  }
}

function isBundleType(rt: ResourceType): boolean {
  return rt.group === BUNDLE_RESOURCE_TYPE.group && rt.plural === BUNDLE_RESOURCE_TYPE.plural;
}
