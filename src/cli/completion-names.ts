/**
 * The names shell completion reads from the cluster: namespaces and Bundles.
 * A completion must answer at once and never fail: a cluster that cannot
 * answer within a moment gives no names (the shell then offers none).
 */
import { BUNDLE_RESOURCE_TYPE } from '../kube/bundle-resource.js';
import { connectCluster, type Cluster } from './cluster.js';
import type { ClusterNames, CompletionContext } from './completion.js';

const COMPLETION_TIMEOUT_MS = 3_000;

async function withClusterNames(at: CompletionContext, read: (cluster: Cluster) => Promise<string[]>): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), COMPLETION_TIMEOUT_MS);
  });
  const names = (async () => {
    const cluster = await connectCluster(at.kubeconfig, at.context);
    try {
      return await read(cluster);
    } finally {
      cluster.close();
    }
  })().catch(() => []);
  try {
    return (await Promise.race([names, timeout])).sort();
  } finally {
    clearTimeout(timer);
  }
}

export const clusterNames: ClusterNames = {
  namespaces: (at) =>
    withClusterNames(at, async (cluster) => {
      const namespaces = cluster.discovery.lookup('v1', 'Namespace');
      return namespaces ? (await cluster.client.list(namespaces, undefined)).items.map((n) => n.metadata.name) : [];
    }),
  bundles: (at) =>
    withClusterNames(at, async (cluster) =>
      (await cluster.client.list(BUNDLE_RESOURCE_TYPE, at.namespace ?? cluster.contextNamespace)).items.map((b) => b.metadata.name),
    ),
};
