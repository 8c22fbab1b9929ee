/**
 * Creates the real-apiserver memory row's ConfigMaps (one owner per
 * `perOwner`, the rest its dependents) from a process of its own, so that
 * the resident set of the process measuring the collector holds nothing of
 * the creating. bench/memory.ts runs it:
 * `node create-objects.js KUBECONFIG NAMESPACE COUNT PER_OWNER`.
 */
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import type { ResourceType } from '../src/kube/types.js';
import { forEachConcurrently } from './cluster.js';

const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  verbs: ['create'],
};

async function createObjects(kubeconfig: string, namespace: string, count: number, perOwner: number): Promise<void> {
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig), { maxSockets: Infinity });
  try {
    const owners = Math.ceil(count / perOwner);
    const ownerRefs: { name: string; uid: string }[] = [];
    await forEachConcurrently(owners, 32, async (i) => {
      const owner = await client.create(CONFIG_MAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `owner-${i}`, namespace },
        data: { role: 'owner' },
      });
      ownerRefs[i] = { name: owner.metadata.name, uid: owner.metadata.uid };
    });
    await forEachConcurrently(count - owners, 32, async (i) => {
      const owner = ownerRefs[i % owners];
      if (!owner) return;
      await client.create(CONFIG_MAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `dep-${i}`,
          namespace,
          labels: { app: `service-${i % owners}` },
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid, controller: true, blockOwnerDeletion: true },
          ],
        },
        data: { index: String(i) },
      });
    });
  } finally {
    client.close();
  }
}

const [kubeconfig, namespace, count, perOwner] = process.argv.slice(2);
if (kubeconfig === undefined || namespace === undefined || count === undefined || perOwner === undefined) {
  console.error('usage: create-objects.js KUBECONFIG NAMESPACE COUNT PER_OWNER');
  process.exit(2);
}
createObjects(kubeconfig, namespace, Number(count), Number(perOwner)).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
