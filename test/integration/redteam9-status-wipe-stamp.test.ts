/**
 * Red team 9 probe: a status writer other than the operator clears
 * status.pendingDeletions while the operator is down, and the object's
 * earlier countdown stamp (with its still-valid stamp proof) is written
 * back. The declared-rules annotation is never touched (so not the known
 * limit about a removed/edited declared-rules annotation).
 *
 * Steps: rd-x declares deletionDelay 20s. Removed at T1 (stamped T1),
 * annotations saved; re-added (stamp removed); after T1+20s removed again
 * (stamped T2, deadline T2+20s). Operator stopped; status.pendingDeletions
 * wiped via the status subresource; the T1 stamp and proof written back;
 * operator started. Expected: kept until T2+20s.
 * Actual: deleted within 8s of the restart (~10s after T2). Control (same
 * steps, no status wipe): kept, the record's T2 stamp rejects T1.
 * Cause: countdown.ts countdownOf reads record.pending only; with the entry
 * gone the T1 stamp was taken unchanged and recordedFloor was undefined, so
 * the next pass trusted the proven T1 stamp.
 * Fixed: every countdown is recorded in status.pendingDeletions before its
 * stamp is written (act.ts recordCountdownsFirst), and a proven stamp the
 * record does not hold reads as none (countdown.ts stampTheRecordHolds): the
 * countdown starts again from the restart. The chart's record guard
 * (templates/recordguard.yaml) refuses the wipe itself (second test).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { kubectl, run, waitFor, expectCountdownRestarted } from './harness.js';
import { installChartPolicy, statusWriterArgs } from './deletion-propagation.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('rt9-wipe');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

it('a wiped pendingDeletions record does not let an earlier stamp written back bring the deletion forward', async () => {
  const { env, ns, t } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rd', namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  const x = () => configMap('rd-x', { a: 'b' }, { [Annotations.deletionDelay]: '20s' });

  await apply([x(), configMap('rd-y')]);
  await waitForReady(env, ns, 'rd');
  const uid = (await env.client.get(t.configMap, ns, 'rd-x')).metadata.uid;

  // T1: removed, stamped.
  await apply([configMap('rd-y')]);
  let saved: Record<string, string> = {};
  await waitFor('first stamp', async () => {
    const o = await env.client.get(t.configMap, ns, 'rd-x');
    saved = o.metadata.annotations ?? {};
    return saved[Annotations.deletionTimestamp] !== undefined && saved[Annotations.stampProof] !== undefined;
  });
  // Re-added: countdown cancelled.
  await apply([x(), configMap('rd-y')]);
  await waitFor(
    'stamp removed',
    async () => (await env.client.get(t.configMap, ns, 'rd-x')).metadata.annotations?.[Annotations.deletionTimestamp] === undefined,
  );
  await sleep(22_000);
  // T2: removed again.
  await apply([configMap('rd-y')]);
  await waitFor('second stamp recorded', async () => {
    const o = await env.client.get(t.configMap, ns, 'rd-x');
    const b = await getBundle(env, ns, 'rd');
    const p = (b?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
    return (
      o.metadata.annotations?.[Annotations.deletionTimestamp] !== saved[Annotations.deletionTimestamp] &&
      o.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined &&
      p.some((e) => e.name === 'rd-x')
    );
  });

  // Operator down; another status writer clears the record; the T1 stamp is written back.
  await f.op.stop();
  await kubectl([
    'patch',
    'bundle.smith.atlassian.com',
    'rd',
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { pendingDeletions: null } }),
  ]);
  await kubectl([
    'annotate',
    '--overwrite',
    'configmap',
    'rd-x',
    '-n',
    ns,
    `${Annotations.deletionTimestamp}=${saved[Annotations.deletionTimestamp]}`,
    `${Annotations.stampProof}=${saved[Annotations.stampProof]}`,
  ]);
  f.op = await startOperator({ namespace: ns });
  // The T1 stamp written back reads as none: a new countdown starts (the T1 countdown ended long ago).
  await expectCountdownRestarted(env, t.configMap, ns, 'rd-x', uid, saved[Annotations.deletionTimestamp]);
}, 120_000);

it("the chart's record guard refuses another writer's change to the record (status.pendingDeletions, declaredRules, managedKinds, claims); other status fields stay writable", async () => {
  const { env, ns } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'rg', namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  await apply([configMap('rg-x', { a: 'b' }, { [Annotations.deletionDelay]: '1h' }), configMap('rg-y')]);
  await waitForReady(env, ns, 'rg');
  await apply([configMap('rg-y')]);
  const recordOf = async () => {
    const status = (await getBundle(env, ns, 'rg'))?.status as
      { pendingDeletions?: unknown[]; declaredRules?: unknown[]; managedKinds?: unknown[] } | undefined;
    return { pendingDeletions: status?.pendingDeletions, declaredRules: status?.declaredRules, managedKinds: status?.managedKinds };
  };
  await waitFor('the countdown recorded', async () => ((await recordOf()).pendingDeletions ?? []).length === 1);
  const before = await recordOf();

  // The operator is stopped: its own status writes would be refused too (in this test it runs as the admin, not the chart's ServiceAccount).
  await f.op.stop();
  // Another tool with rights on bundles/status (the test's own identity holds every verb and is exempt).
  const asWriter = await statusWriterArgs(env, ns);
  const statusPatch = (patch: unknown, dryRun = false) =>
    run('kubectl', [
      ...asWriter,
      'patch',
      'bundle.smith.atlassian.com',
      'rg',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(patch),
      ...(dryRun ? ['--dry-run=server'] : []),
    ]);
  const remove = await installChartPolicy(env, ns, 'recordguard.yaml', ['--set', 'recordGuard.enabled=true'], async () => {
    const r = await statusPatch({ status: { pendingDeletions: null } }, true);
    return r.code !== 0 && /bundlesmith record guard/.test(r.stderr);
  });
  try {
    for (const field of ['pendingDeletions', 'declaredRules', 'managedKinds']) {
      const cleared = await statusPatch({ status: { [field]: null } });
      expect(cleared.code).not.toBe(0);
      expect(cleared.stderr).toMatch(/bundlesmith record guard: this status write changes the operator's record of Bundle rg/);
    }
    const rewritten = await statusPatch({
      status: {
        pendingDeletions: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: 'rg-x',
            deletionTimestamp: '2020-01-01T00:00:00Z',
            deleteAfter: '2020-01-01T00:00:01Z',
          },
        ],
      },
    });
    expect(rewritten.code).not.toBe(0);
    // The claim record (status.claims): a forged entry would make a user's reference to this Bundle read as its claim.
    const forged = await statusPatch({ status: { claims: ['00000000-0000-0000-0000-000000000000'] } });
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toMatch(/status\.claims/);
    const message = await statusPatch({ status: { message: 'written by another tool' } });
    expect(message.code).toBe(0);
    expect(await recordOf()).toEqual(before);
  } finally {
    await remove();
    f.op = await startOperator({ namespace: ns });
  }
}, 180_000);
