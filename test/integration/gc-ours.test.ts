/**
 * The garbage-collection scenarios against our collector, on the shared
 * test apiserver. The collector acts only on the namespaces created here
 * (and on cluster-scoped objects labelled for the scenarios), so other
 * tests' objects are never touched.
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { connect, createNamespace, resourceType, waitFor, waitForGone, type TestEnv } from './harness.js';
import { CLUSTER_SCOPED_LABEL, TEST_GROUP, installWidgetCrd, scenarios, type ScenarioContext } from './gc-scenarios.js';
import type { ResourceType } from '../../src/kube/types.js';

let env: TestEnv;
let gc: GarbageCollector;
let cm: ResourceType;
let widget: ResourceType;
const namespaces = new Map<string, [string, string]>();
/** Namespaces of the ours-only start-up test. */
const START_UP = 'start-up sweep';
const SERIES = 'cascade event series';

beforeAll(async () => {
  env = await connect();
  cm = await resourceType(env, 'v1', 'ConfigMap');
  widget = await installWidgetCrd(env);
  for (const s of scenarios) namespaces.set(s.name, [await createNamespace(env, 'gc'), await createNamespace(env, 'gc2')]);
  namespaces.set(START_UP, [await createNamespace(env, 'gc'), await createNamespace(env, 'gc2')]);
  namespaces.set(SERIES, [await createNamespace(env, 'gc-series'), await createNamespace(env, 'gc-series2')]);
  gc = newCollector();
  await gc.start();
  await gc.waitForSync();
});

function newCollector(): GarbageCollector {
  return new GarbageCollector(env.client, {
    mode: 'cluster',
    workers: 4,
    namespaces: [...namespaces.values()].flat(),
    clusterScopedLabel: CLUSTER_SCOPED_LABEL,
    cycleTimeoutPerDependentMs: 2_000,
    discoveryIntervalMs: 5_000,
    reportingInstance: 'gc-ours-test',
    log: (level, message) => {
      if (level === 'warn' || level === 'error') console.warn(`[gc ${level}] ${message}`);
    },
  });
}

/** A crash: the collector stops, its graph is lost. */
async function collectorDown(): Promise<void> {
  await gc.stop();
}

/** A new collector with an empty graph; not waiting for its sync, so that it decides as soon as it lets itself. */
async function collectorUp(): Promise<void> {
  gc = newCollector();
  await gc.start();
}

afterAll(async () => {
  await gc?.stop();
  env?.close();
});

describe('garbage collector (ours) on a real apiserver', () => {
  it('watches CRD-defined resources and ignores events', async () => {
    const watched = gc.watchedResources().map((r) => `${r.plural}.${r.group}`);
    expect(watched).toContain('widgets.gc.bundlesmith.test');
    expect(watched).toContain('configmaps.');
    expect(watched).not.toContain('events.');
    expect(watched).not.toContain('events.events.k8s.io');
    expect(gc.hasSynced()).toBe(true);
    // The graph holds what was listed: a namespace this file made is in it, under its UID.
    const [someNs] = [...namespaces.values()][0]!;
    const listed = await env.client.get(await resourceType(env, 'v1', 'Namespace'), undefined, someNs);
    expect(gc.engine.graph.get(listed.metadata.uid)?.name).toBe(someNs);
    expect(gc.graphSize()).toBe(gc.engine.graph.size);
  });

  it.each(scenarios.map((s) => [s.name, s] as const))('%s', async (name, scenario) => {
    const [ns, ns2] = namespaces.get(name)!;
    const collectorWatches = async (rt: ResourceType): Promise<void> => {
      await waitFor(
        `the collector to watch ${rt.plural}`,
        () => gc.watchedResources().some((w) => w.group === rt.group && w.plural === rt.plural),
        { timeoutMs: 30_000 },
      );
      await gc.waitForSync();
    };
    const ctx: ScenarioContext = { env, ns, ns2, cm, widget, timeoutMs: 45_000, collectorWatches, collectorDown, collectorUp };
    await scenario.run(ctx);
  });

  // Ours only: kube-controller-manager collects such a dependent after a
  // restart only if its informers handed it over before the owner (random:
  // see core/gc/builder.ts, foregroundWaitsAtStart).
  it('after a restart, a non-blocking dependent of an owner already waiting in foreground deletion is collected, even listed after its owner', async () => {
    const [ns] = namespaces.get(START_UP)!;
    const hold = `${TEST_GROUP}/hold`;
    const make = (name: string, owner?: { o: { metadata: { name: string; uid: string } }; blocking: boolean }, finalizers?: string[]) =>
      env.client.create(cm, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name,
          namespace: ns,
          ...(owner
            ? {
                ownerReferences: [
                  {
                    apiVersion: 'v1',
                    kind: 'ConfigMap',
                    name: owner.o.metadata.name,
                    uid: owner.o.metadata.uid,
                    blockOwnerDeletion: owner.blocking,
                  },
                ],
              }
            : {}),
          ...(finalizers ? { finalizers } : {}),
        },
      });
    // Names in list order: the owner comes first, so its transition into foreground deletion finds neither dependent in the graph.
    const owner = await make('a-owner');
    const held = await make('b-held', { o: owner, blocking: true }, [hold]);
    const loose = await make('c-loose', { o: owner, blocking: false });
    await collectorDown();
    await env.client.delete(cm, ns, owner.metadata.name, { uid: owner.metadata.uid, propagationPolicy: 'Foreground' });
    await collectorUp();
    await waitForGone(env, cm, ns, loose.metadata.name, { timeoutMs: 45_000, intervalMs: 200 });
    // The owner still waits for its held, blocking dependent, which is being deleted.
    const waiting = await env.client.get(cm, ns, owner.metadata.name);
    expect(waiting.metadata.uid).toBe(owner.metadata.uid);
    expect(waiting.metadata.finalizers).toContain('foregroundDeletion');
    const heldNow = await env.client.get(cm, ns, held.metadata.name);
    expect(heldNow.metadata.deletionTimestamp).toBeDefined();
    await env.client.patch(cm, ns, held.metadata.name, { metadata: { finalizers: [] } }, 'merge');
    await waitForGone(env, cm, ns, owner.metadata.name, { timeoutMs: 45_000, intervalMs: 200 });
  });

  it('leaves one GarbageCollected event per cascade, on the owner, naming what it deleted and the owner chain', async () => {
    const scenario = scenarios.find((s) => s.name === 'a dependent created with a non-existent owner is collected');
    const [ns] = namespaces.get(scenario!.name)!;
    const events = (await env.client.raw('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)) as {
      items?: { reason?: string; note?: string; regarding?: { name?: string } }[];
    };
    const collected = (events.items ?? []).filter((e) => e.reason === 'GarbageCollected');
    expect(collected.map((e) => e.regarding?.name)).toEqual(['never-existed']);
    expect(collected[0]?.note).toContain('Deleted 1 dependent (ConfigMap: 1)');
    expect(collected[0]?.note).toContain('e.g. ConfigMap/orphan-at-birth');
    expect(collected[0]?.note).toContain('Owner chain: ConfigMap never-existed (gone)');
  });

  it('a cascade of many dependents writes one Event, updated as a series, not one per object', async () => {
    const [ns] = namespaces.get(SERIES)!;
    const owner = await env.client.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'many-owner', namespace: ns } });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'many-owner', uid: owner.metadata.uid };
    for (let i = 0; i < 40; i++)
      await env.client.create(cm, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `many-${i}`, namespace: ns, ownerReferences: [ref] },
      });
    await env.client.delete(cm, ns, 'many-owner', { uid: owner.metadata.uid });
    await waitFor(
      'the 40 dependents to be collected',
      async () =>
        (await env.client.list(cm, ns)).items.filter(
          (o) => o.metadata.name.startsWith('many-') && o.metadata.deletionTimestamp === undefined,
        ).length === 0,
      { timeoutMs: 45_000 },
    );
    const said = await waitFor(
      'the cascade event to say 40',
      async () => {
        const events = (await env.client.raw('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)) as {
          items?: { reason?: string; note?: string; regarding?: { name?: string }; series?: { count?: number } }[];
        };
        const collected = (events.items ?? []).filter((e) => e.reason === 'GarbageCollected');
        return collected.length === 1 && collected[0]?.note?.includes('Deleted 40 dependents (ConfigMap: 40)') ? collected : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(said[0]?.regarding?.name).toBe('many-owner');
  });
});
