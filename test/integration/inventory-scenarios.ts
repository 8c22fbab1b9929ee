/**
 * Issue 23, classes 1 and 2: what a Bundle controls is found the way the
 * collector finds it (owner references by UID, kinds by group and kind as the
 * server serves them now), never through a version string or a label. Each
 * scenario deletes a Bundle after a routine cluster operation and checks the
 * objects that must survive it are kept (same UID, no deletionTimestamp)
 * while the collector runs: ours (inventory.test.ts) and
 * kube-controller-manager's (inventory-kcm.test.ts).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { gadgetsServed, installGadgets, setGadgetVersions } from './gadgets.js';
import { expectKept, run, uniqueName, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, getBundle, waitForBundle, waitForReady, type KnownTypes } from './bundles.js';

export interface InventoryContext {
  env: TestEnv;
  ns: string;
  t: KnownTypes;
  /** The kubeconfig kubectl uses (the reference cluster's own, or the shared one). */
  kubeconfig?: string;
  /** Whether our collector watches this group version's resources (only where ours runs). */
  collectorWatches?: (groupVersion: string) => boolean;
}

/** After the Bundle is gone, how long the collector is given to act on what it left (it acts within milliseconds). */
const COLLECTOR_SETTLE_MS = 3_000;

const managedKindsOf = (b: KubeObject | undefined): string[] => (b?.status as { managedKinds?: string[] } | undefined)?.managedKinds ?? [];
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function kubectl(ctx: InventoryContext, args: string[]): Promise<void> {
  const result = await run('kubectl', args, ctx.kubeconfig ? { env: { KUBECONFIG: ctx.kubeconfig } } : {});
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
}

/** A Gadget manifest of `group` at v1alpha1 (the version these scenarios upgrade from). */
const gadgetAtV1alpha1 =
  (group: string) =>
  (name: string, annotations?: Record<string, string>): Record<string, unknown> => ({
    apiVersion: `${group}/v1alpha1`,
    kind: 'Gadget',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { size: 1 },
  });

/** The usual CRD upgrade: v1 served and stored, v1alpha1 no longer served; the v1 resource, once both are so. */
async function upgradeToV1(env: TestEnv, group: string): Promise<ResourceType> {
  await setGadgetVersions(env, group, [
    { name: 'v1alpha1', served: false, storage: false },
    { name: 'v1', served: true, storage: true },
  ]);
  const v1 = await gadgetsServed(env, group, 'v1', true);
  await gadgetsServed(env, group, 'v1alpha1', false);
  if (!v1) throw new Error('v1 not served');
  return v1;
}

async function deleteBundleAndSettle(ctx: InventoryContext, name: string): Promise<void> {
  await kubectl(ctx, ['delete', 'bundle', name, '-n', ctx.ns, '--wait=false']);
  await waitFor(`Bundle ${name} to be gone`, async () => (await getBundle(ctx.env, ctx.ns, name)) === undefined, { timeoutMs: 60_000 });
  await sleep(COLLECTOR_SETTLE_MS);
}

/**
 * 1. A CRD moves its storage to v1 and stops serving v1alpha1 (the usual
 * upgrade), its objects still named at v1alpha1 in the Bundle. Deleting the
 * Bundle then keeps the Orphan object and the one counting down (released),
 * and deletes only the plain one: the finalizer resolves the kind by group
 * and kind at the version served now. Before, it skipped the unserved
 * version, found nothing, let the Bundle go, and the collector took all three.
 */
export async function crdUpgradeKeepsWhatTheFinalizerMustSee(ctx: InventoryContext): Promise<void> {
  const { env, ns } = ctx;
  const group = `${uniqueName('up')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = gadgetAtV1alpha1(group);
  await applyBundle(env, ns, 'upgraded', [
    { name: 'orphan', object: gadget('g-orphan', { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'delayed', object: gadget('g-delayed', { [Annotations.deletionDelay]: '1h' }) },
    { name: 'plain', object: gadget('g-plain') },
  ]);
  await waitForReady(env, ns, 'upgraded');
  const alpha = await gadgetsServed(env, group, 'v1alpha1', true);
  if (!alpha) throw new Error('v1alpha1 not served');
  const uid = async (name: string): Promise<string> => (await env.client.get(alpha, ns, name)).metadata.uid;
  const uids = { orphan: await uid('g-orphan'), delayed: await uid('g-delayed') };

  // The upgrade: v1 served and stored, v1alpha1 no longer served.
  const v1 = await upgradeToV1(env, group);

  await deleteBundleAndSettle(ctx, 'upgraded');
  expectKept(await env.client.tryGet(v1, ns, 'g-orphan'), uids.orphan);
  const delayed = await env.client.tryGet(v1, ns, 'g-delayed');
  expectKept(delayed, uids.delayed);
  expect(delayed?.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
  expect(delayed?.metadata.labels?.[Labels.formerBundle]).toBe('upgraded');
  expect(await env.client.tryGet(v1, ns, 'g-plain')).toBeUndefined();
}

/**
 * 2. Another tool takes the managed label off objects the Bundle still
 * controls (a Secret counting down, one waiting for approval), of a kind the
 * spec no longer lists. The kind stays in the inventory (a fresh unselected
 * list finds them; the label is put back), and deleting the Bundle releases
 * them: kept. Before, the kind left status.managedKinds, the finalizer never
 * listed it, and the collector deleted both with the Bundle.
 */
export async function labelTakenOffKeepsTheKind(ctx: InventoryContext): Promise<void> {
  const { env, ns, t } = ctx;
  const secret = (name: string, annotations: Record<string, string>): Record<string, unknown> => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, annotations },
    stringData: { a: 'b' },
  });
  await applyBundle(env, ns, 'unlabelled', [
    { name: 'cm', object: configMap('unl-cm') },
    { name: 'delayed', object: secret('unl-delayed', { [Annotations.deletionDelay]: '1h' }) },
    { name: 'approve', object: secret('unl-approve', { [Annotations.deletionPolicy]: 'Approve' }) },
  ]);
  await waitForReady(env, ns, 'unlabelled');
  const uids = {
    delayed: (await env.client.get(t.secret, ns, 'unl-delayed')).metadata.uid,
    approve: (await env.client.get(t.secret, ns, 'unl-approve')).metadata.uid,
  };
  // Both leave the spec: each counts down (the Approve one waits for its approval).
  await applyBundle(env, ns, 'unlabelled', [{ name: 'cm', object: configMap('unl-cm') }]);
  for (const name of ['unl-delayed', 'unl-approve']) {
    await waitFor(
      `${name} to count down`,
      async () => (await env.client.get(t.secret, ns, name)).metadata.annotations?.[Annotations.deletionTimestamp],
    );
  }
  await kubectl(ctx, ['label', 'secret', 'unl-delayed', 'unl-approve', '-n', ns, `${Labels.managed}-`]);
  // Passes run (the caches saw the objects leave): the kind stays recorded, and the label comes back.
  await waitFor('the label to be put back', async () => {
    const both = await Promise.all(['unl-delayed', 'unl-approve'].map((n) => env.client.get(t.secret, ns, n)));
    return both.every((o) => o.metadata.labels?.[Labels.managed] === 'true');
  });
  const bundle = await waitForBundle(env, ns, 'unlabelled', 'status written', () => true);
  expect(managedKindsOf(bundle)).toContain('Secret');

  await deleteBundleAndSettle(ctx, 'unlabelled');
  expectKept(await env.client.tryGet(t.secret, ns, 'unl-delayed'), uids.delayed);
  expectKept(await env.client.tryGet(t.secret, ns, 'unl-approve'), uids.approve);
}

/**
 * 2b. The label taken off an object the spec still lists, then the Bundle
 * deleted: the finalizer lists by owner reference, never by label, and the
 * object counts down (kept). The finalizer listed without a selector before
 * this round too: this pins that, it does not prove a fix (scenario 2 does).
 */
export async function finalizerListsWithoutTheLabel(ctx: InventoryContext): Promise<void> {
  const { env, ns, t } = ctx;
  await applyBundle(env, ns, 'nolabel', [
    { name: 'cm', object: configMap('nolabel-cm', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }) },
    { name: 'keep', object: configMap('nolabel-keep') },
  ]);
  await waitForReady(env, ns, 'nolabel');
  const uid = (await env.client.get(t.configMap, ns, 'nolabel-cm')).metadata.uid;
  await kubectl(ctx, ['label', 'configmap', 'nolabel-cm', '-n', ns, `${Labels.managed}-`]);
  await deleteBundleAndSettle(ctx, 'nolabel');
  const kept = await env.client.tryGet(t.configMap, ns, 'nolabel-cm');
  expectKept(kept, uid);
  expect(kept?.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
}

/**
 * 1c. The same upgrade while a Bundle whose spec has an invalid entry (its
 * passes write nothing) controls an object, then a foreground deletion of the
 * Bundle (fuzz softdelete 19718): the deletion must finish. The collector's
 * informer of the group and resource lists the unchanged object again at v1;
 * it used to skip it as already seen, so the node stayed at the unserved
 * v1alpha1 and the collector never deleted it: the Bundle's foreground
 * deletion waited for good.
 */
export async function crdUpgradeThenForegroundDeletionFinishes(ctx: InventoryContext): Promise<void> {
  const { env, ns } = ctx;
  const group = `${uniqueName('fg')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  // Our collector sees the objects at v1alpha1 first, as it would have for a CRD installed long ago.
  const watches = ctx.collectorWatches;
  if (watches) await waitFor('the collector to watch v1alpha1', () => watches(`${group}/v1alpha1`));
  const gadget = gadgetAtV1alpha1(group);
  await applyBundle(env, ns, 'upgraded-fg', [
    { name: 'plain', object: gadget('g-plain') },
    { name: 'invalid', object: gadget('g-invalid', { [Annotations.deletionDelay]: '-2s' }) },
  ]);
  const alpha = await gadgetsServed(env, group, 'v1alpha1', true);
  if (!alpha) throw new Error('v1alpha1 not served');
  await waitFor('g-plain to be applied', async () => (await env.client.tryGet(alpha, ns, 'g-plain')) !== undefined);

  const v1 = await upgradeToV1(env, group);
  // The collector has moved to v1 (listed the unchanged objects again there) before the deletion.
  if (watches) await waitFor('the collector to watch v1 only', () => watches(`${group}/v1`) && !watches(`${group}/v1alpha1`));

  await kubectl(ctx, ['delete', 'bundle', 'upgraded-fg', '-n', ns, '--cascade=foreground', '--wait=false']);
  await waitFor('Bundle upgraded-fg to be gone', async () => (await getBundle(env, ns, 'upgraded-fg')) === undefined, {
    timeoutMs: 60_000,
  });
  await sleep(COLLECTOR_SETTLE_MS);
  expect(await env.client.tryGet(v1, ns, 'g-plain')).toBeUndefined();
}

/**
 * 1d. Released objects listed again by a new Bundle at a version no longer
 * served (fuzz softdelete 20284): that Bundle cannot take hold of them, yet
 * listing them cancels their countdowns, and dropping one later starts a new
 * one. Before, the released countdown stayed on the objects; it ran out while
 * they were listed, and the released-object sweeper deleted the one dropped
 * at once, on the countdown of the first release.
 */
export async function relistedAtUnservedVersionCancelsTheCountdown(ctx: InventoryContext): Promise<void> {
  const { env, ns } = ctx;
  const group = `${uniqueName('rl')}.bundlesmith.test`;
  await installGadgets(env, group, [{ name: 'v1alpha1', served: true, storage: true }]);
  const gadget = gadgetAtV1alpha1(group);
  const delay = { [Annotations.deletionDelay]: '8s' };
  const resources = (names: string[]): Array<{ name: string; object: Record<string, unknown> }> =>
    names.map((n) => ({ name: n, object: gadget(`g-${n}`, delay) }));
  await applyBundle(env, ns, 'relisted', resources(['kept', 'dropped']));
  await waitForReady(env, ns, 'relisted');
  const alpha = await gadgetsServed(env, group, 'v1alpha1', true);
  if (!alpha) throw new Error('v1alpha1 not served');
  const uids = {
    kept: (await env.client.get(alpha, ns, 'g-kept')).metadata.uid,
    dropped: (await env.client.get(alpha, ns, 'g-dropped')).metadata.uid,
  };
  // Released with their countdowns, then the upgrade.
  await deleteBundleAndSettle(ctx, 'relisted');
  const v1 = await upgradeToV1(env, group);
  const firstStamp = (await env.client.get(v1, ns, 'g-dropped')).metadata.annotations?.[Annotations.deletionTimestamp];
  expect(firstStamp).toBeDefined();

  // Listed again at v1alpha1, which the new Bundle cannot apply at: both countdowns are cancelled all the same.
  await applyBundle(env, ns, 'relisted', resources(['kept', 'dropped']));
  for (const name of ['g-kept', 'g-dropped']) {
    await waitFor(`${name}'s countdown to be cancelled`, async () => {
      const o = await env.client.get(v1, ns, name);
      return o.metadata.annotations?.[Annotations.deletionTimestamp] === undefined;
    });
  }
  // Past the first countdowns' end, while listed: kept.
  await sleep(Math.max(0, Date.parse(firstStamp ?? '') + 9_000 - Date.now()));
  expectKept(await env.client.tryGet(v1, ns, 'g-kept'), uids.kept);
  expectKept(await env.client.tryGet(v1, ns, 'g-dropped'), uids.dropped);

  // Dropped: a new countdown, from the drop, not the first one.
  const droppedAt = Date.now();
  await applyBundle(env, ns, 'relisted', resources(['kept']));
  const restamped = await waitFor('a new countdown on g-dropped', async () => {
    const o = await env.client.tryGet(v1, ns, 'g-dropped');
    return o?.metadata.annotations?.[Annotations.deletionTimestamp];
  });
  // Whole seconds, and the clocks of the test and the server may differ by a little.
  expect(Date.parse(restamped)).toBeGreaterThanOrEqual(droppedAt - 2_000);
  expectKept(await env.client.tryGet(v1, ns, 'g-dropped'), uids.dropped);
  expectKept(await env.client.tryGet(v1, ns, 'g-kept'), uids.kept);
}
