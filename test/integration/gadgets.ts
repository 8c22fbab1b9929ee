/**
 * A CRD of a test's own (kind Gadget, in a group the test names) whose
 * versions a test changes mid-run: served, storage, unserved. Shared by the
 * inventory scenarios and the red-team tests of issue 23.
 */
import { CRD_RESOURCE, installCrd } from '../../src/kube/crds.js';
import type { ResourceType } from '../../src/kube/types.js';
import { waitFor, type TestEnv } from './harness.js';

export interface GadgetVersion {
  name: string;
  served: boolean;
  storage: boolean;
}

export function gadgetCrd(group: string, versions: readonly GadgetVersion[]): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
      versions: versions.map((v) => ({
        ...v,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

/** Resolves once discovery shows `group/version` served (its resource type) or, with served false, no longer served (undefined). */
export async function gadgetsServed(env: TestEnv, group: string, version: string, served: boolean): Promise<ResourceType | undefined> {
  const found = await waitFor(`gadgets.${group}/${version} ${served ? 'served' : 'no longer served'}`, async () => {
    await env.discovery.refresh();
    const rt = env.discovery.lookup(`${group}/${version}`, 'Gadget');
    return served ? rt : rt === undefined ? { unserved: true as const } : undefined;
  });
  return 'unserved' in found ? undefined : found;
}

/** Installs the CRD with these versions and waits until the first served one is. */
export async function installGadgets(env: TestEnv, group: string, versions: readonly GadgetVersion[]): Promise<ResourceType | undefined> {
  await installCrd(env.client, gadgetCrd(group, versions));
  const served = versions.find((v) => v.served);
  return served ? await gadgetsServed(env, group, served.name, true) : undefined;
}

/** Replaces the CRD's versions (an upgrade step: a version added, storage moved, one unserved). */
export async function setGadgetVersions(env: TestEnv, group: string, versions: readonly GadgetVersion[]): Promise<void> {
  const current = await env.client.get(CRD_RESOURCE, undefined, `gadgets.${group}`);
  const next = gadgetCrd(group, versions);
  await env.client.raw('PUT', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`, {
    ...next,
    metadata: { ...(next.metadata as object), resourceVersion: current.metadata.resourceVersion },
  });
}
