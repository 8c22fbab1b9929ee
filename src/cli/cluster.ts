/** The CLI's connection to a cluster: client, discovery, current namespace, and KIND/NAME lookup. */
import { KubeClient, loadKubeConfig } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import type { ResourceType } from '../kube/types.js';
import type { ObjectRef } from './args.js';
import { CliError } from './io.js';
import { EXIT_PROBLEMS } from './args.js';

export interface Cluster {
  client: KubeClient;
  discovery: Discovery;
  /** The kubeconfig context's namespace, or "default". */
  contextNamespace: string;
  close(): void;
}

/** Connects with `kubeconfig` (default: $KUBECONFIG, ~/.kube/config, in-cluster) and its `context` (default: its current one). */
export async function connectCluster(kubeconfig: string | undefined, context?: string): Promise<Cluster> {
  let kc;
  try {
    kc = loadKubeConfig(kubeconfig);
  } catch (err) {
    throw new CliError(
      `cannot load kubeconfig${kubeconfig ? ` ${kubeconfig}` : ''}: ${err instanceof Error ? err.message : String(err)}`,
      EXIT_PROBLEMS,
    );
  }
  if (context !== undefined) {
    if (kc.getContextObject(context) === null || kc.getContextObject(context) === undefined) {
      const known = kc.getContexts().map((c) => c.name);
      throw new CliError(`context "${context}" does not exist in the kubeconfig (it has: ${known.join(', ') || 'none'})`, EXIT_PROBLEMS);
    }
    kc.setCurrentContext(context);
  }
  const contextNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const client = await KubeClient.fromKubeConfig(kc, { requestTimeoutMs: 30_000 });
  const discovery = new Discovery(client, 0);
  try {
    await discovery.refresh();
  } catch (err) {
    client.close();
    throw new CliError(`cannot reach the API server: ${err instanceof Error ? err.message : String(err)}`, EXIT_PROBLEMS);
  }
  return { client, discovery, contextNamespace, close: () => client.close() };
}

/**
 * The resource type a typed KIND[.GROUP] names: its kind, plural or singular
 * (case-insensitive), in the first version discovery lists for its group.
 */
export function resolveObjectRef(resources: readonly ResourceType[], ref: ObjectRef): ResourceType | undefined {
  const wanted = ref.kind.toLowerCase();
  const matches = resources.filter(
    (rt) =>
      (ref.group === undefined || rt.group === ref.group) &&
      (rt.kind.toLowerCase() === wanted || rt.plural === wanted || `${rt.kind.toLowerCase()}s` === wanted),
  );
  // Core-group kinds first when no group is given: "configmap" is the core ConfigMap.
  return matches.find((rt) => rt.group === '') ?? matches[0];
}
