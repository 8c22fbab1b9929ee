/**
 * Issue 23, classes 3 and 4: a delete must still be right when it is sent,
 * not only when its pass began. Real operator processes under a tight
 * request budget, so a prune of many objects takes seconds:
 *  3. the Bundle puts its objects back mid-prune (a broken template
 *     corrected a second later): what was not deleted yet is kept (same UID);
 *  4. the leader is paused (SIGSTOP) mid-prune past its Lease, the objects
 *     are put back and the standby takes over; when the old leader wakes
 *     (SIGCONT) it sends nothing: every object keeps the UID the new leader
 *     saw, and the old leader exits.
 */
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { connect, createNamespace, resourceType, uniqueName, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, waitForReady, type ResourceFixture } from './bundles.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

let env: TestEnv;
let ns: string;
let configMaps: ResourceType;
let leases: ResourceType;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'sendtime');
  configMaps = await resourceType(env, 'v1', 'ConfigMap');
  leases = await resourceType(env, 'coordination.k8s.io/v1', 'Lease');
});
afterAll(() => env.close());

const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const resources = (objects: readonly string[]): ResourceFixture[] => objects.map((name) => ({ name, object: configMap(name) }));

/** UIDs of the ConfigMaps that exist now, by name. */
async function uids(objects: readonly string[]): Promise<Map<string, string>> {
  const { items } = await env.client.list(configMaps, ns);
  const wanted = new Set(objects);
  return new Map(
    items
      .filter((o: KubeObject) => wanted.has(o.metadata.name) && o.metadata.deletionTimestamp === undefined)
      .map((o) => [o.metadata.name, o.metadata.uid]),
  );
}

async function waitForAll(objects: readonly string[]): Promise<Map<string, string>> {
  return await waitFor(
    `all ${objects.length} objects to exist`,
    async () => {
      const now = await uids(objects);
      return now.size === objects.length ? now : undefined;
    },
    { timeoutMs: 90_000 },
  );
}

/** Resolves once any of `objects` is gone (the prune has started sending). */
async function waitForFirstDelete(objects: readonly string[]): Promise<void> {
  await waitFor('the prune to start deleting', async () => (await uids(objects)).size < objects.length, {
    timeoutMs: 60_000,
    intervalMs: 20,
  });
}

function unchanged(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...before].filter(([name, uid]) => after.get(name) === uid).map(([name]) => name);
}

it('3. objects put back while a long prune runs are not deleted: the rest of the prune is decided again', async () => {
  const op = startOperatorProcess(['--namespace', ns, '--gc=off', '--qps', '5', '--burst', '5']);
  try {
    const all = names('putback', 60);
    const [first] = all;
    if (first === undefined) throw new Error('no objects');
    await applyBundle(env, ns, 'putback', resources(all));
    await waitForReady(env, ns, 'putback').catch(() => undefined);
    const before = await waitForAll(all);
    // A broken template: every resource but one gone; corrected as soon as the first delete is seen.
    await applyBundle(env, ns, 'putback', resources([first]));
    await waitForFirstDelete(all);
    await applyBundle(env, ns, 'putback', resources(all));
    const after = await waitForAll(all);
    const kept = unchanged(before, after);
    // At 5 requests a second, deleting 59 objects takes about 12 s; the Bundle was corrected within about a second
    // of the first delete. Before the send-time check the pass deleted all 59 and the next one re-created them empty.
    expect(kept.length).toBeGreaterThanOrEqual(30);
  } finally {
    await op.kill();
  }
}, 240_000);

it('4. a leader paused past its Lease mid-prune sends nothing when it wakes', async () => {
  const lease = uniqueName('paused');
  const replica = (): OperatorProcess =>
    startOperatorProcess([
      '--namespace',
      ns,
      '--gc=off',
      '--qps',
      '4',
      '--burst',
      '4',
      '--leader-elect',
      '--leader-election-namespace',
      ns,
      '--leader-election-id',
      lease,
      '--lease-duration-seconds',
      '3',
    ]);
  const holder = async (): Promise<string> =>
    ((await env.client.tryGet(leases, ns, lease))?.spec as { holderIdentity?: string } | undefined)?.holderIdentity ?? '';
  const leader = replica();
  await waitFor('the first replica to lead', async () => (await holder()).endsWith(`-${leader.child.pid}`));
  const standby = replica();
  try {
    const all = names('paused', 30);
    const [first] = all;
    if (first === undefined) throw new Error('no objects');
    await applyBundle(env, ns, 'paused', resources(all));
    await waitForAll(all);
    await waitForReady(env, ns, 'paused').catch(() => undefined);

    await applyBundle(env, ns, 'paused', resources([first]));
    await waitForFirstDelete(all);
    leader.child.kill('SIGSTOP');
    // Put back while the leader is frozen; the standby takes the Lease (3 s after it last saw a renewal) and reconciles.
    await applyBundle(env, ns, 'paused', resources(all));
    await waitFor('the standby to lead', async () => (await holder()).endsWith(`-${standby.child.pid}`), { timeoutMs: 30_000 });
    const settled = await waitForAll(all);
    await waitForReady(env, ns, 'paused');

    const exited = new Promise<number | null>((resolve) => leader.child.on('exit', (code) => resolve(code)));
    leader.child.kill('SIGCONT');
    expect(await exited).toBe(1);
    // Whatever the old leader had queued was refused at the moment of sending: every object is the one the new leader saw.
    expect(unchanged(settled, await uids(all))).toHaveLength(all.length);
  } finally {
    await Promise.all([leader.kill(), standby.kill()]);
  }
}, 240_000);
