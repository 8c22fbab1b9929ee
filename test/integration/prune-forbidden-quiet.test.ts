/**
 * A prune the Bundle's identity may not make (RBAC refuses the delete) is
 * retried with backoff, and its status says Forbidden once: the retries
 * write nothing while nothing changes. (The softdelete fuzz's seed 19718
 * showed a refused delete of an object gated on deleteWhen BundleReady sent
 * every 100 ms while the rights were gone: the failure made the Bundle not
 * Ready, which closed the gate, so the next pass deleted nothing, failed
 * nothing, said Ready, and opened it again; each pass wrote the status.)
 */
import { Annotations, Reasons } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE, bundleManifest, configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { conditionOf, expectKept, uidOf, waitFor } from './harness.js';
import { operatorFixture } from './operator.js';
import { serviceAccountWithRules } from './orphan-traces.js';

const f = operatorFixture('prune-forbidden');
const ACCOUNT = 'no-delete';

/**
 * The Bundle `name` lists `kept-cm` and `pruned-cm` (with `annotations`),
 * then drops `pruned-cm`, which its account may not delete.
 */
async function refusedPruneIsQuiet(name: string, annotations: Record<string, string>): Promise<void> {
  const { env, ns } = f;
  const apply = async (names: string[]): Promise<void> => {
    const manifest = bundleManifest(
      ns,
      name,
      names.map((n) => ({ name: n, object: configMap(`${name}-${n}`, undefined, annotations) })),
    );
    const spec = manifest.spec as Record<string, unknown>;
    await env.client.apply(
      BUNDLE_RESOURCE_TYPE,
      { ...manifest, spec: { ...spec, serviceAccountName: ACCOUNT } },
      { fieldManager: 'test-user', force: true },
    );
  };
  await apply(['kept', 'pruned']);
  await waitForReady(env, ns, name);
  const uid = await uidOf(env, f.t.configMap, ns, `${name}-pruned`);

  await apply(['kept']);
  const refused = await waitForBundle(env, ns, name, 'the prune refused', (b) => conditionOf(b, 'Error')?.reason === Reasons.Forbidden);
  expect(conditionOf(refused, 'Error')?.message).toContain(`${name}-pruned`);
  const rvOf = async (): Promise<string> => (await env.client.get(BUNDLE_RESOURCE_TYPE, ns, name)).metadata.resourceVersion;
  const reconciles = async (): Promise<number> => (await f.op.metrics.reconciles.get()).values.reduce((sum, v) => sum + v.value, 0);
  // Let the write that said Forbidden land, then count: two passes (retries) in a row change nothing, and three more
  // passes after that change nothing either.
  await waitFor('the status to settle', async () => {
    const before = await rvOf();
    const count = await reconciles();
    await waitFor('another pass', async () => (await reconciles()) > count + 1);
    return (await rvOf()) === before;
  });
  const settled = await rvOf();
  for (let i = 0; i < 3; i++) {
    const count = await reconciles();
    f.op.operator.bundles.enqueue(`${ns}/${name}`);
    await waitFor('another pass', async () => (await reconciles()) > count);
  }
  expect(await rvOf()).toBe(settled);
  expect(conditionOf(await getBundle(env, ns, name), 'Error')?.reason).toBe(Reasons.Forbidden);
  expectKept(await env.client.get(f.t.configMap, ns, `${name}-pruned`), uid);
}

beforeAll(async () => {
  await serviceAccountWithRules(f.env, f.ns, ACCOUNT, [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
  ]);
});

it('a prune RBAC refuses: Forbidden said once, the object kept, and the retries write nothing while nothing changes', async () => {
  await refusedPruneIsQuiet('plain', {});
});

it('the same for an object waiting for deleteWhen BundleReady: the refused delete does not close its own gate (the Bundle not Ready) and open it again a pass later', async () => {
  await refusedPruneIsQuiet('gated', { [Annotations.deleteWhen]: 'BundleReady' });
});
