/**
 * The operator's API clients, one per purpose (each with its own connection
 * pool), all drawing from one request budget: `--qps`/`--burst` bound what
 * the whole process sends, events, the Lease and the metrics endpoint's
 * reviews included. Wiring only (main.ts; the budget test builds the same).
 */
import type { Config } from './config.js';
import { KubeClient } from './kube/client.js';
import type { SendGuard } from './kube/errors.js';
import type { TransportOptions } from './kube/transport.js';
import { systemClock, type Clock } from './kube/clock.js';
import { RequestBudget } from './kube/request-budget.js';

export type ProcessClientConfig = Pick<
  Config,
  'kubeconfig' | 'qps' | 'burst' | 'impersonate' | 'leaderElect' | 'leaseDurationSeconds' | 'metricsAuth'
>;

export interface ProcessClients {
  /** The shared budget; undefined when --qps is 0 (no client-side limit). */
  budget: RequestBudget | undefined;
  /** Controllers, the collector's reads and deletes, informers' lists. */
  client: KubeClient;
  /**
   * The collector and the released-object sweeper: their lists of every
   * resource at start and their cascades take turns with the Bundle
   * controller's requests in the budget instead of queueing ahead of them
   * (RequestBudget). Fenced by the Lease like `client`.
   */
  backgroundClient: KubeClient;
  /** Events, on connections of their own (a slow event write never holds a delete's socket). */
  eventClient: KubeClient;
  /** The Lease (with --leader-elect): its own connections and a timeout within the renew deadline; first in the budget's queue. */
  leaseClient: KubeClient | undefined;
  /** TokenReviews and SubjectAccessReviews for /metrics (with --metrics-auth=kubernetes); first in the budget's queue. */
  reviewClient: KubeClient | undefined;
  /** Every client above (for closing, and for tests counting requests). */
  all(): KubeClient[];
}

/**
 * `writeFence` is asked before every write of the controllers' and events'
 * clients leaves (main: refuse unless this replica holds its Lease); the
 * Lease's own client and the review client have none: renewing the Lease and
 * reviewing a scrape must go on whatever the fence says.
 */
export async function createProcessClients(
  config: ProcessClientConfig,
  clock: Clock = systemClock,
  writeFence?: SendGuard,
  requestObserver?: TransportOptions['requestObserver'],
): Promise<ProcessClients> {
  const budget = config.qps > 0 ? new RequestBudget(clock, { qps: config.qps, burst: config.burst }) : undefined;
  const shared = {
    ...(budget ? { limiter: budget } : {}),
    ...(requestObserver ? { requestObserver } : {}),
    ...(config.impersonate ? { impersonateUser: config.impersonate } : {}),
  };
  const fenced = writeFence ? { writeFence } : {};
  // Watches have their own uncapped pool in the transport; maxSockets bounds requests only.
  const client = await KubeClient.fromEnvironment(config.kubeconfig, { ...shared, ...fenced, maxSockets: 64 });
  const backgroundClient = await KubeClient.fromEnvironment(config.kubeconfig, {
    ...shared,
    ...fenced,
    priority: 'background',
    maxSockets: 32,
  });
  const eventClient = await KubeClient.fromEnvironment(config.kubeconfig, { ...shared, ...fenced, maxSockets: 8 });
  // Renewals must never queue behind the controllers' requests: a socket
  // pool of their own, a timeout well inside the lease, and the head of the
  // budget's queue (they still count: the flags bound the whole process).
  const leaseClient = config.leaderElect
    ? await KubeClient.fromEnvironment(config.kubeconfig, {
        ...shared,
        priority: 'high',
        maxSockets: 2,
        requestTimeoutMs: Math.max(1_000, Math.floor((config.leaseDurationSeconds * 1000) / 5)),
      })
    : undefined;
  // A scrape must not wait behind a cascade either (Prometheus gives up after its scrape timeout).
  const reviewClient =
    config.metricsAuth === 'kubernetes'
      ? await KubeClient.fromEnvironment(config.kubeconfig, { ...shared, priority: 'high', maxSockets: 4 })
      : undefined;
  return {
    budget,
    client,
    backgroundClient,
    eventClient,
    leaseClient,
    reviewClient,
    all: () => [client, backgroundClient, eventClient, ...(leaseClient ? [leaseClient] : []), ...(reviewClient ? [reviewClient] : [])],
  };
}
