/**
 * Red team 10 attempts that held: ways another status writer might change a
 * Bundle's record (status.pendingDeletions) past the chart's record guard,
 * and the earlier stamp written back after each. Every write that would
 * change the record is refused (JSON patch replace / remove / reorder,
 * `kubectl replace --subresource=status` of an older status, server-side
 * apply on the status subresource); a write through the main resource
 * leaves status as it was (the status subresource). After them, the
 * countdown's object is still counting down from its recorded stamp (same
 * UID, no deletionTimestamp).
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, run, waitFor } from './harness.js';
import { installChartPolicy, statusWriterArgs } from './deletion-propagation.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('rt10-guard');

it('the record guard refuses every shape of status write that changes pendingDeletions; a main-resource write cannot reach status', async () => {
  const { env, ns, t } = f;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'gb', namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  await apply([
    configMap('gb-a', {}, { [Annotations.deletionDelay]: '1h' }),
    configMap('gb-b', {}, { [Annotations.deletionDelay]: '2h' }),
    configMap('gb-y'),
  ]);
  await waitForReady(env, ns, 'gb');
  const uids = {
    a: (await env.client.get(t.configMap, ns, 'gb-a')).metadata.uid,
    b: (await env.client.get(t.configMap, ns, 'gb-b')).metadata.uid,
  };
  await apply([configMap('gb-y')]);
  const pendingOf = async () =>
    ((await getBundle(env, ns, 'gb'))?.status as { pendingDeletions?: Record<string, string>[] } | undefined)?.pendingDeletions ?? [];
  await waitFor('two countdowns recorded', async () => (await pendingOf()).length === 2);
  const before = await pendingOf();

  await f.op.stop();
  // Another tool with rights on bundles/status (the test's own identity holds every verb and is exempt).
  const asWriter = await statusWriterArgs(env, ns);
  const remove = await installChartPolicy(env, ns, 'recordguard.yaml', ['--set', 'recordGuard.enabled=true'], async () => {
    const r = await run('kubectl', [
      ...asWriter,
      'patch',
      'bundle.smith.atlassian.com',
      'gb',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { pendingDeletions: null } }),
      '--dry-run=server',
    ]);
    return r.code !== 0 && /bundlesmith record guard/.test(r.stderr);
  });
  try {
    const jsonPatch = (ops: unknown[]) =>
      run('kubectl', [
        ...asWriter,
        'patch',
        'bundle.smith.atlassian.com',
        'gb',
        '-n',
        ns,
        '--subresource=status',
        '--type=json',
        '-p',
        JSON.stringify(ops),
      ]);
    expect(
      (await jsonPatch([{ op: 'replace', path: '/status/pendingDeletions/0/deleteAfter', value: '2020-01-01T00:00:00Z' }])).code,
    ).not.toBe(0);
    expect((await jsonPatch([{ op: 'remove', path: '/status/pendingDeletions/1' }])).code).not.toBe(0);
    expect((await jsonPatch([{ op: 'move', from: '/status/pendingDeletions/0', path: '/status/pendingDeletions/1' }])).code).not.toBe(0);
    expect((await jsonPatch([{ op: 'replace', path: '/status', value: { message: 'restored' } }])).code).not.toBe(0);

    // kubectl replace --subresource=status of the Bundle with one entry gone.
    const live = await getBundle(env, ns, 'gb');
    const older = { ...live, status: { ...(live!.status as Record<string, unknown>), pendingDeletions: before.slice(0, 1) } };
    const replaced = await run('kubectl', [...asWriter, 'replace', '--subresource=status', '-f', '-'], { input: JSON.stringify(older) });
    expect(replaced.code).not.toBe(0);
    expect(replaced.stderr).toMatch(/record guard/);

    // Server-side apply on the status subresource by another field manager.
    const ssa = await run(
      'kubectl',
      [...asWriter, 'apply', '--server-side', '--force-conflicts', '--field-manager=restore-tool', '--subresource=status', '-f', '-'],
      {
        input: JSON.stringify({
          apiVersion: 'smith.atlassian.com/v1',
          kind: 'Bundle',
          metadata: { name: 'gb', namespace: ns },
          status: { pendingDeletions: [] },
        }),
      },
    );
    expect(ssa.code).not.toBe(0);

    // The main resource: status is not written there.
    const main = await run('kubectl', [...asWriter, 'replace', '-f', '-'], {
      input: JSON.stringify({ ...(await getBundle(env, ns, 'gb')), status: { pendingDeletions: [] } }),
    });
    expect(main.code).toBe(0);
    expect(await pendingOf()).toEqual(before);
  } finally {
    await remove();
  }
  // An earlier proof written back would be judged by the unchanged record; the countdowns run on.
  f.op = await startOperator({ namespace: ns });
  await new Promise((r) => setTimeout(r, 5_000));
  expectKept(await env.client.tryGet(t.configMap, ns, 'gb-a'), uids.a);
  expectKept(await env.client.tryGet(t.configMap, ns, 'gb-b'), uids.b);
  // The same countdowns (the operator's own later status writes may list them in another order).
  const entries = (list: Record<string, string>[]) => list.map((p) => `${p['name'] ?? ''} ${p['deletionTimestamp'] ?? ''}`).sort();
  expect(entries(await pendingOf())).toEqual(entries(before));
}, 180_000);
