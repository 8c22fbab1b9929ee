/**
 * Issue 13.1: --qps/--burst bound the whole process. The clients main.ts
 * builds (process-clients.ts) all draw from one RequestBudget, and a
 * collector cascade with its GarbageCollected Event, a Lease read and a
 * metrics review all spend it: every request the process's transports sent
 * was granted by that one budget. Requests are counted by the transports
 * (watches excluded, as they take no token); nothing here is timed.
 */
import { createProcessClients, type ProcessClients } from '../../src/process-clients.js';
import { createGarbageCollector } from '../../src/gc-factory.js';
import type { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { kubeLeaseStore } from '../../src/runtime/leader-election.js';
import { reviewNonResourceAccess } from '../../src/kube/reviews.js';
import { createLogger } from '../../src/observability/logger.js';
import { systemClock } from '../../src/kube/clock.js';
import type { ResourceType } from '../../src/kube/types.js';
import { connect, createNamespace, resourceType, waitFor, type TestEnv } from './harness.js';

const DEPENDENTS = 30;

let env: TestEnv;
let clients: ProcessClients;
let gc: GarbageCollector | undefined;
let cm: ResourceType;

beforeAll(async () => {
  env = await connect();
  cm = await resourceType(env, 'v1', 'ConfigMap');
  clients = await createProcessClients({
    kubeconfig: env.kubeconfig,
    qps: 40,
    burst: 10,
    impersonate: undefined,
    leaderElect: true,
    leaseDurationSeconds: 15,
    metricsAuth: 'kubernetes',
  });
});

afterAll(async () => {
  await gc?.stop();
  for (const c of clients?.all() ?? []) c.close();
  env?.close();
});

function sentByProcess(): number {
  return clients.all().reduce((sum, c) => sum + c.transport.requestsSent, 0);
}

function grantedByBudget(): number {
  const granted = clients.budget?.granted() ?? { normal: 0, high: 0, background: 0 };
  return granted.normal + granted.high + granted.background;
}

it('builds every client of the process on one budget: controllers, collector and sweeper, events, Lease, reviews', () => {
  const budget = clients.budget;
  expect(budget).toBeDefined();
  expect(clients.all()).toHaveLength(5);
  for (const c of clients.all()) expect(c.transport.requestLimiter).toBe(budget);
});

it('with no --qps, no client is limited', async () => {
  const unlimited = await createProcessClients({
    kubeconfig: env.kubeconfig,
    qps: 0,
    burst: 100,
    impersonate: undefined,
    leaderElect: true,
    leaseDurationSeconds: 15,
    metricsAuth: 'none',
  });
  try {
    expect(unlimited.budget).toBeUndefined();
    for (const c of unlimited.all()) expect(c.transport.requestLimiter).toBeUndefined();
  } finally {
    for (const c of unlimited.all()) c.close();
  }
});

it('a cascade (deletes and its GarbageCollected Event), a Lease read and a review all spend the one budget', async () => {
  const namespace = await createNamespace(env, 'budget');
  const owner = await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace } });
  for (let i = 0; i < DEPENDENTS; i++) {
    await env.client.create(cm, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `dep-${i}`,
        namespace,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
      },
    });
  }
  gc = createGarbageCollector({
    client: clients.backgroundClient,
    eventClient: clients.eventClient,
    clock: systemClock,
    logger: createLogger('silent'),
    mode: 'cluster',
    workers: 4,
    namespace,
  });
  await gc.start();
  await gc.waitForSync();
  const eventsBefore = clients.eventClient.transport.requestsSent;

  await env.client.delete(cm, namespace, 'owner', { uid: owner.metadata.uid, propagationPolicy: 'Background' });
  await waitFor('the dependents to be collected', async () => (await env.client.list(cm, namespace)).items.length === 0, {
    timeoutMs: 60_000,
  });
  await gc.engine.flushEvents();
  await waitFor("the cascade's GarbageCollected Event", async () => {
    const events = (await env.client.raw('GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`)) as {
      items?: { reason?: string }[];
    };
    return events.items?.some((e) => e.reason === 'GarbageCollected');
  });
  await kubeLeaseStore(clients.leaseClient!, namespace, 'budget-test').get();
  await reviewNonResourceAccess(clients.reviewClient!, { username: 'system:anonymous', groups: [] }, 'get', '/metrics');
  await gc.stop();
  gc = undefined;

  // The collector's deletes went through the background client (as main.ts wires it), its Event through the events client.
  expect(clients.backgroundClient.transport.requestsSent).toBeGreaterThanOrEqual(DEPENDENTS);
  expect(clients.budget!.granted().background).toBe(clients.backgroundClient.transport.requestsSent);
  expect(clients.eventClient.transport.requestsSent).toBeGreaterThan(eventsBefore);
  expect(clients.leaseClient!.transport.requestsSent).toBeGreaterThan(0);
  expect(clients.reviewClient!.transport.requestsSent).toBeGreaterThan(0);
  // Every request any of them sent took a token from the one budget, and nothing else did.
  expect(grantedByBudget()).toBe(sentByProcess());
  expect(clients.budget!.granted().high).toBe(clients.leaseClient!.transport.requestsSent + clients.reviewClient!.transport.requestsSent);
});
