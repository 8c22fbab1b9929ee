/** Shapes of API objects as the operator handles them: generic, parsed at the edges. */
import type { OwnerReference } from '../api/resource.js';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  /** Fields the operator does not read are carried along; the index signature also makes a KubeObject a LiveObject (core/bundle/objects.ts) without a cast. */
  [field: string]: unknown;
}

/** Any object read from the API server (full or metadata-only). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** A resource type as discovery reports it. */
export interface ResourceType {
  group: string;
  version: string;
  /** "v1" or "apps/v1" */
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  verbs: readonly string[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

/** "namespace/name", or "name" for a cluster-scoped object: the key of one resource type's cache. */
export function namespacedName(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function isKubeObject(value: unknown): value is KubeObject {
  if (typeof value !== 'object' || value === null) return false;
  const meta = (value as { metadata?: unknown }).metadata;
  return typeof meta === 'object' && meta !== null && typeof (meta as { name?: unknown }).name === 'string';
}
