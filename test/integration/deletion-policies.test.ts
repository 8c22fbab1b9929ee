/**
 * Issue 16 on the real apiserver: keep (deletionPolicy Orphan), approval
 * (deletionPolicy Approve, `bundlesmith approve`), wait for the replacement
 * (deleteWhen BundleReady) and Bundle-wide defaults, across an operator
 * restart, the Bundle's deletion and a move between Bundles. "Kept" always
 * means the same uid and no deletionTimestamp.
 */
import { GarbageCollector } from '../../src/controllers/gc/collector.js';
import { API_VERSION, Annotations, BUNDLE_KIND, Labels } from '../../src/api/names.js';
import { formatRfc3339 } from '../../src/core/rfc3339.js';
import type { KubeObject } from '../../src/kube/types.js';
import {
  applyBundle,
  BUNDLE_RESOURCE_TYPE,
  bundleManifest,
  configMap,
  eventsFor,
  getBundle,
  markDeploymentAvailable,
  waitForBundle,
  waitForReady,
} from './bundles.js';
import { bundlesmith, conditionOf, expectKept, run, uidOf, waitFor } from './harness.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('policies');

interface Pending {
  kind: string;
  name: string;
  deletionTimestamp: string;
  deleteAfter: string;
  waitingFor?: string;
}
const pendingOf = (b: KubeObject | undefined): Pending[] =>
  (b?.status as { pendingDeletions?: Pending[] } | undefined)?.pendingDeletions ?? [];
const waitingFor = (b: KubeObject | undefined, name: string): string | undefined => pendingOf(b).find((p) => p.name === name)?.waitingFor;
const stampOf = (o: KubeObject | undefined): string | undefined => o?.metadata.annotations?.[Annotations.deletionTimestamp];
const bundleRefs = (o: KubeObject | undefined) =>
  (o?.metadata.ownerReferences ?? []).filter((r) => r.kind === BUNDLE_KIND && r.apiVersion === API_VERSION);

/** A Bundle with spec.deletionDefaults, applied as a user would. */
async function applyWithDefaults(
  name: string,
  resources: Parameters<typeof applyBundle>[3],
  defaults: Record<string, string>,
): Promise<void> {
  const manifest = bundleManifest(f.ns, name, resources);
  (manifest.spec as Record<string, unknown>).deletionDefaults = defaults;
  await f.env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true });
}

/** Deletes a Bundle with the given propagation and waits until it is gone. */
async function deleteBundle(name: string, cascade: 'background' | 'orphan'): Promise<void> {
  expect((await run('kubectl', ['delete', 'bundle', name, '-n', f.ns, `--cascade=${cascade}`, '--wait=false'])).code).toBe(0);
  await waitFor(`Bundle ${name} to be gone`, async () => (await getBundle(f.env, f.ns, name)) === undefined);
}

describe('deletionPolicy Orphan (keep)', () => {
  it('an object dropped from a live Bundle is released, not deleted, and the Bundle says so', async () => {
    const keep = {
      name: 'keep',
      object: configMap('pk-keep', {}, { [Annotations.deletionPolicy]: 'Orphan', [Annotations.deletionDelay]: '0s' }),
    };
    const other = { name: 'other', object: configMap('pk-other') };
    await applyBundle(f.env, f.ns, 'keeper', [keep, other]);
    await waitForReady(f.env, f.ns, 'keeper');
    const uid = await uidOf(f.env, f.t.configMap, f.ns, 'pk-keep');

    await applyBundle(f.env, f.ns, 'keeper', [other]);
    const released = await waitFor('the object to be released', async () => {
      const o = await f.env.client.tryGet(f.t.configMap, f.ns, 'pk-keep');
      return o !== undefined && bundleRefs(o).length === 0 ? o : undefined;
    });
    expectKept(released, uid);
    expect(released.metadata.labels?.[Labels.formerBundle]).toBe('keeper');
    expect(stampOf(released)).toBeUndefined();
    await waitFor('a Released event', async () =>
      (await eventsFor(f.env, f.ns, 'keeper')).some((e) => e.reason === 'Released' && e.note.includes('pk-keep')),
    );
    const bundle = await waitForReady(f.env, f.ns, 'keeper');
    expect(pendingOf(bundle)).toEqual([]);
    // The operator's next passes leave it alone: still the same object.
    f.op.operator.bundles.enqueue(`${f.ns}/keeper`);
    await waitForBundle(f.env, f.ns, 'keeper', 'reconciled again', (b) => conditionOf(b, 'Ready')?.status === 'True');
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pk-keep'), uid);
    // `pending` shows it as kept.
    const pending = await bundlesmith(['pending', '-n', f.ns]);
    expect(pending.stdout).toMatch(/ConfigMap\/pk-keep\s+keeper\s+released/);
  });

  // Orphan propagation keeps every object whatever its policy (bundle-deletion-propagation tests, with a collector).
  it.each<['background']>([['background']])(
    'a Bundle deleted (%s) with an Orphan default keeps its objects; an object that says Delete goes',
    async (cascade) => {
      const name = `kd-${cascade}`;
      await applyWithDefaults(
        name,
        [
          { name: 'a', object: configMap(`${name}-a`) },
          { name: 'b', object: configMap(`${name}-b`, {}, { [Annotations.deletionPolicy]: 'Delete' }) },
        ],
        { deletionPolicy: 'Orphan' },
      );
      await waitForReady(f.env, f.ns, name);
      const a = await uidOf(f.env, f.t.configMap, f.ns, `${name}-a`);
      const b = await uidOf(f.env, f.t.configMap, f.ns, `${name}-b`);
      await deleteBundle(name, cascade);
      const kept = await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-a`);
      expectKept(kept, a);
      expect(bundleRefs(kept)).toEqual([]);
      expect(await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-b`)).toBeUndefined();
      expect(b).not.toBe(a);
    },
  );
});

describe('deletionPolicy Approve', () => {
  it('waits for an approval later than the stamp, across a restart; bundlesmith approve lets it go', async () => {
    const ap = { name: 'ap', object: configMap('pa-ap', {}, { [Annotations.deletionPolicy]: 'Approve' }) };
    const other = { name: 'other', object: configMap('pa-other') };
    await applyBundle(f.env, f.ns, 'approver', [ap, other]);
    await waitForReady(f.env, f.ns, 'approver');
    const uid = await uidOf(f.env, f.t.configMap, f.ns, 'pa-ap');

    await applyBundle(f.env, f.ns, 'approver', [other]);
    const waiting = await waitForBundle(f.env, f.ns, 'approver', 'waiting for approval', (b) => waitingFor(b, 'pa-ap') === 'Approval');
    expect((waiting.status as { awaitingApprovalCount?: number }).awaitingApprovalCount).toBe(1);
    expect(conditionOf(waiting, 'Ready')?.status).toBe('True');
    await waitFor('an AwaitingApproval event', async () =>
      (await eventsFor(f.env, f.ns, 'approver')).some((e) => e.reason === 'AwaitingApproval' && e.note.includes('pa-ap')),
    );
    const stamped = await f.env.client.get(f.t.configMap, f.ns, 'pa-ap');
    expectKept(stamped, uid);
    const stamp = stampOf(stamped) as string;

    // An approval that predates the countdown never counts.
    const early = formatRfc3339(Date.parse(stamp) - 60_000);
    await f.env.client.patch(
      f.t.configMap,
      f.ns,
      'pa-ap',
      { metadata: { annotations: { [Annotations.deletionApproved]: early } } },
      'merge',
      { fieldManager: 'someone' },
    );
    f.op.operator.bundles.enqueue(`${f.ns}/approver`);
    await waitForBundle(f.env, f.ns, 'approver', 'still waiting', (b) => waitingFor(b, 'pa-ap') === 'Approval');
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-ap'), uid);

    // A restart changes nothing.
    await f.op.stop();
    f.op = await startOperator({ namespace: f.ns });
    f.op.operator.bundles.enqueue(`${f.ns}/approver`);
    await waitForBundle(f.env, f.ns, 'approver', 'still waiting after a restart', (b) => waitingFor(b, 'pa-ap') === 'Approval');
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-ap'), uid);

    const approved = await bundlesmith(['approve', 'ConfigMap/pa-ap', '-n', f.ns]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('approved: ConfigMap/pa-ap');
    await waitFor('the approved object to be deleted', async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-ap')) === undefined);
    await waitForBundle(
      f.env,
      f.ns,
      'approver',
      'nothing pending',
      (b) => pendingOf(b).length === 0 && (b.status as { awaitingApprovalCount?: number }).awaitingApprovalCount === 0,
    );
  });

  it('approve refuses an object that is not pending', async () => {
    await applyBundle(f.env, f.ns, 'notpending', [{ name: 'a', object: configMap('pa-np') }]);
    await waitForReady(f.env, f.ns, 'notpending');
    const refused = await bundlesmith(['approve', 'ConfigMap/pa-np', '-n', f.ns]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('not pending deletion');
  });

  it('released by a deleted Bundle (Approve by default): the sweeper keeps it until approved', async () => {
    await applyWithDefaults('appr-gone', [{ name: 'a', object: configMap('pa-gone') }], { deletionPolicy: 'Approve' });
    await waitForReady(f.env, f.ns, 'appr-gone');
    const uid = await uidOf(f.env, f.t.configMap, f.ns, 'pa-gone');
    await deleteBundle('appr-gone', 'background');
    const released = await waitFor('the object to be released with a countdown', async () => {
      const o = await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-gone');
      return o?.metadata.labels?.[Labels.formerBundle] === 'appr-gone' && stampOf(o) !== undefined ? o : undefined;
    });
    expectKept(released, uid);
    // The Bundle's default went with the object: the sweeper needs it once the Bundle is gone.
    expect(released.metadata.annotations?.[Annotations.deletionPolicy]).toBe('Approve');
    expect(released.metadata.annotations?.[Annotations.deletionDelay]).toBe('0s');
    await waitFor('an AwaitingApproval event on the object', async () =>
      (await eventsFor(f.env, f.ns, 'pa-gone')).some((e) => e.reason === 'AwaitingApproval'),
    );
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-gone'), uid);
    // A zero delay from a stamp taken at the server's upper time bound may read as Delay for a moment.
    await waitFor('pending to say it waits for an approval', async () =>
      /ConfigMap\/pa-gone\s+appr-gone\s+released\s+Approval/.test((await bundlesmith(['pending', '-n', f.ns])).stdout),
    );

    // Taking the policy off by hand does not skip the approval: the release proof no longer checks.
    await f.env.client.patch(
      f.t.configMap,
      f.ns,
      'pa-gone',
      [{ op: 'remove', path: `/metadata/annotations/${Annotations.deletionPolicy.replace('/', '~1')}` }],
      'json',
      { fieldManager: 'someone' },
    );
    await waitFor('an UnprovenRelease event', async () =>
      (await eventsFor(f.env, f.ns, 'pa-gone')).some((e) => e.reason === 'UnprovenRelease'),
    );
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-gone'), uid);
    await f.env.client.patch(
      f.t.configMap,
      f.ns,
      'pa-gone',
      { metadata: { annotations: { [Annotations.deletionPolicy]: 'Approve' } } },
      'merge',
      { fieldManager: 'someone' },
    );

    expect((await bundlesmith(['approve', 'ConfigMap/pa-gone', '-n', f.ns])).code).toBe(0);
    await waitFor(
      'the approved released object to be deleted',
      async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-gone')) === undefined,
    );
  });

  it('orphan deletion of the Bundle, after a restart: every policy object is kept, its countdown and approval gone', async () => {
    const keep = { name: 'keep', object: configMap('po-keep', {}, { [Annotations.deletionPolicy]: 'Orphan' }) };
    const ap = { name: 'ap', object: configMap('po-ap', {}, { [Annotations.deletionPolicy]: 'Approve' }) };
    const ready = {
      name: 'ready',
      object: configMap('po-ready', {}, { [Annotations.deleteWhen]: 'BundleReady', [Annotations.deletionDelay]: '1h' }),
    };
    const dflt = { name: 'dflt', object: configMap('po-default') };
    await applyWithDefaults('orph-pol', [keep, ap, ready, dflt], { deletionPolicy: 'Approve' });
    await waitForReady(f.env, f.ns, 'orph-pol');
    const uids = new Map<string, string>();
    for (const name of ['po-keep', 'po-ap', 'po-ready', 'po-default']) uids.set(name, await uidOf(f.env, f.t.configMap, f.ns, name));
    // Two leave the spec and count down; one of them is approved too early to count.
    await applyWithDefaults('orph-pol', [keep, dflt], { deletionPolicy: 'Approve' });
    await waitForBundle(
      f.env,
      f.ns,
      'orph-pol',
      'two pending',
      (b) => waitingFor(b, 'po-ap') === 'Approval' && waitingFor(b, 'po-ready') === 'Delay',
    );
    await f.env.client.patch(
      f.t.configMap,
      f.ns,
      'po-ap',
      { metadata: { annotations: { [Annotations.deletionApproved]: '2000-01-01T00:00:00Z' } } },
      'merge',
      { fieldManager: 'someone' },
    );

    await f.op.stop();
    f.op = await startOperator({ namespace: f.ns });
    // A collector finishes the orphan deletion (removes the orphan finalizer), as kube-controller-manager's would.
    const collector = new GarbageCollector(f.env.client, { mode: 'cluster', namespaces: [f.ns], workers: 2 });
    await collector.start();
    try {
      await deleteBundle('orph-pol', 'orphan');
    } finally {
      await collector.stop();
    }
    for (const [name, uid] of uids) {
      const o = await waitFor(`${name} to be let go`, async () => {
        const live = await f.env.client.tryGet(f.t.configMap, f.ns, name);
        return live !== undefined && bundleRefs(live).length === 0 && stampOf(live) === undefined ? live : undefined;
      });
      expectKept(o, uid);
      expect(o.metadata.annotations?.[Annotations.deletionApproved]).toBeUndefined();
    }
    // Nothing comes for them later: the sweeper has no release to act on.
    f.op.operator.bundles.enqueue(`${f.ns}/orph-pol`);
    const pending = await bundlesmith(['pending', '-n', f.ns]);
    expect(pending.stdout).not.toMatch(/po-(ap|ready|default)\s/);
    for (const [name, uid] of uids) expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, name), uid);
  });

  it('moved to another Bundle while waiting: handed over, stamp and approval gone, never deleted', async () => {
    const ap = configMap('pa-move', {}, { [Annotations.deletionPolicy]: 'Approve' });
    await applyBundle(f.env, f.ns, 'from', [
      { name: 'm', object: ap },
      { name: 'x', object: configMap('pa-from-x') },
    ]);
    await waitForReady(f.env, f.ns, 'from');
    const uid = await uidOf(f.env, f.t.configMap, f.ns, 'pa-move');
    await applyBundle(f.env, f.ns, 'from', [{ name: 'x', object: configMap('pa-from-x') }]);
    await waitForBundle(f.env, f.ns, 'from', 'waiting for approval', (b) => waitingFor(b, 'pa-move') === 'Approval');
    const stamp = stampOf(await f.env.client.get(f.t.configMap, f.ns, 'pa-move')) as string;
    // An approval lands just as another Bundle takes the object: the take-over wins and clears it.
    await applyBundle(f.env, f.ns, 'to', [{ name: 'm', object: ap }]);
    await f.env.client
      .patch(
        f.t.configMap,
        f.ns,
        'pa-move',
        { metadata: { annotations: { [Annotations.deletionApproved]: formatRfc3339(Date.parse(stamp) + 1) } } },
        'merge',
        { fieldManager: 'someone' },
      )
      .catch(() => undefined);
    const to = await waitForReady(f.env, f.ns, 'to');
    const moved = await waitFor('the object to be taken over, stamp and approval gone', async () => {
      const o = await f.env.client.tryGet(f.t.configMap, f.ns, 'pa-move');
      const a = o?.metadata.annotations ?? {};
      return o !== undefined &&
        bundleRefs(o)[0]?.uid === to.metadata.uid &&
        a[Annotations.deletionTimestamp] === undefined &&
        a[Annotations.deletionApproved] === undefined
        ? o
        : undefined;
    });
    expectKept(moved, uid);
    await waitForBundle(f.env, f.ns, 'from', 'nothing pending', (b) => pendingOf(b).length === 0);
  });
});

describe('deleteWhen BundleReady', () => {
  const deployment = (config: string): Record<string, unknown> => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'pr-web' },
    spec: {
      selector: { matchLabels: { app: 'pr' } },
      template: {
        metadata: { labels: { app: 'pr' } },
        spec: { containers: [{ name: 'web', image: 'registry.example/web:1', envFrom: [{ configMapRef: { name: config } }] }] },
      },
    },
  });
  const config = (name: string) => ({ name, object: configMap(name, { v: name }, { [Annotations.deleteWhen]: 'BundleReady' }) });

  it('an old ConfigMap outlives the rollout that stops using it, and goes once the Bundle is Ready', async () => {
    await applyBundle(f.env, f.ns, 'rollout', [
      config('pr-v1'),
      { name: 'web', object: deployment('pr-v1'), references: [{ resource: 'pr-v1' }] },
    ]);
    await waitFor('the Deployment', () => f.env.client.tryGet(f.t.deployment, f.ns, 'pr-web'));
    await markDeploymentAvailable(f.env, f.ns, 'pr-web');
    await waitForReady(f.env, f.ns, 'rollout');
    const v1 = await uidOf(f.env, f.t.configMap, f.ns, 'pr-v1');

    // The new version: a new ConfigMap, the Deployment switched to it, not rolled out yet.
    await applyBundle(f.env, f.ns, 'rollout', [
      config('pr-v2'),
      { name: 'web', object: deployment('pr-v2'), references: [{ resource: 'pr-v2' }] },
    ]);
    const waiting = await waitForBundle(
      f.env,
      f.ns,
      'rollout',
      'pr-v1 waiting for the Bundle',
      (b) => waitingFor(b, 'pr-v1') === 'BundleReady',
    );
    expect(conditionOf(waiting, 'Ready')?.status).not.toBe('True');
    await waitFor('an AwaitingBundleReady event', async () =>
      (await eventsFor(f.env, f.ns, 'rollout')).some((e) => e.reason === 'AwaitingBundleReady' && e.note.includes('pr-v1')),
    );
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pr-v1'), v1);

    // The rollout completes: the Bundle is Ready with the new spec, the old ConfigMap goes.
    await waitFor('the Deployment to be updated', async () =>
      JSON.stringify((await f.env.client.get(f.t.deployment, f.ns, 'pr-web')).spec).includes('pr-v2'),
    );
    await markDeploymentAvailable(f.env, f.ns, 'pr-web');
    await waitFor(
      'pr-v1 to be deleted once the Bundle is Ready',
      async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'pr-v1')) === undefined,
    );
    expect(conditionOf(await getBundle(f.env, f.ns, 'rollout'), 'Ready')?.status).toBe('True');
  });
});

describe('deletionDefaults and bad values', () => {
  it('a default delay counts down objects without their own; their own annotation wins', async () => {
    await applyWithDefaults(
      'defaults',
      [
        { name: 'a', object: configMap('pd-a') },
        { name: 'b', object: configMap('pd-b', {}, { [Annotations.deletionDelay]: '0s' }) },
        { name: 'x', object: configMap('pd-x') },
      ],
      { deletionDelay: '1h' },
    );
    await waitForReady(f.env, f.ns, 'defaults');
    const a = await uidOf(f.env, f.t.configMap, f.ns, 'pd-a');
    await applyWithDefaults('defaults', [{ name: 'x', object: configMap('pd-x') }], { deletionDelay: '1h' });
    const bundle = await waitForBundle(f.env, f.ns, 'defaults', 'pd-a counting down', (b) => waitingFor(b, 'pd-a') === 'Delay');
    const entry = pendingOf(bundle).find((p) => p.name === 'pd-a') as Pending;
    expect(Date.parse(entry.deleteAfter) - Date.parse(entry.deletionTimestamp)).toBe(3_600_000);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pd-a'), a);
    await waitFor('pd-b (its own 0s) to be deleted', async () => (await f.env.client.tryGet(f.t.configMap, f.ns, 'pd-b')) === undefined);
  });

  it('an unknown policy on a listed object is an Error: not applied, nothing pruned', async () => {
    await applyBundle(f.env, f.ns, 'badpolicy', [
      { name: 'a', object: configMap('pb-a') },
      { name: 'gone', object: configMap('pb-gone') },
    ]);
    await waitForReady(f.env, f.ns, 'badpolicy');
    const gone = await uidOf(f.env, f.t.configMap, f.ns, 'pb-gone');
    await applyBundle(f.env, f.ns, 'badpolicy', [
      { name: 'a', object: configMap('pb-a', {}, { [Annotations.deletionPolicy]: 'Sometimes' }) },
    ]);
    const failing = await waitForBundle(f.env, f.ns, 'badpolicy', 'Error=True', (b) => conditionOf(b, 'Error')?.status === 'True');
    expect(conditionOf(failing, 'Error')?.message).toContain('"Sometimes" is not one of Delete, Orphan, Approve');
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'pb-gone'), gone);
  });

  it('an unknown policy in spec.deletionDefaults is refused at the door', async () => {
    const manifest = bundleManifest(f.ns, 'baddefaults', [{ name: 'a', object: configMap('pb-d') }]);
    (manifest.spec as Record<string, unknown>).deletionDefaults = { deletionPolicy: 'Sometimes' };
    await expect(f.env.client.apply(BUNDLE_RESOURCE_TYPE, manifest, { fieldManager: 'test-user', force: true })).rejects.toThrow(
      /deletionPolicy/,
    );
  });
});
