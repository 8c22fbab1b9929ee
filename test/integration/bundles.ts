/** Bundle fixtures and probes shared by the reconciler and soft-delete integration tests. */
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { conditionOf, resourceType, waitFor, type TestEnv } from './harness.js';

export { BUNDLE_RESOURCE_TYPE };

export interface ResourceFixture {
  name: string;
  references?: { name?: string; resource: string; path?: string; modifier?: string }[];
  object: Record<string, unknown>;
}

export function configMap(
  name: string,
  data: Record<string, string> = { key: 'value' },
  annotations?: Record<string, string>,
): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(annotations ? { annotations } : {}) }, data };
}

export function bundleManifest(namespace: string, name: string, resources: ResourceFixture[]): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace },
    spec: {
      resources: resources.map((r) => ({
        name: r.name,
        ...(r.references ? { references: r.references } : {}),
        spec: { object: r.object },
      })),
    },
  };
}

/** Applies a Bundle as a user would (server-side apply under the "test-user" manager). */
export async function applyBundle(env: TestEnv, namespace: string, name: string, resources: ResourceFixture[]): Promise<KubeObject> {
  return await env.client.apply(BUNDLE_RESOURCE_TYPE, bundleManifest(namespace, name, resources), {
    fieldManager: 'test-user',
    force: true,
  });
}

export async function getBundle(env: TestEnv, namespace: string, name: string): Promise<KubeObject | undefined> {
  return await env.client.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name);
}

/** Waits until the Bundle's status reflects its current generation and `check` holds; returns it. */
export async function waitForBundle(
  env: TestEnv,
  namespace: string,
  name: string,
  what: string,
  check: (b: KubeObject) => boolean,
  timeoutMs = 30_000,
): Promise<KubeObject> {
  return await waitFor(
    `Bundle ${name}: ${what}`,
    async () => {
      const b = await getBundle(env, namespace, name);
      if (!b) return undefined;
      const observed = (b.status as { observedGeneration?: number } | undefined)?.observedGeneration;
      return observed === b.metadata.generation && check(b) ? b : undefined;
    },
    { timeoutMs },
  );
}

export async function waitForReady(env: TestEnv, namespace: string, name: string): Promise<KubeObject> {
  return await waitForBundle(env, namespace, name, 'Ready=True', (b) => conditionOf(b, 'Ready')?.status === 'True');
}

export function resourceCondition(
  bundle: KubeObject,
  resource: string,
  type: string,
): { status: string; reason?: string; message?: string } | undefined {
  const statuses = (
    bundle.status as
      | { resourceStatuses?: { name: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] }[] }
      | undefined
  )?.resourceStatuses;
  return statuses?.find((s) => s.name === resource)?.conditions?.find((c) => c.type === type);
}

export type KnownTypes = Record<'configMap' | 'secret' | 'deployment' | 'service', ResourceType>;

export async function types(env: TestEnv): Promise<KnownTypes> {
  return {
    configMap: await resourceType(env, 'v1', 'ConfigMap'),
    secret: await resourceType(env, 'v1', 'Secret'),
    deployment: await resourceType(env, 'apps/v1', 'Deployment'),
    service: await resourceType(env, 'v1', 'Service'),
  };
}

/** Events (events.k8s.io/v1) about an object, newest last. */
export async function eventsFor(env: TestEnv, namespace: string, name: string): Promise<{ reason: string; note: string; type: string }[]> {
  const rt = await resourceType(env, 'events.k8s.io/v1', 'Event');
  const { items } = await env.client.list(rt, namespace);
  return items
    .filter((e) => (e.regarding as { name?: string } | undefined)?.name === name)
    .map((e) => ({
      reason: typeof e.reason === 'string' ? e.reason : '',
      note: typeof e.note === 'string' ? e.note : '',
      type: typeof e.type === 'string' ? e.type : '',
    }));
}

/** Marks a Deployment available through the status subresource (no workload controllers run on the shared control plane; workloads.ts starts one where they do). */
export async function markDeploymentAvailable(env: TestEnv, namespace: string, name: string): Promise<void> {
  const rt = await resourceType(env, 'apps/v1', 'Deployment');
  const live = await env.client.get(rt, namespace, name);
  const replicas = (live.spec as { replicas?: number }).replicas ?? 1;
  await env.client.patch(
    rt,
    namespace,
    name,
    {
      status: {
        observedGeneration: live.metadata.generation,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'test' }],
      },
    },
    'merge',
    { subresource: 'status' },
  );
}
