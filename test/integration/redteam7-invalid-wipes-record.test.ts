/**
 * Red team 7: a Bundle spec with a validation issue (a reference to a
 * resource not in the Bundle, a kind whose CRD is not installed yet, a
 * duplicate name) makes the operator itself write a status with no
 * pendingDeletions, and with declaredRules of the new spec only: the record
 * of every running countdown is wiped, not by "a status writer other than
 * the operator" (the known limit) but by the operator. An earlier
 * countdown's stamp and proofs written back while the spec is invalid (the
 * red team 4 replay the record was added to stop) then end a 1h countdown
 * at once when the spec is corrected.
 *
 * Steps: a Bundle lists ConfigMaps rw-x (manifest `deletionDelay: 20s`) and
 * rw-stays. rw-x leaves the spec (a 20s countdown starts; its annotations
 * are saved), is listed again with `deletionDelay: 1h` (countdown
 * cancelled), and leaves again: a 1h countdown runs, recorded in
 * status.pendingDeletions. An edit of the Bundle gives rw-stays a reference
 * to a resource that is not in the Bundle (a typo). The operator writes a
 * status for it: pendingDeletions empty. The saved annotations of the first
 * countdown (stamp, stamp-proof, deletionDelay, declared-rules) are written
 * back on rw-x (a restore, an old copy re-applied). The typo is fixed.
 *
 * Expected (docs/safety.md: "the record decides over them: a proven stamp
 * earlier than the recorded one reads as the recorded one, and the recorded
 * deadline and declared rules are floors"): rw-x keeps its 1h countdown.
 * Actual: deleted on the first pass after the fix.
 *
 * Cause: src/core/bundle/plan.ts:76 returns an invalid spec's plan with
 * prune: [], and src/core/bundle/status.ts:65/72 (pendingDeletionsOf,
 * src/core/bundle/pending.ts:13) derives status.pendingDeletions from the
 * plan's prune actions only, so the status written for an invalid spec
 * (controller.ts:306-311) records no countdown; declaredRules is the new
 * spec's (plan.ts:54). The next valid pass reads that status as its record
 * (plan-input.ts:143, countdown.ts:57-70): nothing recorded for rw-x, and
 * the written-back proofs decide (countdown.ts:90-98, 117-125).
 *
 * Suggested fix: a pass that does not plan the prune (invalid spec) or
 * withholds it carries the previous status's pendingDeletions (and the
 * declaredRules of objects the Bundle still controls) unchanged; more
 * generally, drop a record entry only when the object is gone, re-listed,
 * or its deletion has gone through.
 *
 * Fixed: the status carries on the record's entries of objects a pass did
 * not decide (countdown.ts carriedRecord; status.ts keeps the pending
 * entries no prune action of the pass names).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, kubectl, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt7-invalid');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('an invalid spec does not wipe the record of a running countdown', async () => {
  const { env, ns, t } = f;
  type Res = { object: Record<string, unknown>; references?: { resource: string }[] };
  const manifest = (resources: Res[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rw', namespace: ns },
    spec: {
      resources: resources.map((r) => ({
        name: (r.object.metadata as { name: string }).name,
        ...(r.references ? { references: r.references } : {}),
        spec: { object: r.object },
      })),
    },
  });
  const apply = (resources: Res[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(resources), { fieldManager: 'test-user', force: true });
  const annotationsOf = async () => (await env.client.get(t.configMap, ns, 'rw-x')).metadata.annotations ?? {};
  const statusOf = async () => {
    const b = await getBundle(env, ns, 'rw');
    const s = b?.status as { observedGeneration?: number; pendingDeletions?: { name: string; deleteAfter: string }[] } | undefined;
    return { observed: s?.observedGeneration === b?.metadata.generation, pending: s?.pendingDeletions ?? [] };
  };
  const stays = { object: configMap('rw-stays') };

  // An earlier life: the manifest said 20s, the object left and was put back before its countdown ended.
  await apply([{ object: configMap('rw-x', { a: 'b' }, { [Annotations.deletionDelay]: '20s' }) }, stays]);
  await waitForReady(env, ns, 'rw');
  const uid = (await env.client.get(t.configMap, ns, 'rw-x')).metadata.uid;
  await apply([stays]);
  await waitFor('the first countdown', async () => (await annotationsOf())[Annotations.deletionTimestamp] !== undefined);
  const old = await annotationsOf();
  await apply([{ object: configMap('rw-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }) }, stays]);
  await waitFor(
    'the countdown cancelled, 1h declared',
    async () =>
      (await annotationsOf())[Annotations.deletionTimestamp] === undefined && (await annotationsOf())[Annotations.deletionDelay] === '1h',
  );

  // Now it leaves for good, with an hour to run, recorded in the status.
  await apply([stays]);
  await waitFor(
    'the 1h countdown recorded',
    async () =>
      (await annotationsOf())[Annotations.deletionTimestamp] !== undefined && (await statusOf()).pending.some((p) => p.name === 'rw-x'),
  );

  // A typo: rw-stays refers to a resource that is not in the Bundle. The status written for it keeps the countdown's record
  // (before the fix it recorded none).
  await apply([{ ...stays, references: [{ resource: 'rw-stay' }] }]);
  await waitFor('the invalid spec observed', async () => (await statusOf()).observed);
  await sleep(1_000);
  expect((await statusOf()).pending.some((p) => p.name === 'rw-x')).toBe(true);

  // The earlier countdown's annotations are written back (a saved copy re-applied, a restore).
  await sleep(Math.max(0, Date.parse(old[Annotations.deletionTimestamp] ?? '') + 21_000 - Date.now()));
  const keys = [Annotations.deletionTimestamp, Annotations.stampProof, Annotations.deletionDelay, Annotations.declaredRules];
  await kubectl(['annotate', '--overwrite', 'configmap', 'rw-x', '-n', ns, ...keys.map((k) => `${k}=${old[k] ?? ''}`)]);
  await sleep(1_000);

  // The typo is fixed: the 1h countdown still runs.
  await apply([stays]);
  await waitFor('the fixed spec observed', async () => (await statusOf()).observed);
  await sleep(6_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rw-x'), uid);
}, 150_000);
