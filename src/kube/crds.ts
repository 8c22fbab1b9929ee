/** CustomResourceDefinitions: apply one and wait until the apiserver serves it. */
import type { KubeClient } from './client.js';
import { FIELD_MANAGER } from '../api/names.js';
import type { ResourceType } from './types.js';

export const CRD_RESOURCE: ResourceType = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
  verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
};

export async function installCrd(client: KubeClient, crd: Record<string, unknown>, timeoutMs = 30_000): Promise<void> {
  const name = (crd.metadata as { name: string }).name;
  await client.apply(CRD_RESOURCE, crd, { fieldManager: FIELD_MANAGER, force: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await client.get(CRD_RESOURCE, undefined, name);
    const conditions = (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${name} not Established after ${timeoutMs} ms: ${JSON.stringify(conditions)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
