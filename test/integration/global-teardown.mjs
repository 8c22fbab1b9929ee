import { readState, stopControlPlane } from '../../dist/hack/controlplane.js';

export default function globalTeardown() {
  const dir = process.env.BUNDLESMITH_TEST_CP_DIR;
  if (!dir) return;
  // BUNDLESMITH_KEEP_CLUSTER=1 keeps the logs for debugging a failed run.
  stopControlPlane(readState(dir), { keepDir: process.env.BUNDLESMITH_KEEP_CLUSTER === '1' });
}
