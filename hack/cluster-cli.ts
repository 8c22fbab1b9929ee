/**
 * npm run cluster:up   starts a control plane, prints its kubeconfig path last.
 * npm run cluster:down stops the one cluster:up started.
 * Flags for up: --with-gc (also run kube-controller-manager's garbage collector).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../src/api/crd-paths.js';
import { readState, startControlPlane, stopControlPlane } from './controlplane.js';
import { applyCrd } from './crd-install.js';

const pointer = join(repoRoot(), '.cluster', 'current');

async function up(withGc: boolean): Promise<void> {
  if (existsSync(pointer)) {
    const dir = readFileSync(pointer, 'utf8').trim();
    if (existsSync(join(dir, 'state.json'))) {
      console.error(`a control plane started by cluster:up is already running (${dir}); run npm run cluster:down first`);
      console.log(readState(dir).kubeconfig);
      return;
    }
  }
  console.error('starting etcd and kube-apiserver on loopback...');
  const state = await startControlPlane({ withGarbageCollector: withGc });
  await applyCrd(state.kubeconfig);
  mkdirSync(join(repoRoot(), '.cluster'), { recursive: true });
  writeFileSync(pointer, state.dir);
  console.error(`control plane up at ${state.server} (logs in ${state.dir}); the Bundle CRD is installed`);
  console.error(`export KUBECONFIG=${state.kubeconfig}`);
  console.log(state.kubeconfig);
}

function down(): void {
  if (!existsSync(pointer)) {
    console.error('no control plane started by cluster:up');
    return;
  }
  const dir = readFileSync(pointer, 'utf8').trim();
  if (existsSync(join(dir, 'state.json'))) stopControlPlane(readState(dir));
  rmSync(pointer, { force: true });
  console.error(`stopped the control plane in ${dir}`);
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'up') {
  up(rest.includes('--with-gc')).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
} else if (command === 'down') {
  down();
} else {
  console.error('usage: cluster-cli up [--with-gc] | down');
  process.exit(2);
}
