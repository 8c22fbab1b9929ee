/**
 * Issue 15.4, replicas and autoscalers, proven with server-side apply's
 * managed fields on the real apiserver: a workload whose manifest omits
 * spec.replicas never has that field owned by the operator, so an
 * autoscaler (or a person) may set it and the operator's later applies
 * leave it; a manifest that sets it owns it, and each apply puts it back.
 */
import { FIELD_MANAGER } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { applyBundle, waitForBundle } from './bundles.js';
import { conditionOf, waitFor } from './harness.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('replicas');

function deployment(name: string, image: string, replicas?: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      ...(replicas !== undefined ? { replicas } : {}),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  };
}

/** The top-level spec fields a field manager owns, from managedFields. */
function specFieldsOwnedBy(o: KubeObject, manager: string): string[] {
  const entries = (o.metadata.managedFields ?? []) as { manager?: string; operation?: string; fieldsV1?: Record<string, unknown> }[];
  const spec = entries.filter((e) => e.manager === manager).map((e) => (e.fieldsV1?.['f:spec'] ?? {}) as Record<string, unknown>);
  return [...new Set(spec.flatMap((s) => Object.keys(s)))].sort();
}

/** An autoscaler's write: the scale subresource, under a field manager of its own. */
async function scaleTo(name: string, replicas: number): Promise<void> {
  await f.env.client.patch(f.t.deployment, f.ns, name, { spec: { replicas } }, 'merge', {
    subresource: 'scale',
    fieldManager: 'autoscaler',
  });
}

async function applied(bundle: string, name: string, image: string): Promise<KubeObject> {
  await waitForBundle(f.env, f.ns, bundle, 'reconciled', (b) => conditionOf(b, 'Error')?.status !== 'True');
  return await waitFor(`${name} at ${image}`, async () => {
    const d = await f.env.client.tryGet(f.t.deployment, f.ns, name);
    const containers = (d?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)?.template?.spec?.containers;
    return containers?.[0]?.image === image ? d : undefined;
  });
}

it("a workload without spec.replicas: the operator never owns replicas, and an autoscaler's value survives its applies", async () => {
  await applyBundle(f.env, f.ns, 'hpa', [{ name: 'web', object: deployment('rp-web', 'registry.k8s.io/pause:3.10') }]);
  const first = await applied('hpa', 'rp-web', 'registry.k8s.io/pause:3.10');
  expect(specFieldsOwnedBy(first, FIELD_MANAGER)).not.toContain('f:replicas');
  expect(specFieldsOwnedBy(first, FIELD_MANAGER)).toEqual(expect.arrayContaining(['f:selector', 'f:template']));

  await scaleTo('rp-web', 5);
  // A new image: the operator applies the Deployment again.
  await applyBundle(f.env, f.ns, 'hpa', [{ name: 'web', object: deployment('rp-web', 'registry.k8s.io/pause:3.9') }]);
  const again = await applied('hpa', 'rp-web', 'registry.k8s.io/pause:3.9');
  expect((again.spec as { replicas?: number }).replicas).toBe(5);
  expect(specFieldsOwnedBy(again, FIELD_MANAGER)).not.toContain('f:replicas');
});

it("a workload that sets spec.replicas owns it: the next apply puts its value back over an autoscaler's", async () => {
  await applyBundle(f.env, f.ns, 'fixed', [{ name: 'web', object: deployment('rp-fixed', 'registry.k8s.io/pause:3.10', 2) }]);
  const first = await applied('fixed', 'rp-fixed', 'registry.k8s.io/pause:3.10');
  expect(specFieldsOwnedBy(first, FIELD_MANAGER)).toContain('f:replicas');

  await scaleTo('rp-fixed', 5);
  await applyBundle(f.env, f.ns, 'fixed', [{ name: 'web', object: deployment('rp-fixed', 'registry.k8s.io/pause:3.9', 2) }]);
  const again = await applied('fixed', 'rp-fixed', 'registry.k8s.io/pause:3.9');
  expect((again.spec as { replicas?: number }).replicas).toBe(2);
  expect(specFieldsOwnedBy(again, FIELD_MANAGER)).toContain('f:replicas');
});
