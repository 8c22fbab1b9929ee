/**
 * Red team round three (redteam3): one object, two groups.
 *
 * What a user does: a Bundle lists a `v1` Event (core group). The user
 * modernises the manifest to `events.k8s.io/v1` Event, same name: the same
 * object, served by the API server under two groups (kubectl get events and
 * kubectl get events.events.k8s.io show one object). Or: a second Bundle
 * lists it under the other group while the first lets go of it.
 *
 * What happens: the pass applies the object under the new group (same UID,
 * Ready), then prunes it: the inventory still watches the core-group kind
 * (status.managedKinds keeps `Event` beside `Event.events.k8s.io`), the
 * object cache reports the same object under `/Event/...`, and prune asks
 * whether `/Event/<ns>/<name>` is in the spec, which now only says
 * `events.k8s.io/Event/<ns>/<name>`. The object the Bundle lists is deleted
 * (the Bundle even reports 2/2 Ready).
 *
 * Worse, with no edit at all: one Bundle lists a core `v1` Event (so the
 * operator watches that kind) and an unrelated Bundle lists an
 * `events.k8s.io/v1` Event. The shared object cache shows the second
 * Bundle's own object under the core group too (`referencing(uid)` spans
 * every watched kind); its inventory records `Event` as still relevant, and
 * every pass prunes the object it has just applied: delete, re-create,
 * delete, a new UID every ~50 ms. Two Bundles listing the same object under
 * the two groups do not see each other's claim either (claimsByObject keys
 * by group): both write themselves as controller in turn (422s), and the
 * object is deleted in the same loop.
 *
 * Who decides: src/core/bundle/prune.ts:111 (`!input.inSpec.has(objectKey(o))`,
 * objectKey = group/kind/ns/name, src/core/bundle/objects.ts:62), fed by
 * src/core/bundle/plan.ts:161-162 and the object cache's `referencing`
 * (src/controllers/bundle/gather.ts controlledElsewhere); the same key
 * decides `listedByOther` (prune.ts) from claimsByObject (ownership.ts).
 * Identity by group misses aliases: the object is one UID.
 */
import { expectKept, resourceType, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt3-alias');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const coreEvent = (name: string, ns: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name },
  involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: ns },
  reason: 'Test',
  message: 'hello',
  type: 'Normal',
  action: 'Testing',
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingComponent: 'rt3',
  reportingInstance: 'rt3-1',
});
const groupEvent = (name: string, ns: string): Record<string, unknown> => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name },
  regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: ns },
  reason: 'Test',
  note: 'hello',
  type: 'Normal',
  action: 'Testing',
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingController: 'rt3',
  reportingInstance: 'rt3-1',
});

it('a manifest moved from v1 Event to events.k8s.io/v1 Event (the same object) is kept', async () => {
  const { env, ns } = f;
  const ev = await resourceType(env, 'v1', 'Event');
  await applyBundle(env, ns, 'alias', [
    { name: 'e', object: coreEvent('alias-e', ns) },
    { name: 'c', object: configMap('alias-c') },
  ]);
  await waitForReady(env, ns, 'alias');
  const uid = (await env.client.get(ev, ns, 'alias-e')).metadata.uid;

  await applyBundle(env, ns, 'alias', [
    { name: 'e', object: groupEvent('alias-e', ns) },
    { name: 'c', object: configMap('alias-c') },
  ]);
  await waitFor('the new spec to be observed', async () => {
    const b = await getBundle(env, ns, 'alias');
    return (b?.status as { observedGeneration?: number } | undefined)?.observedGeneration === b?.metadata.generation;
  });
  await sleep(4_000);
  expectKept(await env.client.tryGet(ev, ns, 'alias-e'), uid);
});

it('a Bundle listing an events.k8s.io/v1 Event keeps it while an unrelated Bundle lists a v1 Event', async () => {
  const { env, ns } = f;
  const ev = await resourceType(env, 'v1', 'Event');
  // Two unrelated Bundles, no edit at all: one lists a core v1 Event (the operator now watches that kind), the other
  // an events.k8s.io/v1 Event. The second Bundle's own object shows up in the core-group cache as "controlled, not in
  // the spec": pruned, re-created, pruned again, in a loop.
  await applyBundle(env, ns, 'old-style', [{ name: 'e', object: coreEvent('alias-other', ns) }]);
  await waitForReady(env, ns, 'old-style');
  await applyBundle(env, ns, 'new-style', [{ name: 'e', object: groupEvent('alias-mine', ns) }]);
  await waitForReady(env, ns, 'new-style');
  const uid = (await env.client.get(ev, ns, 'alias-mine')).metadata.uid;
  await sleep(5_000);
  expectKept(await env.client.tryGet(ev, ns, 'alias-mine'), uid);
});
