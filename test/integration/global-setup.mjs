// Starts one real control plane (etcd + kube-apiserver built from the Go
// module proxy) for the whole integration run and installs the Bundle CRD.
// A control plane that cannot be built or started fails the run: it is never
// a reason to skip tests. Jest loads this file with Node's own ESM loader, so
// it imports the compiled code (npm test builds first).
import { startControlPlane } from '../../dist/hack/controlplane.js';
import { applyCrd } from '../../dist/hack/crd-install.js';
import { ensurePromtool, ensureTools } from '../../dist/hack/tools.js';

export default async function globalSetup() {
  const started = Date.now();
  const tools = await ensureTools();
  // After the control plane's build, not beside it: each build takes both cores.
  process.env.BUNDLESMITH_PROMTOOL = await ensurePromtool();
  const state = await startControlPlane();
  await applyCrd(state.kubeconfig);
  process.env.BUNDLESMITH_TEST_KUBECONFIG = state.kubeconfig;
  process.env.BUNDLESMITH_TEST_CP_DIR = state.dir;
  process.env.BUNDLESMITH_KUBECTL = tools.kubectl;
  process.env.BUNDLESMITH_HELM = tools.helm;
  console.error(
    `\n[integration] control plane up at ${state.server} in ${Math.round((Date.now() - started) / 1000)} s (logs: ${state.dir})`,
  );
}
