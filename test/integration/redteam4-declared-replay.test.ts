/**
 * Red team round four (redteam4): a declared-rules proof is not bound to
 * the manifest it was made for, only to the object's group, kind,
 * namespace and name, so an old one still checks.
 *
 * What a user does: a Bundle's `spec.deletionDefaults` is `deletionDelay:
 * 1h`; one ConfigMap's manifest says `deletionDelay: 1s` of its own. Later
 * the team drops that annotation from the manifest (the object now follows
 * the Bundle's 1h default); the operator applies it, and the object's
 * `smith.atlassian.com/declared-rules` goes with it. Then someone restores
 * the object's annotations as they were saved earlier (`kubectl apply` of an
 * old `kubectl get -o yaml`, a backup tool, a GitOps tool holding the old
 * rendering, or a script copying annotations back): `deletionDelay: 1s` and
 * the old `declared-rules: d1:1s:-:-:<mac>`. No operator downtime is
 * needed: the manifest no longer declares either annotation, so the apply
 * leaves them alone. Then the Bundle drops the ConfigMap.
 *
 * What happens: the old proof checks (src/core/softdelete/stamp-seal.ts
 * declaredMac: an HMAC over group, kind, namespace, name and the rules
 * only: no uid, no Bundle, no generation), so declaredFloor
 * (stamp-seal.ts:113-117, read by countdownOf, src/core/bundle/countdown.ts:24)
 * reads 1s over the defaults: a floor *looser* than the Bundle's defaults
 * alone. The prune stamps a 1s countdown and deletes the ConfigMap within
 * seconds (prune.ts pruneActionFor, decide.ts decideSoftDelete). The safety
 * page says a hand edit can put a deletion off, never bring it forward, and
 * that the floor of an object whose declared-rules was edited by hand is at
 * least the Bundle's defaults (1h here).
 *
 * The same holds for a running countdown: the stamp proof binds uid,
 * stamp and rules, but nothing ties it to *this* countdown, so the stamp,
 * stamp-proof and declared-rules of an earlier countdown of the same object
 * (20s, cancelled by re-listing it; the manifest then said 1h) written back
 * over a running 1h countdown end it at once (second test; stamp-seal.ts
 * open/provenCountdown accept any proof the key made for that uid and stamp).
 *
 * Fixed: the Bundle's status, which only the operator writes, records
 * what each listed object's manifest declares (status.declaredRules) and
 * each countdown's stamp and deadline (status.pendingDeletions); the record
 * decides over the proofs on the object (src/core/bundle/countdown.ts).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, kubectl, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt4-replay');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it("an old declared-rules proof written back does not make a floor looser than the Bundle's defaults", async () => {
  const { env, ns, t } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rp', namespace: ns },
    spec: {
      deletionDefaults: { deletionDelay: '1h' },
      resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })),
    },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  const observed = async () => {
    const b = await getBundle(env, ns, 'rp');
    return (b?.status as { observedGeneration?: number } | undefined)?.observedGeneration === b?.metadata.generation && b !== undefined;
  };

  // 1. The manifest says 1s of its own.
  await apply([configMap('rp-x', { a: 'b' }, { [Annotations.deletionDelay]: '1s' }), configMap('rp-stays')]);
  await waitForReady(env, ns, 'rp');
  const saved = (await env.client.get(t.configMap, ns, 'rp-x')).metadata.annotations ?? {};
  const oldProof = saved[Annotations.declaredRules];
  expect(oldProof).toBeDefined();
  const uid = (await env.client.get(t.configMap, ns, 'rp-x')).metadata.uid;

  // 2. The manifest drops it: the object follows the Bundle's 1h default; the operator's apply takes both annotations off.
  await apply([configMap('rp-x', { a: 'b' }), configMap('rp-stays')]);
  await waitFor(
    'the new manifest applied',
    async () =>
      (await observed()) && (await env.client.get(t.configMap, ns, 'rp-x')).metadata.annotations?.[Annotations.declaredRules] === undefined,
  );

  // 3. The object's old annotations are written back (an old kubectl get -o yaml re-applied, a restore, a script).
  await kubectl([
    'annotate',
    '--overwrite',
    'configmap',
    'rp-x',
    '-n',
    ns,
    `${Annotations.deletionDelay}=1s`,
    `${Annotations.declaredRules}=${oldProof}`,
  ]);
  await sleep(2_000);

  // 4. The Bundle drops it: the floor is at least the Bundle's 1h default.
  await apply([configMap('rp-stays')]);
  await waitFor('the countdown to start', async () => {
    const o = await env.client.tryGet(t.configMap, ns, 'rp-x');
    return o === undefined || o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined;
  });
  await sleep(5_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rp-x'), uid);
});

it("an earlier countdown's stamp and proofs written back over a running 1h countdown do not end it", async () => {
  const { env, ns, t } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rs', namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  const annotationsOf = async () => (await env.client.get(t.configMap, ns, 'rs-x')).metadata.annotations ?? {};

  // An earlier life: the manifest said 20s, the object left the Bundle and was put back before its countdown ended.
  await apply([configMap('rs-x', { a: 'b' }, { [Annotations.deletionDelay]: '20s' }), configMap('rs-stays')]);
  await waitForReady(env, ns, 'rs');
  const uid = (await env.client.get(t.configMap, ns, 'rs-x')).metadata.uid;
  await apply([configMap('rs-stays')]);
  await waitFor('the first countdown', async () => (await annotationsOf())[Annotations.deletionTimestamp] !== undefined);
  const old = await annotationsOf();
  await apply([configMap('rs-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }), configMap('rs-stays')]);
  await waitFor(
    'the countdown cancelled, 1h declared',
    async () =>
      (await annotationsOf())[Annotations.deletionTimestamp] === undefined && (await annotationsOf())[Annotations.deletionDelay] === '1h',
  );

  // Now it leaves for good, with an hour to run.
  await apply([configMap('rs-stays')]);
  await waitFor('the 1h countdown', async () => (await annotationsOf())[Annotations.deletionTimestamp] !== undefined);
  await sleep(Math.max(0, Date.parse(old[Annotations.deletionTimestamp] ?? '') + 21_000 - Date.now()));

  // The earlier countdown's annotations are written back (a saved copy of the object re-applied, a restore).
  const keys = [Annotations.deletionTimestamp, Annotations.stampProof, Annotations.deletionDelay, Annotations.declaredRules];
  await kubectl(['annotate', '--overwrite', 'configmap', 'rs-x', '-n', ns, ...keys.map((k) => `${k}=${old[k] ?? ''}`)]);
  await sleep(6_000);
  expectKept(await env.client.tryGet(t.configMap, ns, 'rs-x'), uid);
});
