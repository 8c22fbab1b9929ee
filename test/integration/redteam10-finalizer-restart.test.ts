/**
 * Red team 10 attempts that held: the restart rule (a proven stamp the record
 * does not hold, or one earlier than the recorded one, reads as none) in the
 * finalizer's release. An earlier countdown's stamp and proof are written
 * back while the operator is down, and the Bundle is deleted in background
 * propagation before the operator comes back: (a) with the record holding
 * the later countdown; (b) with the record cleared by another status writer
 * (no record guard). The finalizer releases the object; its release must not
 * carry the earlier stamp, so the sweeper keeps it for at least the delay
 * from the restart. Kept = same UID, no deletionTimestamp.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, kubectl, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('rt10-fin');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function scenario(name: string, wipe: boolean): Promise<void> {
  const { env, ns, t } = f;
  const X = `${name}-x`;
  const manifest = (objects: Record<string, unknown>[]) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace: ns },
    spec: { resources: objects.map((o) => ({ name: (o.metadata as { name: string }).name, spec: { object: o } })) },
  });
  const apply = (objects: Record<string, unknown>[]) =>
    env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(objects), { fieldManager: 'test-user', force: true });
  const x = () => configMap(X, { a: 'b' }, { [Annotations.deletionDelay]: '20s' });
  await apply([x(), configMap(`${name}-y`)]);
  await waitForReady(env, ns, name);
  const uid = (await env.client.get(t.configMap, ns, X)).metadata.uid;

  await apply([configMap(`${name}-y`)]);
  let saved: Record<string, string> = {};
  await waitFor('first stamp', async () => {
    saved = (await env.client.get(t.configMap, ns, X)).metadata.annotations ?? {};
    return saved[Annotations.deletionTimestamp] !== undefined && saved[Annotations.stampProof] !== undefined;
  });
  await apply([x(), configMap(`${name}-y`)]);
  await waitFor(
    'stamp removed',
    async () => (await env.client.get(t.configMap, ns, X)).metadata.annotations?.[Annotations.deletionTimestamp] === undefined,
  );
  await sleep(22_000);
  await apply([configMap(`${name}-y`)]);
  await waitFor('second stamp recorded', async () => {
    const o = await env.client.get(t.configMap, ns, X);
    const p = ((await getBundle(env, ns, name))?.status as { pendingDeletions?: { name: string }[] } | undefined)?.pendingDeletions ?? [];
    const s = o.metadata.annotations?.[Annotations.deletionTimestamp];
    return s !== undefined && s !== saved[Annotations.deletionTimestamp] && p.some((e) => e.name === X);
  });

  await f.op.stop();
  if (wipe)
    await kubectl([
      'patch',
      'bundle.smith.atlassian.com',
      name,
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
    X,
    '-n',
    ns,
    `${Annotations.deletionTimestamp}=${saved[Annotations.deletionTimestamp]}`,
    `${Annotations.stampProof}=${saved[Annotations.stampProof]}`,
  ]);
  await kubectl(['delete', 'bundle.smith.atlassian.com', name, '-n', ns, '--wait=false']);
  const restart = Date.now();
  f.op = await startOperator({ namespace: ns });
  const released = await waitFor('released', async () => {
    const o = await env.client.tryGet(t.configMap, ns, X);
    if (o === undefined) return { gone: true as const };
    return o.metadata.annotations?.[Annotations.releaseProof] !== undefined ? { gone: false as const, o } : undefined;
  });
  if (!released.gone)
    expect(Date.parse(released.o.metadata.annotations?.[Annotations.deletionTimestamp] ?? '')).toBeGreaterThan(
      Date.parse(saved[Annotations.deletionTimestamp]!) + 20_000,
    );
  await sleep(Math.max(0, restart + 12_000 - Date.now()));
  expectKept(await env.client.tryGet(t.configMap, ns, X), uid);
}

it('background deletion, the record holding the later countdown: the release does not carry the earlier stamp written back', async () => {
  await scenario('fa', false);
}, 180_000);

it('background deletion, the record cleared by another writer (no guard): the release starts the countdown from now', async () => {
  await scenario('fb', true);
}, 180_000);
