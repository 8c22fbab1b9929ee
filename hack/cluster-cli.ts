/**
 * npm run cluster:up   starts a control plane, prints its kubeconfig path last.
 * npm run cluster:down stops the one cluster:up started.
 * Flags for up: --with-gc (also run kube-controller-manager's garbage collector),
 * --no-workloads (only etcd and kube-apiserver: no simulated nodes, no
 * kube-scheduler, no workload controllers, so no Deployment ever runs).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../src/api/crd-paths.js';
import { DEFAULT_SIMULATED_NODES, readState, startControlPlane, stopControlPlane } from './controlplane.js';
import { applyCrd } from './crd-install.js';

const pointer = join(repoRoot(), '.cluster', 'current');

async function up(withGc: boolean, workloads: boolean): Promise<void> {
  if (existsSync(pointer)) {
    const dir = readFileSync(pointer, 'utf8').trim();
    if (existsSync(join(dir, 'state.json'))) {
      console.error(`a control plane started by cluster:up is already running (${dir}); run npm run cluster:down first`);
      console.log(readState(dir).kubeconfig);
      return;
    }
  }
  console.error(
    workloads
      ? `starting etcd, kube-apiserver, kwok (${DEFAULT_SIMULATED_NODES} simulated nodes), kube-scheduler and kube-controller-manager (workload controllers${withGc ? ', garbage collector' : ''}) on loopback...`
      : `starting etcd and kube-apiserver${withGc ? ' and kube-controller-manager (garbage collector)' : ''} on loopback...`,
  );
  const state = await startControlPlane({ withGarbageCollector: withGc, workloads });
  await applyCrd(state.kubeconfig);
  mkdirSync(join(repoRoot(), '.cluster'), { recursive: true });
  writeFileSync(pointer, state.dir);
  console.error(`control plane up at ${state.server} (logs in ${state.dir}); the Bundle CRD is installed`);
  if (workloads)
    console.error(
      'Deployments, StatefulSets, DaemonSets and Jobs run: their pods are bound to simulated nodes and reported Running and Ready (Job pods Succeeded); no container runs',
    );
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
  const unknown = rest.filter((flag) => flag !== '--with-gc' && flag !== '--no-workloads');
  if (unknown.length > 0) {
    console.error(`unknown flag ${unknown.join(' ')}; usage: cluster-cli up [--with-gc] [--no-workloads] | down`);
    process.exit(2);
  }
  up(rest.includes('--with-gc'), !rest.includes('--no-workloads')).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
} else if (command === 'down') {
  down();
} else {
  console.error('usage: cluster-cli up [--with-gc] [--no-workloads] | down');
  process.exit(2);
}
