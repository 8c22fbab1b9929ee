/**
 * What a request to the API server is made of, apart from sending it: the
 * path of a resource, the media types, and the options each verb of
 * KubeClient takes. Pure.
 */
import type { DeletionPropagation } from '../api/names.js';
import type { ResourceType } from './types.js';
import type { SendGuard } from './errors.js';

export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** PartialObjectMetadata only: no object bodies. */
  metadataOnly?: boolean;
  limit?: number;
  resourceVersion?: string;
}

export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  metadataOnly?: boolean;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface DeleteOptions {
  /** Precondition: delete only the object with this UID (always set it). */
  uid: string;
  /** Precondition: delete only if unchanged since the decision was made. */
  resourceVersion?: string;
  propagationPolicy?: DeletionPropagation;
  dryRun?: boolean;
  /** Checked at the moment the DELETE is sent (see RequestOptions.guard). */
  guard?: SendGuard;
}

export interface PatchOptions {
  fieldManager?: string;
  subresource?: string;
  dryRun?: boolean;
  /** Checked at the moment the PATCH is sent (see RequestOptions.guard). */
  guard?: SendGuard;
}

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
  dryRun?: boolean;
  /** Checked at the moment the apply is sent (see RequestOptions.guard). */
  guard?: SendGuard;
}

export type PatchType = 'merge' | 'json' | 'strategic';

export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export interface EventInput {
  /** The object the event is about. */
  regarding: { apiVersion: string; kind: string; name: string; namespace?: string; uid: string; resourceVersion?: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Namespace the event is written to; defaults to the regarding object's (or "default"). */
  namespace?: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  /** Event time (RFC 3339 with microseconds). */
  eventTime: string;
}

/** Path of a collection, or of one object when name is given. */
export function resourcePath(
  rt: Pick<ResourceType, 'group' | 'version' | 'plural' | 'namespaced'>,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = rt.group === '' ? `/api/${rt.version}` : `/apis/${rt.group}/${rt.version}`;
  const ns = rt.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  let path = `${base}${ns}/${rt.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}
