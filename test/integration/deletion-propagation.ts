/**
 * Issue 9, the Bundle finalizer under foreground and orphan propagation, as
 * scenarios run against each collector: ours (bundle-deletion-propagation
 * .test.ts) and kube-controller-manager's (bundle-deletion-propagation-kcm
 * .test.ts). "Kept" is the same UID and no deletionTimestamp.
 */
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { OwnerReference } from '../../src/api/resource.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import { Annotations, Finalizers, Labels } from '../../src/api/names.js';
import type { KubeClient } from '../../src/kube/client.js';
import { KubeApiError } from '../../src/kube/errors.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { conditionOf, run, waitFor, type TestEnv } from './harness.js';
import {
  applyBundle,
  BUNDLE_RESOURCE_TYPE,
  bundleManifest,
  configMap,
  getBundle,
  waitForBundle,
  waitForReady,
  type KnownTypes,
} from './bundles.js';

export interface PropagationContext {
  env: TestEnv;
  ns: string;
  t: KnownTypes;
  /** Stops the garbage collector (it acts on nothing until resumed). */
  pauseCollector(): Promise<void>;
  /** Starts it again; does nothing when it runs. */
  resumeCollector(): Promise<void>;
  /** How long to wait for the collector to act (kube-controller-manager's graph can take a while to build). */
  collectorTimeoutMs: number;
  /** The user the collector deletes as, and a client that acts as that user (for the chart's deletion guard). */
  collector: { user: string; client: KubeClient };
}

const stampOf = (o: KubeObject): string | undefined => o.metadata.annotations?.[Annotations.deletionTimestamp];

async function expectKept(c: PropagationContext, name: string, uid: string | undefined): Promise<KubeObject> {
  const o = await c.env.client.get(c.t.configMap, c.ns, name);
  expect(o.metadata.uid).toBe(uid);
  expect(o.metadata.deletionTimestamp).toBeUndefined();
  return o;
}

async function deleteBundle(c: PropagationContext, name: string, propagationPolicy: 'Foreground' | 'Orphan'): Promise<void> {
  const bundle = await getBundle(c.env, c.ns, name);
  expect(bundle?.metadata.uid).toBeDefined();
  await c.env.client.delete(BUNDLE_RESOURCE_TYPE, c.ns, name, { uid: bundle?.metadata.uid ?? '', propagationPolicy });
}

/**
 * `kubectl delete bundle fg1 --cascade=foreground` while another live Bundle
 * lists one of its objects and has not taken it (here: it names it at a
 * version no server serves, so it cannot; the claim still protects the
 * object). The finalizer lets that object go before it steps aside; the
 * collector deletes everything else, a deletionDelay included. The collector
 * is paused until the finalizer is gone, so the order is the test's, not a
 * race's (see docs/deletion.md on that race).
 */
export async function foregroundKeepsWhatAnotherBundleLists(c: PropagationContext): Promise<void> {
  await applyBundle(c.env, c.ns, 'fg1', [
    { name: 'base', object: configMap('fg-base') },
    { name: 'x', references: [{ resource: 'base' }], object: configMap('fg-x') },
    { name: 'slow', object: configMap('fg-slow', { k: 'v' }, { [Annotations.deletionDelay]: '1h' }) },
  ]);
  await waitForReady(c.env, c.ns, 'fg1');
  const x = await c.env.client.get(c.t.configMap, c.ns, 'fg-x');
  const fg1 = await getBundle(c.env, c.ns, 'fg1');
  expect(x.metadata.ownerReferences?.find((r) => r.controller === true)?.uid).toBe(fg1?.metadata.uid);

  await applyBundle(c.env, c.ns, 'fg2', [
    { name: 'x', object: { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'fg-x' }, data: { key: 'value' } } },
  ]);
  await waitForBundle(c.env, c.ns, 'fg2', 'not Ready (its version is not served)', (b) => conditionOf(b, 'Ready')?.status === 'False');

  await c.pauseCollector();
  try {
    await finalizerStepsAsideLettingGo(c, x);
  } finally {
    await c.resumeCollector();
  }
  await waitFor('fg1 to be gone', async () => (await getBundle(c.env, c.ns, 'fg1')) === undefined, { timeoutMs: c.collectorTimeoutMs });
  // Foreground is the full cascade: a deletionDelay does not hold an object back.
  expect(await c.env.client.tryGet(c.t.configMap, c.ns, 'fg-base')).toBeUndefined();
  expect(await c.env.client.tryGet(c.t.configMap, c.ns, 'fg-slow')).toBeUndefined();
  await expectKept(c, 'fg-x', x.metadata.uid);

  // Once fg2 names it at a served version, it takes the same object.
  await applyBundle(c.env, c.ns, 'fg2', [{ name: 'x', object: configMap('fg-x') }]);
  const fg2 = await waitForReady(c.env, c.ns, 'fg2');
  const taken = await expectKept(c, 'fg-x', x.metadata.uid);
  expect(taken.metadata.ownerReferences?.find((r) => r.controller === true)?.uid).toBe(fg2.metadata.uid);
}

/**
 * The Conflict case of issue 9, with the collector running throughout (no
 * pause): cf2 lists cf-x, which the older cf1 controls, so cf2 records its
 * claim as a non-controller reference to itself. `--cascade=foreground` of
 * cf1: the collector sees a live owner (cf2) and only takes cf1's reference
 * out; cf2 then takes the same object.
 */
export async function foregroundKeepsWhatAConflictingBundleClaims(c: PropagationContext): Promise<void> {
  await applyBundle(c.env, c.ns, 'cf1', [
    { name: 'x', object: configMap('cf-x') },
    { name: 'other', object: configMap('cf-other') },
  ]);
  await waitForReady(c.env, c.ns, 'cf1');
  const cf1 = await getBundle(c.env, c.ns, 'cf1');
  await applyBundle(c.env, c.ns, 'cf2', [{ name: 'x', object: configMap('cf-x') }]);
  const cf2 = await waitForBundle(c.env, c.ns, 'cf2', 'in Conflict', (b) => conditionOf(b, 'Ready')?.status === 'False');
  const claimed = await waitFor('cf2 to record its claim reference on cf-x', async () => {
    const o = await c.env.client.get(c.t.configMap, c.ns, 'cf-x');
    return (o.metadata.ownerReferences ?? []).some((r) => r.uid === cf2.metadata.uid && r.controller !== true) ? o : undefined;
  });
  expect(claimed.metadata.ownerReferences?.find((r) => r.controller === true)?.uid).toBe(cf1?.metadata.uid);

  await deleteBundle(c, 'cf1', 'Foreground');
  await waitFor('cf1 to be gone', async () => (await getBundle(c.env, c.ns, 'cf1')) === undefined, { timeoutMs: c.collectorTimeoutMs });
  expect(await c.env.client.tryGet(c.t.configMap, c.ns, 'cf-other')).toBeUndefined();
  await expectKept(c, 'cf-x', claimed.metadata.uid);

  await waitForReady(c.env, c.ns, 'cf2');
  const taken = await expectKept(c, 'cf-x', claimed.metadata.uid);
  expect(taken.metadata.ownerReferences?.filter((r) => r.uid === cf2.metadata.uid)).toEqual([
    expect.objectContaining({ controller: true }),
  ]);
}

/**
 * A claim lasts only as long as the losing Bundle lists the object: cw2
 * loses cw-x to cw1 and records its claim; once cw2 stops listing cw-x the
 * claim goes; listed again, it comes back; cw2 deleted (background), its
 * finalizer withdraws it. cw-x stays cw1's throughout (same UID, never
 * being deleted), and a foreground deletion of cw1 afterwards collects it:
 * no stale claim holds it back.
 */
export async function aLosingBundleWithdrawsItsClaim(c: PropagationContext): Promise<void> {
  const claimsOn = async (): Promise<OwnerReference[]> =>
    ((await c.env.client.get(c.t.configMap, c.ns, 'cw-x')).metadata.ownerReferences ?? []).filter((r) => r.controller !== true);
  await applyBundle(c.env, c.ns, 'cw1', [{ name: 'x', object: configMap('cw-x') }]);
  await waitForReady(c.env, c.ns, 'cw1');
  const x = await c.env.client.get(c.t.configMap, c.ns, 'cw-x');
  await applyBundle(c.env, c.ns, 'cw2', [
    { name: 'x', object: configMap('cw-x') },
    { name: 'y', object: configMap('cw-y') },
  ]);
  const cw2 = await waitForBundle(c.env, c.ns, 'cw2', 'in Conflict', (b) => conditionOf(b, 'Ready')?.status === 'False');
  await waitFor('cw2 to record its claim on cw-x', async () => (await claimsOn()).some((r) => r.uid === cw2.metadata.uid));

  await applyBundle(c.env, c.ns, 'cw2', [{ name: 'y', object: configMap('cw-y') }]);
  await waitFor('cw2 to withdraw its claim', async () => (await claimsOn()).length === 0);
  await expectKept(c, 'cw-x', x.metadata.uid);

  await applyBundle(c.env, c.ns, 'cw2', [
    { name: 'x', object: configMap('cw-x') },
    { name: 'y', object: configMap('cw-y') },
  ]);
  await waitFor('cw2 to claim cw-x again', async () => (await claimsOn()).some((r) => r.uid === cw2.metadata.uid));
  await c.env.client.delete(BUNDLE_RESOURCE_TYPE, c.ns, 'cw2', { uid: cw2.metadata.uid ?? '' });
  await waitFor('cw2 to be gone', async () => (await getBundle(c.env, c.ns, 'cw2')) === undefined, { timeoutMs: c.collectorTimeoutMs });
  expect(await claimsOn()).toEqual([]);
  const kept = await expectKept(c, 'cw-x', x.metadata.uid);
  expect(kept.metadata.ownerReferences?.find((r) => r.controller === true)?.name).toBe('cw1');
  expect(await c.env.client.tryGet(c.t.configMap, c.ns, 'cw-y')).toBeUndefined();

  await deleteBundle(c, 'cw1', 'Foreground');
  await waitFor('cw-x to be collected with cw1', async () => (await c.env.client.tryGet(c.t.configMap, c.ns, 'cw-x')) === undefined, {
    timeoutMs: c.collectorTimeoutMs,
  });
}

/** With the collector paused: the finalizer lets fg-x go, then leaves fg1 to the collector. */
/**
 * `--cascade=foreground` of a Bundle holding an Orphan object, an Approve
 * object and a plain one, the collector paused until the finalizer has
 * stepped aside (the order an admission guard on the collector's deletes
 * would force): the Orphan object is released for good, the Approve one
 * with a signed countdown, and the collector, resumed, keeps both (same
 * uid, no deletionTimestamp) while it takes the plain one.
 */
export async function foregroundReleasesKeptPolicies(c: PropagationContext): Promise<void> {
  await applyBundle(c.env, c.ns, 'fgp', [
    { name: 'keep', object: configMap('fgp-keep', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'approve', object: configMap('fgp-approve', { k: 'v' }, { [Annotations.deletionPolicy]: 'Approve' }) },
    { name: 'plain', object: configMap('fgp-plain') },
  ]);
  await waitForReady(c.env, c.ns, 'fgp');
  const keep = await c.env.client.get(c.t.configMap, c.ns, 'fgp-keep');
  const approve = await c.env.client.get(c.t.configMap, c.ns, 'fgp-approve');
  await c.pauseCollector();
  try {
    await deleteBundle(c, 'fgp', 'Foreground');
    await waitFor('our finalizer to go while fgp waits on the collector', async () => {
      const b = await getBundle(c.env, c.ns, 'fgp');
      return b && !(b.metadata.finalizers ?? []).includes(Finalizers.deleteResources) ? b : undefined;
    });
  } finally {
    await c.resumeCollector();
  }
  await waitFor('fgp to be gone', async () => (await getBundle(c.env, c.ns, 'fgp')) === undefined, { timeoutMs: c.collectorTimeoutMs });
  await waitFor(
    'the plain object to be collected',
    async () => (await c.env.client.tryGet(c.t.configMap, c.ns, 'fgp-plain')) === undefined,
    { timeoutMs: c.collectorTimeoutMs },
  );
  const kept = await expectKept(c, 'fgp-keep', keep.metadata.uid);
  expect(kept.metadata.ownerReferences ?? []).toEqual([]);
  expect(stampOf(kept)).toBeUndefined();
  const released = await expectKept(c, 'fgp-approve', approve.metadata.uid);
  expect(released.metadata.ownerReferences ?? []).toEqual([]);
  expect(stampOf(released)).toBeDefined();
  expect(released.metadata.annotations?.[Annotations.releaseProof]).toMatch(/^v3:/);
}

async function finalizerStepsAsideLettingGo(c: PropagationContext, x: KubeObject): Promise<void> {
  await deleteBundle(c, 'fg1', 'Foreground');
  const waiting = await waitFor('our finalizer to go while fg1 waits on the collector', async () => {
    const b = await getBundle(c.env, c.ns, 'fg1');
    return b && !(b.metadata.finalizers ?? []).includes(Finalizers.deleteResources) ? b : undefined;
  });
  expect(waiting.metadata.finalizers).toEqual([Finalizers.foregroundDeletion]);
  // Let go before the finalizer went: nothing the operator wrote names fg1 or a sibling any more.
  const letGo = await expectKept(c, 'fg-x', x.metadata.uid);
  expect(letGo.metadata.ownerReferences ?? []).toEqual([]);
  expect(letGo.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
  expect(stampOf(letGo)).toBeUndefined();
}

/**
 * `kubectl delete bundle or1 --cascade=orphan`: every object stays, with only
 * the references its user wrote (no dependency reference, no bookkeeping
 * annotation, no countdown), so deleting a former sibling later collects
 * nothing of it. The collector runs throughout: orphaning by the collector
 * and the finalizer's clean-up meet on the same objects.
 */
export async function orphanLeavesOnlyUserReferences(c: PropagationContext): Promise<void> {
  const owner = await c.env.client.create(c.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'or-owner', namespace: c.ns },
  });
  const userRef: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'or-owner', uid: owner.metadata.uid ?? '' };
  const cfgFixture = { name: 'cfg', object: configMap('or-cfg') };
  const webFixture = {
    name: 'web',
    references: [{ resource: 'cfg' }],
    object: { ...configMap('or-web'), metadata: { name: 'or-web', ownerReferences: [userRef] } },
  };
  await applyBundle(c.env, c.ns, 'or1', [
    cfgFixture,
    webFixture,
    { name: 'old', object: configMap('or-old', { k: 'v' }, { [Annotations.deletionDelay]: '1h' }) },
  ]);
  await waitForReady(c.env, c.ns, 'or1');
  // "old" leaves the spec: its countdown starts (the Bundle still controls it).
  await applyBundle(c.env, c.ns, 'or1', [cfgFixture, webFixture]);
  const old = await waitFor('or-old to be counting down', async () => {
    const o = await c.env.client.get(c.t.configMap, c.ns, 'or-old');
    return stampOf(o) !== undefined ? o : undefined;
  });
  const cfg = await c.env.client.get(c.t.configMap, c.ns, 'or-cfg');
  const web = await c.env.client.get(c.t.configMap, c.ns, 'or-web');
  expect(web.metadata.ownerReferences?.map((r) => r.uid)).toEqual(expect.arrayContaining([cfg.metadata.uid, owner.metadata.uid]));
  expect(web.metadata.annotations?.[Annotations.dependencyReferences]).toBe(cfg.metadata.uid);

  await deleteBundle(c, 'or1', 'Orphan');
  await waitFor('or1 to be gone', async () => (await getBundle(c.env, c.ns, 'or1')) === undefined, { timeoutMs: c.collectorTimeoutMs });
  const orphanedWeb = await expectKept(c, 'or-web', web.metadata.uid);
  expect(orphanedWeb.metadata.ownerReferences).toEqual([userRef]);
  expect(orphanedWeb.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
  const orphanedCfg = await expectKept(c, 'or-cfg', cfg.metadata.uid);
  expect(orphanedCfg.metadata.ownerReferences ?? []).toEqual([]);
  const orphanedOld = await expectKept(c, 'or-old', old.metadata.uid);
  expect(orphanedOld.metadata.ownerReferences ?? []).toEqual([]);
  expect(stampOf(orphanedOld)).toBeUndefined();

  // The former sibling goes; the collector has seen it gone once it collects a canary it owned...
  expect(await c.env.client.delete(c.t.configMap, c.ns, 'or-cfg', { uid: cfg.metadata.uid ?? '', propagationPolicy: 'Background' })).toBe(
    'deleted',
  );
  await c.env.client.create(c.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'or-canary',
      namespace: c.ns,
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'or-cfg', uid: cfg.metadata.uid ?? '' }],
    },
  });
  await waitFor(
    'the collector to collect the canary owned by the deleted or-cfg',
    async () => (await c.env.client.tryGet(c.t.configMap, c.ns, 'or-canary')) === undefined,
    { timeoutMs: c.collectorTimeoutMs },
  );
  // ...and keeps the orphaned object, which no longer names it.
  await expectKept(c, 'or-web', web.metadata.uid);
}

/**
 * The chart's deletion guard (templates/deletionguard.yaml), rendered by the
 * real helm for namespace `c.ns` and the collector's user, applied; in force
 * once the collector's dry-run delete of `probe` (an object of type `rt` in
 * `c.ns` the guard protects) is refused by it. Returns what removes it again.
 */
export async function installDeletionGuard(
  c: Pick<PropagationContext, 'env' | 'ns' | 'collector'>,
  rt: ResourceType,
  probe: { name: string; uid: string },
): Promise<() => Promise<void>> {
  return await installChartPolicy(
    c.env,
    c.ns,
    'deletionguard.yaml',
    ['--set', 'gc.mode=off', '--set-json', `deletionGuard.collectors=${JSON.stringify([c.collector.user])}`],
    async () => {
      try {
        await c.collector.client.delete(rt, c.ns, probe.name, { uid: probe.uid, dryRun: true });
        return false;
      } catch (err) {
        return err instanceof KubeApiError && err.code === 403 && err.message.includes('bundlesmith deletion guard');
      }
    },
  );
}

/**
 * One of the chart's admission policies (a ValidatingAdmissionPolicy and its
 * binding, `templates/<template>`), rendered by the real helm for namespace
 * `ns` (watchNamespace) with `helmArgs` (--set, --set-json), applied; in
 * force once `inForce` says so (a dry-run request the policy refuses:
 * policies take effect a moment after they are stored).
 * Returns what removes it again.
 */
export async function installChartPolicy(
  env: TestEnv,
  ns: string,
  template: string,
  helmArgs: string[],
  inForce: () => Promise<boolean>,
): Promise<() => Promise<void>> {
  const chart = join(repoRoot(), 'charts', 'bundlesmith');
  const rendered = await run('helm', [
    'template',
    'guard',
    chart,
    '-n',
    ns,
    '--show-only',
    `templates/${template}`,
    '--set',
    `watchNamespace=${ns}`,
    ...helmArgs,
  ]);
  if (rendered.code !== 0) throw new Error(`helm template failed: ${rendered.stderr}`);
  const docs = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJSON() as KubeObject)
    .filter((d) => d !== null);
  expect(docs.map((d) => d.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
  const installed: { rt: ResourceType; name: string; uid: string }[] = [];
  for (const doc of docs) {
    const rt = await env.discovery.resolve(doc.apiVersion, doc.kind);
    if (!rt) throw new Error(`the apiserver does not serve ${doc.kind}`);
    const live = await env.client.apply(rt, doc, { fieldManager: 'test-guard', force: true });
    installed.push({ rt, name: live.metadata.name, uid: live.metadata.uid });
  }
  const remove = async () => {
    for (const i of installed.reverse()) await env.client.delete(i.rt, undefined, i.name, { uid: i.uid });
  };
  try {
    await waitFor(`the policy of templates/${template} to be in force`, inForce);
  } catch (err) {
    await remove();
    throw err;
  }
  return remove;
}

/**
 * `--cascade=foreground` of a Bundle holding an Orphan object, an Approve
 * object, one that is Orphan by the Bundle's spec.deletionDefaults, one whose
 * deletionDelay another tool overwrote with a value no one can read, and a
 * plain one, the collector running throughout, the chart's deletion guard
 * installed: the guard refuses the collector's deletes of the four while
 * the Bundle controls them, the finalizer releases them, and the collector
 * keeps them (same uid, no deletionTimestamp) and takes the plain one. No
 * pause: the order comes from the guard, not the test.
 */
export async function foregroundGuardKeepsPolicies(c: PropagationContext): Promise<void> {
  const manifest = bundleManifest(c.ns, 'fgg', [
    { name: 'keep', object: configMap('fgg-keep', { k: 'v' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
    { name: 'approve', object: configMap('fgg-approve', { k: 'v' }, { [Annotations.deletionPolicy]: 'Approve' }) },
    { name: 'by-default', object: configMap('fgg-default', { k: 'v' }) },
    { name: 'plain', object: configMap('fgg-plain', { k: 'v' }, { [Annotations.deletionPolicy]: 'Delete' }) },
    { name: 'unreadable', object: configMap('fgg-unreadable', { k: 'v' }, { [Annotations.deletionPolicy]: 'Delete' }) },
  ]);
  (manifest.spec as Record<string, unknown>).deletionDefaults = { deletionPolicy: 'Orphan' };
  await c.env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
  await waitForReady(c.env, c.ns, 'fgg');
  const keep = await c.env.client.get(c.t.configMap, c.ns, 'fgg-keep');
  const approve = await c.env.client.get(c.t.configMap, c.ns, 'fgg-approve');
  const byDefault = await c.env.client.get(c.t.configMap, c.ns, 'fgg-default');
  // The policy it takes from the defaults is written onto it, where the guard reads it.
  expect(byDefault.metadata.annotations?.[Annotations.deletionPolicy]).toBe('Orphan');
  // Another tool writes a deletionDelay no one can read onto a listed object (the operator's apply does not own the key).
  const unreadable = await c.env.client.patch(
    c.t.configMap,
    c.ns,
    'fgg-unreadable',
    { metadata: { annotations: { [Annotations.deletionDelay]: 'soon' } } },
    'merge',
    { fieldManager: 'another-tool' },
  );
  const removeGuard = await installDeletionGuard(c, c.t.configMap, keep.metadata);
  try {
    await deleteBundle(c, 'fgg', 'Foreground');
    await waitFor('fgg to be gone', async () => (await getBundle(c.env, c.ns, 'fgg')) === undefined, { timeoutMs: c.collectorTimeoutMs });
    await waitFor(
      'the plain object to be collected',
      async () => (await c.env.client.tryGet(c.t.configMap, c.ns, 'fgg-plain')) === undefined,
      { timeoutMs: c.collectorTimeoutMs },
    );
    const kept = await expectKept(c, 'fgg-keep', keep.metadata.uid);
    expect(kept.metadata.ownerReferences ?? []).toEqual([]);
    expect(kept.metadata.annotations?.[Annotations.deletionPolicy]).toBe('Orphan');
    const released = await expectKept(c, 'fgg-approve', approve.metadata.uid);
    expect(released.metadata.ownerReferences ?? []).toEqual([]);
    expect(stampOf(released)).toBeDefined();
    expect(released.metadata.annotations?.[Annotations.releaseProof]).toMatch(/^v3:/);
    expect((await expectKept(c, 'fgg-default', byDefault.metadata.uid)).metadata.ownerReferences ?? []).toEqual([]);
    // Rules that cannot be read: released (no countdown can start on them; the sweeper reports it), never deleted.
    const releasedUnreadable = await expectKept(c, 'fgg-unreadable', unreadable.metadata.uid);
    expect(releasedUnreadable.metadata.ownerReferences ?? []).toEqual([]);
    expect(releasedUnreadable.metadata.labels?.[Labels.formerBundle]).toBe('fgg');
  } finally {
    await removeGuard();
  }
}

/**
 * A user who may write Bundles and their status in `ns` and nothing else
 * (not the operators' `write-record` verb), as another tool with those
 * rights would be: the kubectl arguments that act as it. The test's own
 * identity holds every verb and is exempt from the record guard.
 */
export async function statusWriterArgs(env: TestEnv, ns: string): Promise<string[]> {
  return ['--as', await grantStatusWriter(env, ns)];
}

/** Whether a write is refused by the chart's record guard (a dry run, to probe that the policy is in force). */
export async function refusedByRecordGuard(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return false;
  } catch (err) {
    return /bundlesmith record guard/.test(err instanceof Error ? err.message : String(err));
  }
}

/** The user of statusWriterArgs, with its rights granted in `ns`: for a client that impersonates it. */
export async function grantStatusWriter(env: TestEnv, ns: string): Promise<string> {
  const user = 'status-writer@example.com';
  const as = { fieldManager: 'test-admin' };
  await env.client.apply(
    await resourceTypeOf(env, 'rbac.authorization.k8s.io/v1', 'Role'),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'status-writer', namespace: ns },
      rules: [{ apiGroups: ['smith.atlassian.com'], resources: ['bundles', 'bundles/status'], verbs: ['get', 'list', 'update', 'patch'] }],
    },
    as,
  );
  await env.client.apply(
    await resourceTypeOf(env, 'rbac.authorization.k8s.io/v1', 'RoleBinding'),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'status-writer', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'status-writer' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
    as,
  );
  return user;
}

async function resourceTypeOf(env: TestEnv, apiVersion: string, kind: string): Promise<ResourceType> {
  const rt = await env.discovery.resolve(apiVersion, kind);
  if (!rt) throw new Error(`the apiserver does not serve ${kind}`);
  return rt;
}
