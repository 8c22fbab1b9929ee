/**
 * Fixture builders with modifiers (cert-manager style): each table row shows
 * only what matters to it. Modifiers mutate the fresh object the builder made.
 */
import type { BundleSpec } from '../../../src/api/bundle.js';
import type { KubeObjectManifest, OwnerReference, Reference, Resource } from '../../../src/api/resource.js';
import { Annotations, API_VERSION, BUNDLE_KIND } from '../../../src/api/names.js';
import { countdownRecordOf, type CountdownRecord } from '../../../src/core/bundle/countdown-record.js';
import { buildGraph, type DependencyGraph } from '../../../src/core/bundle/graph.js';
import type { CrdReadinessTable, KindInfo, KindTable } from '../../../src/core/bundle/kinds.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import type { PlanBundle, PlanInput } from '../../../src/core/bundle/plan.js';

export type Mod<T> = (target: T) => void;

function build<T>(base: T, mods: readonly Mod<T>[]): T {
  for (const mod of mods) mod(base);
  return base;
}

export const NAMESPACE = 'ns1';
export const BUNDLE_UID = 'bundle-uid';
export const NOW = Date.parse('2026-01-01T00:00:00.000Z');

// ---- objects (spec manifests and live objects share the modifiers) ----

export type Obj = KubeObjectManifest & LiveObject;

export function object(apiVersion: string, kind: string, name: string, ...mods: Mod<Obj>[]): Obj {
  return build<Obj>({ apiVersion, kind, metadata: { name } }, mods);
}
export const configMap = (name: string, ...mods: Mod<Obj>[]): Obj => object('v1', 'ConfigMap', name, ...mods);
export const secret = (name: string, ...mods: Mod<Obj>[]): Obj => object('v1', 'Secret', name, ...mods);
export const service = (name: string, ...mods: Mod<Obj>[]): Obj => object('v1', 'Service', name, ...mods);
export const deployment = (name: string, ...mods: Mod<Obj>[]): Obj => object('apps/v1', 'Deployment', name, ...mods);
export const widget = (name: string, ...mods: Mod<Obj>[]): Obj => object('example.com/v1', 'Widget', name, ...mods);

export const withField =
  (key: string, value: unknown): Mod<Obj> =>
  (o) => {
    o[key] = value;
  };
export const withData = (data: Record<string, unknown>): Mod<Obj> => withField('data', data);
export const withSpec = (spec: Record<string, unknown>): Mod<Obj> => withField('spec', spec);
export const withStatus = (status: Record<string, unknown>): Mod<Obj> => withField('status', status);
export const withNamespace =
  (namespace: string): Mod<Obj> =>
  (o) => {
    o.metadata.namespace = namespace;
  };
export const withUid =
  (uid: string): Mod<Obj> =>
  (o) => {
    o.metadata.uid = uid;
  };
export const withResourceVersion =
  (rv: string): Mod<Obj> =>
  (o) => {
    o.metadata.resourceVersion = rv;
  };
export const withGeneration =
  (generation: number): Mod<Obj> =>
  (o) => {
    o.metadata.generation = generation;
  };
export const withAnnotation =
  (key: string, value: string): Mod<Obj> =>
  (o) => {
    o.metadata.annotations = { ...o.metadata.annotations, [key]: value };
  };
export const withLabel =
  (key: string, value: string): Mod<Obj> =>
  (o) => {
    o.metadata.labels = { ...(o.metadata.labels ?? {}), [key]: value };
  };
export const withOwner =
  (ref: OwnerReference): Mod<Obj> =>
  (o) => {
    o.metadata.ownerReferences = [...(o.metadata.ownerReferences ?? []), ref];
  };
export const terminating =
  (since = '2025-12-31T23:00:00Z'): Mod<Obj> =>
  (o) => {
    o.metadata.deletionTimestamp = since;
  };
export const withConditions =
  (...conditions: Record<string, unknown>[]): Mod<Obj> =>
  (o) => {
    const status = typeof o['status'] === 'object' && o['status'] !== null ? o['status'] : {};
    o['status'] = { ...status, conditions };
  };

/** What the operator's apply leaves on an object it wrote: a managedFields entry of its own field manager. */
export const byOperator: Mod<Obj> = (o) => {
  o.metadata.managedFields = [
    ...((o.metadata.managedFields as unknown[] | undefined) ?? []),
    { manager: 'bundlesmith', operation: 'Apply', fieldsV1: {} },
  ];
};

/** Controlled by the test Bundle. */
export const controlledByBundle = (uid = BUNDLE_UID, name = 'b'): Mod<Obj> =>
  withOwner({ apiVersion: API_VERSION, kind: BUNDLE_KIND, name, uid, controller: true, blockOwnerDeletion: true });
/** Controlled by some other controller. */
export const controlledBy = (kind: string, name: string, uid = `${name}-uid`): Mod<Obj> =>
  withOwner({ apiVersion: 'apps/v1', kind, name, uid, controller: true });

/** A live object as the server returns it: namespace, uid, resourceVersion set, controlled by the Bundle unless told otherwise. */
export function live(o: Obj, ...mods: Mod<Obj>[]): Obj {
  const copy = structuredClone(o);
  copy.metadata.namespace ??= NAMESPACE;
  copy.metadata.uid ??= `${copy.metadata.name}-uid`;
  copy.metadata.resourceVersion ??= '1';
  return build(copy, mods);
}

// ---- resources and bundles ----

export function resource(name: string, obj: KubeObjectManifest | undefined, ...mods: Mod<Resource>[]): Resource {
  return build<Resource>({ name, spec: obj === undefined ? {} : { object: obj } }, mods);
}
export const withRef =
  (resourceName: string, fields: Partial<Omit<Reference, 'resource'>> = {}): Mod<Resource> =>
  (r) => {
    r.references = [...(r.references ?? []), { resource: resourceName, ...fields }];
  };
export const withPlugin =
  (name: string): Mod<Resource> =>
  (r) => {
    r.spec.plugin = { name, objectName: 'x' };
  };

export interface TestBundle {
  meta: PlanBundle;
  spec: BundleSpec;
}
export function bundle(name: string, ...mods: Mod<TestBundle>[]): TestBundle {
  return build<TestBundle>({ meta: { name, namespace: NAMESPACE, uid: BUNDLE_UID, generation: 1 }, spec: { resources: [] } }, mods);
}
export const withResource =
  (...resources: Resource[]): Mod<TestBundle> =>
  (b) => {
    b.spec.resources.push(...resources);
  };

// ---- kinds ----

const NAMESPACED = (plural: string): KindInfo => ({ namespaced: true, plural });
export const KINDS: KindTable = new Map<string, KindInfo>([
  ['v1/ConfigMap', NAMESPACED('configmaps')],
  ['v1/Secret', NAMESPACED('secrets')],
  ['v1/Service', NAMESPACED('services')],
  ['apps/v1/Deployment', NAMESPACED('deployments')],
  ['example.com/v1/Widget', NAMESPACED('widgets')],
  ['v1/Namespace', { namespaced: false, plural: 'namespaces' }],
  ['rbac.authorization.k8s.io/v1/ClusterRole', { namespaced: false, plural: 'clusterroles' }],
]);
export const NO_CRD_READINESS: CrdReadinessTable = new Map();

/** A plan input for `b`, with the given live objects (by resource name) and controlled objects. */
export function planInput(b: TestBundle, liveByResource: Record<string, LiveObject> = {}, extra: Partial<PlanInput> = {}): PlanInput {
  const liveMap = new Map(Object.entries(liveByResource));
  return {
    bundle: b.meta,
    spec: b.spec,
    kinds: KINDS,
    crdReadiness: NO_CRD_READINESS,
    live: liveMap,
    // By default the controlled list is exactly the live objects the Bundle controls.
    controlled: [...liveMap.values()].filter((o) => o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === b.meta.uid)),
    now: NOW,
    ...extra,
  };
}

// ---- DAG notation ----

/**
 * A graph from edges written "a->b" (a depends on b) and lone nodes "c".
 * Nodes are listed in order of first appearance.
 */
export function dag(...specs: string[]): DependencyGraph {
  const nodes: string[] = [];
  const edges: [string, string][] = [];
  const note = (n: string): void => {
    if (!nodes.includes(n)) nodes.push(n);
  };
  for (const spec of specs) {
    const parts = spec.split('->').map((s) => s.trim());
    parts.forEach(note);
    for (let i = 0; i + 1 < parts.length; i++) edges.push([parts[i] ?? '', parts[i + 1] ?? '']);
  }
  return buildGraph(nodes, edges);
}

/**
 * The countdown record a Bundle's status holds for these objects' stamps
 * (status.pendingDeletions, written before each stamp: a sealed stamp the
 * record does not hold reads as none). Recorded with no delay, so the
 * record adds no floor of its own.
 */
export function recordOf(...objects: LiveObject[]): CountdownRecord {
  const pendingDeletions = objects.flatMap((o) => {
    const stamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    return stamp === undefined
      ? []
      : [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, deletionTimestamp: stamp, deleteAfter: stamp }];
  });
  return countdownRecordOf({ pendingDeletions }, objects[0]?.metadata.namespace ?? 'ns1');
}
