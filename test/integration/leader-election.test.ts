/**
 * Leader election with real operator processes on a real Lease: one writer,
 * takeover after a crash, release on SIGTERM, and a leader that loses its
 * Lease stops and exits non-zero.
 */
import { freePort } from '../../hack/ports.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { conditionOf, connect, createNamespace, resourceType, run, uniqueName, waitFor, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

const LEASE_SECONDS = 3;

let env: TestEnv;
let ns: string;
let leases: ResourceType;
let bundles: ResourceType;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'leader');
  leases = await resourceType(env, 'coordination.k8s.io/v1', 'Lease');
  bundles = await resourceType(env, 'smith.atlassian.com/v1', 'Bundle');
});
afterAll(() => env.close());

interface Replica {
  process: OperatorProcess;
  identitySuffix: string;
  healthPort: number;
}

async function startReplica(leaseName: string): Promise<Replica> {
  const healthPort = await freePort();
  const process = startOperatorProcess([
    '--namespace',
    ns,
    '--gc=off',
    '--leader-elect',
    '--leader-election-namespace',
    ns,
    '--leader-election-id',
    leaseName,
    '--lease-duration-seconds',
    String(LEASE_SECONDS),
    '--health-addr',
    `127.0.0.1:${healthPort}`,
  ]);
  return { process, identitySuffix: `-${process.child.pid}`, healthPort };
}

async function holder(leaseName: string): Promise<string | undefined> {
  const lease = await env.client.tryGet(leases, ns, leaseName);
  return (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
}

async function readyz(replica: Replica): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${replica.healthPort}/readyz`);
  return `${response.status} ${(await response.text()).trim()}`;
}

async function applyConfigMapBundle(name: string): Promise<void> {
  const manifest = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace: ns },
    spec: {
      resources: [
        {
          name: 'config',
          spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-config` }, data: { a: '1' } } },
        },
      ],
    },
  };
  const result = await run('kubectl', ['apply', '--server-side', '-f', '-'], { input: JSON.stringify(manifest) });
  if (result.code !== 0) throw new Error(result.stderr);
}

async function waitReady(name: string): Promise<KubeObject> {
  return await waitFor(`Bundle ${name} to be Ready`, async () => {
    const live = await env.client.tryGet(bundles, ns, name);
    return conditionOf(live, 'Ready')?.status === 'True' ? live : undefined;
  });
}

function leaderOf(replicas: Replica[], identity: string | undefined): Replica | undefined {
  return replicas.find((r) => identity?.endsWith(r.identitySuffix));
}

describe('leader election', () => {
  it('has one leader; a standby takes over when it crashes, and both report ready', async () => {
    const leaseName = uniqueName('lease');
    const replicas = [await startReplica(leaseName), await startReplica(leaseName)];
    try {
      const first = await waitFor('a leader', async () => leaderOf(replicas, await holder(leaseName)));
      const standby = replicas.find((r) => r !== first);
      if (!standby) throw new Error('no standby');
      await applyConfigMapBundle('before-crash');
      await waitReady('before-crash');
      await waitFor(
        'both replicas ready (leader synced, standby in the election)',
        async () =>
          (await readyz(first)) === '200 ok: leader: controllers running' &&
          (await readyz(standby)) === '200 ok: standby: another replica holds the Lease',
      );

      await first.process.kill();
      await waitFor('the standby to take the Lease', async () => (await holder(leaseName))?.endsWith(standby.identitySuffix), {
        timeoutMs: LEASE_SECONDS * 1000 + 20_000,
      });
      await applyConfigMapBundle('after-crash');
      await waitReady('after-crash');
      const lease = await env.client.get(leases, ns, leaseName);
      expect((lease.spec as { leaseTransitions: number }).leaseTransitions).toBe(1);
    } finally {
      await Promise.all(replicas.map((r) => r.process.kill()));
    }
  });

  it('releases the Lease on SIGTERM and exits 0', async () => {
    const leaseName = uniqueName('lease');
    const replica = await startReplica(leaseName);
    await waitFor('it to lead', async () => (await holder(leaseName))?.endsWith(replica.identitySuffix));
    expect(await replica.process.terminate()).toBe(0);
    expect(await holder(leaseName)).toBe('');
  });

  it('stops and exits non-zero when another holder takes the Lease', async () => {
    const leaseName = uniqueName('lease');
    const replica = await startReplica(leaseName);
    await waitFor('it to lead', async () => (await holder(leaseName))?.endsWith(replica.identitySuffix));
    const exited = new Promise<number | null>((resolve) => replica.process.child.on('exit', (code) => resolve(code)));
    // An administrator (or a split brain) hands the Lease to someone else.
    await env.client.patch(
      leases,
      ns,
      leaseName,
      { spec: { holderIdentity: 'someone-else', renewTime: new Date().toISOString().replace('Z', '000Z') } },
      'merge',
    );
    expect(await exited).toBe(1);
    expect(await holder(leaseName)).toBe('someone-else');
  });
});
