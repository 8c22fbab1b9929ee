/**
 * Red team 6: a deletionPolicy Orphan taken off a listed object by hand
 * (written as Delete, or removed) while the operator is down is honoured by
 * the operator (its declared-rules floor says Orphan) but not by the chart's
 * deletion guard, which reads only the live annotation: a foreground
 * deletion of the Bundle then lets kube-controller-manager delete it.
 *
 * Steps: a Bundle lists ConfigMaps rt6h-edited, rt6h-removed and
 * rt6h-control, each with deletionPolicy Orphan in its manifest (the
 * operator applies them with their declared-rules proof), and rt6h-plain.
 * The chart's deletion guard is installed for kube-controller-manager. The
 * operator goes down (a restart, an upgrade). Another tool writes
 * deletionPolicy Delete on rt6h-edited and removes it from rt6h-removed
 * (kubectl annotate / a merge patch). `kubectl delete bundle
 * --cascade=foreground`. The operator comes back.
 *
 * Expected, docs/safety.md: "Edits by hand can put a deletion off, never
 * bring it forward ... a deletionPolicy: Delete written by hand, on a listed
 * object (while the operator is down, say) ... is read as what the Bundle
 * said"; foreground "releases Orphan and Approve objects ... (the chart's
 * deletion guard refuses the collectors' deletes of those until they are
 * released)". The operator would release all three (finalize.ts
 * keptFromCascade: stricterRules(live, countdown.floor) with the
 * declared-rules floor = Orphan). rt6h-control is kept; rt6h-edited and
 * rt6h-removed are deleted by kube-controller-manager before it comes back.
 * (Not the documented limit about an Orphan *added to a manifest* and not
 * yet applied: here the live object was applied with Orphan and sealed so.)
 *
 * Cause: charts/bundlesmith/templates/deletionguard.yaml:37-38 (variable
 * policy) and the Orphan validation (:61) read the live
 * smith.atlassian.com/deletionPolicy annotation only; the floor the operator
 * reads (src/core/bundle/countdown.ts:22-26, declaredFloor over
 * smith.atlassian.com/declared-rules, src/core/softdelete/stamp-seal.ts:107)
 * is invisible to it. The guard is the only thing ordering the release
 * before the collector (finalize.ts:243-250, keptFromCascade).
 *
 * Suggested fix: make the guard read what the operator sealed, not only the
 * annotation a person can edit: the declared-rules value is URI-encoded
 * plain text before its MAC, so the guard can refuse when either the live
 * deletionPolicy or the policy inside smith.atlassian.com/declared-rules is
 * Orphan/Approve (a forged declared-rules value can only make the guard
 * stricter: it keeps). Or have the guard refuse every collector delete of a
 * Bundle-controlled object carrying a declared-rules annotation until the
 * finalizer has stripped the controller reference or marked it (e.g. a
 * `smith.atlassian.com/cascade-cleared` annotation the finalizer writes on
 * objects it leaves to the collector).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { installDeletionGuard } from './deletion-propagation.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const f = referenceFixture('rt6he');

it('foreground, deletion guard installed: an Orphan object whose live policy was edited by hand while the operator was down is not deleted by the collector', async () => {
  const { env, ns, t } = f;
  const orphan = { [Annotations.deletionPolicy]: 'Orphan' };
  await applyBundle(env, ns, 'he', [
    { name: 'edited', object: configMap('rt6h-edited', { k: 'v' }, orphan) },
    { name: 'removed', object: configMap('rt6h-removed', { k: 'v' }, orphan) },
    { name: 'control', object: configMap('rt6h-control', { k: 'v' }, orphan) },
    { name: 'plain', object: configMap('rt6h-plain') },
  ]);
  await waitForReady(env, ns, 'he');
  const edited = await env.client.get(t.configMap, ns, 'rt6h-edited');
  const removed = await env.client.get(t.configMap, ns, 'rt6h-removed');
  const control = await env.client.get(t.configMap, ns, 'rt6h-control');
  expect(edited.metadata.annotations?.[Annotations.declaredRules]).toBeDefined();
  expect(removed.metadata.annotations?.[Annotations.declaredRules]).toBeDefined();

  const removeGuard = await installDeletionGuard(f, t.configMap, control.metadata);
  try {
    // The operator is down (a restart); another tool edits the live policies meanwhile.
    await f.operator.stop();
    await env.client.patch(
      t.configMap,
      ns,
      'rt6h-edited',
      { metadata: { annotations: { [Annotations.deletionPolicy]: 'Delete' } } },
      'merge',
      { fieldManager: 'another-tool' },
    );
    await env.client.patch(
      t.configMap,
      ns,
      'rt6h-removed',
      { metadata: { annotations: { [Annotations.deletionPolicy]: null } } },
      'merge',
      { fieldManager: 'another-tool' },
    );
    const bundle = await getBundle(env, ns, 'he');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'he', { uid: bundle?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    await waitFor(
      'the collector to take the plain object',
      async () => (await env.client.tryGet(t.configMap, ns, 'rt6h-plain')) === undefined,
      { timeoutMs: 90_000 },
    );
    await sleep(5_000);
    await f.startOperator();
    await waitFor('he to be gone', async () => (await getBundle(env, ns, 'he')) === undefined, { timeoutMs: 90_000 });
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt6h-control'), control.metadata.uid);
    const survivors = [];
    for (const [name, uid] of [
      ['rt6h-edited', edited.metadata.uid],
      ['rt6h-removed', removed.metadata.uid],
    ] as const) {
      const o = await env.client.tryGet(t.configMap, ns, name);
      if (o?.metadata.uid === uid && o.metadata.deletionTimestamp === undefined) survivors.push(name);
    }
    expect(survivors).toEqual(['rt6h-edited', 'rt6h-removed']);
  } finally {
    await removeGuard();
  }
}, 300_000);
