/**
 * Discovery with one aggregated API group that cannot be reached (an
 * APIService whose backing Service does not exist, as with a metrics server
 * that is down): the other groups are served, and the garbage collector
 * starts and collects (issue 9).
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { Discovery } from '../../src/kube/discovery.js';
import type { ResourceType } from '../../src/kube/types.js';
import { conditionOf, connect, createNamespace, resourceType, uniqueName, waitFor, waitForGone, type TestEnv } from './harness.js';

const BROKEN_GROUP = 'broken.discovery.bundlesmith.test';

let env: TestEnv;
let apiService: ResourceType;
let apiServiceName: string;
let cm: ResourceType;

beforeAll(async () => {
  env = await connect();
  cm = await resourceType(env, 'v1', 'ConfigMap');
  apiService = await resourceType(env, 'apiregistration.k8s.io/v1', 'APIService');
  apiServiceName = `v1.${BROKEN_GROUP}`;
  await env.client.create(apiService, {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: apiServiceName },
    spec: {
      group: BROKEN_GROUP,
      version: 'v1',
      service: { namespace: 'default', name: uniqueName('no-such-service') },
      groupPriorityMinimum: 1000,
      versionPriority: 15,
      insecureSkipTLSVerify: true,
    },
  });
  // The aggregator reports it unavailable once it has tried the (missing) Service.
  await waitFor(
    'the APIService to be reported unavailable',
    async () => {
      const o = await env.client.tryGet(apiService, undefined, apiServiceName);
      return conditionOf(o, 'Available')?.status === 'False';
    },
    { timeoutMs: 30_000 },
  );
});

afterAll(async () => {
  if (env && apiServiceName) {
    const o = await env.client.tryGet(apiService, undefined, apiServiceName);
    if (o) await env.client.delete(apiService, undefined, apiServiceName, { uid: o.metadata.uid });
  }
  env?.close();
});

describe('discovery with an unavailable aggregated API', () => {
  it.each(['aggregated', 'legacy'] as const)('serves every other group and names the failed group version (%s format)', async (format) => {
    const discovery = new Discovery(env.client, 0, format);
    await discovery.refresh();
    expect(discovery.failedGroupVersions()).toContain(`${BROKEN_GROUP}/v1`);
    expect(discovery.resources().filter((r) => r.group === BROKEN_GROUP)).toEqual([]);
    expect(discovery.lookup('v1', 'ConfigMap')?.plural).toBe('configmaps');
    expect(discovery.lookup('apps/v1', 'Deployment')?.plural).toBe('deployments');
    expect(discovery.lookup('smith.atlassian.com/v1', 'Bundle')?.plural).toBe('bundles');
  });

  it('the garbage collector starts, opens its workers and collects', async () => {
    const ns = await createNamespace(env, 'disc');
    const gc = new GarbageCollector(env.client, {
      mode: 'cluster',
      workers: 2,
      namespaces: [ns],
      discoveryIntervalMs: 2_000,
      syncHoldMs: 5_000,
    });
    try {
      await gc.start();
      await gc.waitForSync();
      expect(gc.hasSynced()).toBe(true);
      await waitFor('the collector to run on a complete graph', () => gc.engine.syncBarrier().phase === 'complete', { timeoutMs: 30_000 });
      expect(gc.watchedResources().some((r) => r.group === BROKEN_GROUP)).toBe(false);
      const owner = await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: ns } });
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, blockOwnerDeletion: true };
      const dep = await env.client.create(cm, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'dep', namespace: ns, ownerReferences: [ref] },
      });
      const kept = await env.client.create(cm, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'orphaned', namespace: ns, ownerReferences: [{ ...ref, uid: owner.metadata.uid }] },
      });
      // Foreground needs the complete graph: it completes, with the broken group not watched at all.
      await env.client.delete(cm, ns, 'owner', { uid: owner.metadata.uid, propagationPolicy: 'Foreground' });
      await waitForGone(env, cm, ns, 'dep', { timeoutMs: 30_000 });
      await waitForGone(env, cm, ns, 'orphaned', { timeoutMs: 30_000 });
      await waitForGone(env, cm, ns, 'owner', { timeoutMs: 30_000 });
      expect(dep.metadata.uid).not.toBe(kept.metadata.uid);
    } finally {
      await gc.stop();
    }
  });
});
