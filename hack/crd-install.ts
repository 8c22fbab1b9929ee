/** Installs the generated Bundle CRD and waits until it is Established. */
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import { buildBundleCrd } from '../src/api/crd.js';
import { installCrd } from '../src/kube/crds.js';

export async function applyCrd(kubeconfig: string): Promise<void> {
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(kubeconfig));
  try {
    await installCrd(client, buildBundleCrd());
  } finally {
    client.close();
  }
}
