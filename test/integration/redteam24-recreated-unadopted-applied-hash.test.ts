/**
 * Red team 24: an orphan deletion keeps the operator's applied-hash
 * annotation on what it orphans (release.ts orphanPatch takes out the
 * references, the dependency record, a countdown and, since red team 23,
 * the part-of label, never the hash), and at the Bundle's coordinates an
 * uncontrolled object carrying the applied-hash is an orphan trace
 * (orphan-evidence.ts isOrphanTrace, 'applied-hash'). The hash does not say
 * which incarnation of the Bundle wrote it. So when a Bundle is re-created
 * under the same name (what `--cascade=orphan` is for: replace the parent,
 * keep the children) and listing the same object again, until the new one
 * has adopted it, that object reads as the trace of an orphan deletion of
 * the new Bundle: a plain (background) `kubectl delete bundle` of the new
 * Bundle is taken for `--cascade=orphan` and nothing of it is deleted. No
 * restart, no race: the operator runs throughout.
 *
 * Steps:
 *  1. Bundle rh lists ConfigMap rh-a; Ready (rh-a: applied-hash).
 *  2. `kubectl delete bundle rh --cascade=orphan` (operator running): its
 *     finalizer orphans rh-a (kept, uncontrolled, part-of and record taken
 *     out; the applied-hash stays).
 *  3. Bundle rh is created again (new UID), listing Deployment rh-gate
 *     (never Available on this control plane: no kubelet), ConfigMap rh-a
 *     after it (`references: [{resource: gate}]`: not applied, so not
 *     adopted, until the gate is Ready) and ConfigMap rh-b.
 *  4. `kubectl delete bundle rh` (background, the default).
 *
 * Expected (docs/deletion.md, the deletion table: background deletes every
 * object the Bundle holds without a delay or a policy; docs/safety.md,
 * finalizer row: "background: the Bundle's objects without a delay and
 * without another owner", and the orphan trace is "never ... an object a
 * predecessor of the same name left"): rh-b and rh-gate deleted; rh-a,
 * which the new Bundle never took, kept.
 *
 * What happens: effectivePropagation (src/core/bundle/finalize.ts:73)
 * finds rh-a: uncontrolled, at the coordinates, no part-of, no record, no
 * let-go mark, its predecessor's applied-hash -> orphanEvidence
 * 'applied-hash' (src/core/bundle/orphan-evidence.ts:47) -> isOrphanTrace
 * true (orphan-evidence.ts:74-76) -> 'Orphan'. stepsFor orphans rh-b and
 * rh-gate (orphanCandidacy: controlled by the Bundle -> candidate;
 * orphanStep strips the controller reference), the finalizer goes, and
 * both survive with no owner: a wrong keep of what the user asked to
 * delete. rh-b's events read "orphaned ConfigMap .../rh-b: its Bundle was
 * deleted with orphan propagation" for a background deletion.
 *
 * Second test: the same with a Bundle of another name (the usual way to move
 * objects from one Bundle to another: delete the old one with
 * `--cascade=orphan`, create the new one listing them): the applied-hash
 * names no Bundle at all, so the old Bundle's object is a trace of the new
 * one's orphan deletion just the same.
 */
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import { expectKept, waitFor, waitForGone } from './harness.js';
import { applyBundle, configMap, eventsFor, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';

const f = referenceFixture('rt24-rh');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const gateOf = (name: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'g', image: 'registry.example/g:1' }] } },
  },
});

/**
 * Bundle `oldName` lists `${x}-a`, is deleted with `--cascade=orphan`; Bundle `newName` (the same name, or another)
 * lists `${x}-gate`, `${x}-a` after the gate, and `${x}-b`, and is deleted in the background before it took `${x}-a`.
 */
async function scenario(oldName: string, newName: string, x: string): Promise<void> {
  const { env, ns, t } = f;
  await applyBundle(env, ns, oldName, [{ name: 'a', object: configMap(`${x}-a`) }]);
  const first = await waitForReady(env, ns, oldName);
  await waitFor(`${x}-a applied by ${oldName}`, async () => {
    const o = await env.client.tryGet(t.configMap, ns, `${x}-a`);
    return o?.metadata.annotations?.[Annotations.appliedHash] !== undefined;
  });

  // `kubectl delete bundle --cascade=orphan`, the operator running.
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, oldName, { uid: first.metadata.uid ?? '', propagationPolicy: 'Orphan' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, oldName, { timeoutMs: 60_000 });
  const old = await env.client.get(t.configMap, ns, `${x}-a`);
  console.log(
    `${x}-a kept by the orphan deletion:`,
    JSON.stringify(old.metadata.labels),
    JSON.stringify(old.metadata.annotations),
    JSON.stringify(old.metadata.ownerReferences ?? []),
  );
  expect(old.metadata.ownerReferences ?? []).toEqual([]);

  // The new Bundle: ${x}-a waits for the gate, ${x}-b is applied at once.
  await applyBundle(env, ns, newName, [
    { name: 'gate', object: gateOf(`${x}-gate`) },
    { name: 'a', references: [{ resource: 'gate' }], object: configMap(`${x}-a`) },
    { name: 'b', object: configMap(`${x}-b`) },
  ]);
  const second = await waitFor(`the new ${newName}`, async () => {
    const b = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, newName);
    return b !== undefined && b.metadata.uid !== first.metadata.uid ? b : undefined;
  });
  await waitFor(`${x}-b and ${x}-gate controlled by ${newName}`, async () => {
    const b = await env.client.tryGet(t.configMap, ns, `${x}-b`);
    const g = await env.client.tryGet(t.deployment, ns, `${x}-gate`);
    const controlled = (o: typeof b): boolean =>
      (o?.metadata.ownerReferences ?? []).some((r) => r.uid === second.metadata.uid && r.controller === true);
    return controlled(b) && controlled(g);
  });
  await sleep(3_000);
  const waiting = await env.client.get(t.configMap, ns, `${x}-a`);
  console.log(`${x}-a before the deletion:`, JSON.stringify(waiting.metadata));
  // The new Bundle has not taken ${x}-a: it waits for the gate.
  expect(waiting.metadata.uid).toBe(old.metadata.uid);
  expect(waiting.metadata.ownerReferences ?? []).toEqual([]);

  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, newName, { uid: second.metadata.uid ?? '', propagationPolicy: 'Background' });
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, newName, { timeoutMs: 60_000 });
  await sleep(5_000);
  const afterB = await env.client.tryGet(t.configMap, ns, `${x}-b`);
  const afterGate = await env.client.tryGet(t.deployment, ns, `${x}-gate`);
  console.log(`${x}-b after the background deletion:`, afterB === undefined ? 'gone' : JSON.stringify(afterB.metadata));
  console.log(
    `${x}-gate after the background deletion:`,
    afterGate === undefined ? 'gone' : JSON.stringify(afterGate.metadata.ownerReferences ?? []),
  );
  console.log(`${newName} events:`, JSON.stringify(await eventsFor(env, ns, newName)));
  // The orphaned object, which the new Bundle never took, is kept.
  expectKept(await env.client.tryGet(t.configMap, ns, `${x}-a`), old.metadata.uid ?? '');
  expect(afterB === undefined || afterB.metadata.deletionTimestamp !== undefined).toBe(true);
  expect(afterGate === undefined || afterGate.metadata.deletionTimestamp !== undefined).toBe(true);
}

it('a background deletion of a Bundle re-created under the same name deletes its objects while it has not adopted its predecessor’s', async () => {
  await scenario('rh', 'rh', 'rh');
}, 300_000);

it('the same for a Bundle the objects are moved to (old one deleted with --cascade=orphan, a new one listing them)', async () => {
  await scenario('mv-old', 'mv-new', 'mv');
}, 300_000);
