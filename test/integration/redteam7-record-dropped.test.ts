/**
 * Red team 7: the operator's own status write drops the countdown record
 * (status.declaredRules) of an object that left the spec before its
 * countdown was stamped, whenever that pass did not prune (any resource of
 * the Bundle failing: an apply refused, an unreadable delay, a workload whose
 * readiness is an error, an invalid spec). From then on the object's floor
 * is its own declared-rules proof alone, and an earlier proof written back
 * (the red team 4 replay the record was added to stop) brings its deletion
 * forward again.
 *
 * Steps: a Bundle (no deletionDefaults) lists ConfigMaps rd-x, whose
 * manifest says `deletionDelay: 1s`, and rd-y. rd-x's annotations are saved
 * (`kubectl get -o yaml`). The manifest of rd-x changes to `deletionDelay:
 * 1h`; the operator applies it (declared-rules proof for 1h; status
 * .declaredRules records 1h). Then one edit of the Bundle removes rd-x and
 * puts a typo into rd-y's delay (`deletionDelay: 1hour`): rd-y is a terminal
 * Error, so nothing is pruned this pass, and the status written for it
 * records the new spec's declaredRules, without rd-x. rd-x's saved
 * annotations are written back (a restore, an old copy re-applied: 1s and
 * the old, still valid declared-rules proof). The typo is fixed.
 *
 * Expected (docs/safety.md: "the record decides over them ... the recorded
 * deadline and declared rules are floors"; the known limit names only a
 * status written by an earlier version or wiped by another writer): rd-x's
 * last manifest said 1h, so it is stamped with 1h and kept.
 * Actual: stamped with 1s and deleted within seconds.
 *
 * Cause: src/core/bundle/plan.ts:54 sets declaredRules from the current
 * spec in every plan, also when the prunes are withheld
 * (plan.ts:96/105 withholdPrunes, :76 an invalid spec) and the status
 * writes it (src/core/bundle/status.ts:73). The next pass reads a record
 * without rd-x (countdown.ts:57-70), so declaredFloorOf
 * (countdown.ts:109-114) reads the record as "declares nothing" (the
 * defaults) and the written-back proof decides.
 *
 * Suggested fix: keep an entry of status.declaredRules for an object that
 * left the spec until its countdown is recorded in status.pendingDeletions
 * (carry the previous status's entries for objects the Bundle still
 * controls and has not stamped), or record the rules at the moment the
 * object leaves the spec (a pending entry without a stamp).
 *
 * Fixed: status.declaredRules keeps the entry of an object the Bundle still
 * holds and no longer lists (countdown.ts carriedRecord), and the entry of
 * a manifest whose rules cannot be read stays the previous one
 * (readableDeclaredRules).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, kubectl, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt7-record');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('a pass that prunes nothing does not drop the record of an object that left the spec', async () => {
  const { env, ns, t } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rd', namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  const statusOf = async () => {
    const b = await getBundle(env, ns, 'rd');
    const s = b?.status as { observedGeneration?: number; declaredRules?: { name: string; deletionDelay?: string }[] } | undefined;
    return { observed: s?.observedGeneration === b?.metadata.generation, declared: s?.declaredRules ?? [] };
  };

  // 1. rd-x's manifest says 1s; its annotations are saved.
  await apply([configMap('rd-x', { a: 'b' }, { [Annotations.deletionDelay]: '1s' }), configMap('rd-y')]);
  await waitForReady(env, ns, 'rd');
  const first = await env.client.get(t.configMap, ns, 'rd-x');
  const uid = first.metadata.uid;
  const oldProof = first.metadata.annotations?.[Annotations.declaredRules];
  expect(oldProof).toBeDefined();

  // 2. rd-x's manifest says 1h: applied, and recorded in the status.
  await apply([configMap('rd-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }), configMap('rd-y')]);
  await waitFor('1h applied and recorded', async () => {
    const s = await statusOf();
    const x = await env.client.get(t.configMap, ns, 'rd-x');
    return (
      s.observed &&
      s.declared.some((d) => d.name === 'rd-x' && d.deletionDelay === '1h') &&
      x.metadata.annotations?.[Annotations.deletionDelay] === '1h' &&
      x.metadata.annotations?.[Annotations.declaredRules] !== oldProof
    );
  });

  // 3. One edit removes rd-x and puts a typo into rd-y's delay: nothing is pruned this pass.
  await apply([configMap('rd-y', { key: 'value' }, { [Annotations.deletionDelay]: '1hour' })]);
  await waitFor('the pass with the typo written', async () => (await statusOf()).observed);
  await sleep(2_000);
  const held = await env.client.get(t.configMap, ns, 'rd-x');
  expect(held.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
  // What the status now records for rd-x: still its last manifest's 1h (before the fix: nothing).
  expect((await statusOf()).declared.some((d) => d.name === 'rd-x')).toBe(true);

  // 4. rd-x's saved annotations are written back (a restore, an old copy re-applied).
  await kubectl([
    'annotate',
    '--overwrite',
    'configmap',
    'rd-x',
    '-n',
    ns,
    `${Annotations.deletionDelay}=1s`,
    `${Annotations.declaredRules}=${oldProof}`,
  ]);
  await sleep(1_000);

  // 5. The typo is fixed: rd-x's countdown starts, under the 1h its last manifest declared.
  await apply([configMap('rd-y')]);
  await waitFor('the countdown to start', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'rd-x');
    return o === undefined || o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined;
  });
  await sleep(6_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rd-x'), uid);
}, 120_000);
