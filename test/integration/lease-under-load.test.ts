/**
 * Issue 12.1: the Lease never waits behind a Bundle's work. A leader holds a
 * real Lease (3 s, renewed every 400 ms) on the real apiserver while, in the
 * same process, the operator's own parse and plan code chews on hostile
 * Bundles back to back: a 15,000-resource Bundle (what an older CRD without
 * bounds could hold; refused by the schema), and a 256-long reference chain
 * (the most the CRD allows), planned in full. The leader must keep the Lease
 * throughout, its renewals landing while the work runs.
 */
import { BundleSchema } from '../../src/api/bundle.js';
import { planBundle } from '../../src/core/bundle/plan.js';
import type { KindTable } from '../../src/core/bundle/kinds.js';
import { silentLogger } from '../../src/observability/logger.js';
import { systemClock } from '../../src/kube/clock.js';
import { kubeLeaseStore, LeaderElector } from '../../src/runtime/leader-election.js';
import { connect, createNamespace, resourceType, waitFor, type TestEnv } from './harness.js';

let env: TestEnv;
let ns: string;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'leaseload');
});
afterAll(() => env.close());

function bundle(resources: unknown[]): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'hostile', namespace: ns, uid: 'u-1', generation: 1 },
    spec: { resources },
  };
}
const cm = (name: string): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
// Built after beforeAll: the namespace is part of the metadata the schema requires.
const wideBundle = (): Record<string, unknown> =>
  bundle(Array.from({ length: 15_000 }, (_, i) => ({ name: `r${i}`, spec: { object: cm(`wide-${i}`) } })));
const chainBundle = (): Record<string, unknown> =>
  bundle(
    Array.from({ length: 256 }, (_, i) => ({
      name: `c${i}`,
      ...(i > 0 ? { references: [{ resource: `c${i - 1}` }] } : {}),
      spec: { object: cm(`chain-${i}`) },
    })),
  );
const KINDS: KindTable = new Map([['v1/ConfigMap', { namespaced: true, plural: 'configmaps' }]]);

/** One reconcile's pure work on a Bundle as read: parse, and plan when it parses. */
function work(raw: Record<string, unknown>): string {
  const parsed = BundleSchema.safeParse(raw);
  if (!parsed.success) return `refused: ${parsed.error.issues[0]?.message ?? ''}`;
  const plan = planBundle({
    bundle: { name: 'hostile', namespace: ns, uid: 'u-1', generation: 1 },
    spec: parsed.data.spec,
    kinds: KINDS,
    crdReadiness: new Map(),
    live: new Map(),
    controlled: [],
    now: Date.now(),
  });
  return `planned ${plan.order.length}`;
}

it('keeps the Lease while hostile Bundles are parsed and planned back to back', async () => {
  const leases = await resourceType(env, 'coordination.k8s.io/v1', 'Lease');
  let lost: string | undefined;
  let leading = false;
  const elector = new LeaderElector({
    store: kubeLeaseStore(env.client, ns, 'under-load'),
    identity: 'loaded-leader',
    clock: systemClock,
    logger: silentLogger(),
    leaseDurationSeconds: 3,
    onStartedLeading: () => (leading = true),
    onStoppedLeading: (reason) => (lost = reason),
  });
  elector.start();
  try {
    await waitFor('leadership', () => leading);
    const wide = wideBundle();
    const chain = chainBundle();
    expect(work(wide)).toMatch(/^refused: /);
    expect(work(chain)).toBe('planned 256');

    const renewals = new Set<string>();
    const until = Date.now() + 8_000;
    let rounds = 0;
    while (Date.now() < until) {
      work(wide);
      work(chain);
      rounds++;
      // Reconciles are separate tasks: between two, the loop runs whatever is due (renewals among them).
      await new Promise((resolve) => setImmediate(resolve));
      const lease = await env.client.get(leases, ns, 'under-load');
      const spec = lease.spec as { renewTime?: string; holderIdentity?: string } | undefined;
      expect(spec?.holderIdentity).toBe('loaded-leader');
      if (spec?.renewTime !== undefined) renewals.add(spec.renewTime);
    }
    expect(rounds).toBeGreaterThan(1);
    expect(lost).toBeUndefined();
    expect(elector.isLeader()).toBe(true);
    // Renewals landed during the load (every 400 ms over 8 s; a handful is proof enough, no timing asserted).
    expect(renewals.size).toBeGreaterThanOrEqual(3);
  } finally {
    await elector.stop();
  }
}, 60_000);
