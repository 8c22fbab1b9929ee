/**
 * Red team 7: an Orphan policy that comes from the Bundle's
 * spec.deletionDefaults is written onto the live object by the operator
 * (desired.ts keepingPolicyFromDefaults) but sealed nowhere: the
 * declared-rules proof seals only what the manifest itself declares
 * (nothing here, so no proof at all). Taken off the live object by hand
 * while the operator is down, it no longer holds the chart's deletion guard
 * back, and kube-controller-manager deletes the object in a foreground
 * cascade. The operator would have released it (its finalizer reads the
 * Bundle's defaults: Orphan). This is red team 6's "policy taken off by
 * hand" with the policy from the defaults, which a59d612's fix (read the
 * policies sealed in the proofs) does not reach.
 *
 * Steps: kube-controller-manager runs; the chart's deletion guard is
 * installed for it. A Bundle with spec.deletionDefaults.deletionPolicy
 * Orphan lists ConfigMaps rt7g-edited and rt7g-control (their manifests
 * declare no rules: the operator writes deletionPolicy Orphan onto both)
 * and rt7g-plain (its manifest says deletionPolicy Delete). The operator
 * goes down (a restart, an upgrade). Another tool takes deletionPolicy off
 * rt7g-edited (a merge patch). `kubectl delete bundle --cascade=foreground`.
 * The collector takes rt7g-plain. The operator comes back.
 *
 * Expected (docs/safety.md, foreground: "releases Orphan and Approve
 * objects (by the stricter of the live rules, the sealed proofs and the
 * manifest) ... the chart's deletion guard refuses the collectors' deletes
 * of those ... reading the live policy and the policies sealed in the
 * operator's proofs"; docs/deletion.md: "Orphan by the Bundle's
 * spec.deletionDefaults" is kept in foreground): both Orphan objects kept.
 * Actual: rt7g-control kept, rt7g-edited deleted by kube-controller-manager
 * before the operator is back.
 *
 * Cause: charts/bundlesmith/templates/deletionguard.yaml:44-50
 * (sealedPolicies) reads the declared-rules and stamp-proof annotations
 * only; src/core/bundle/plan-resource.ts:104-107 seals the manifest's own
 * annotations (manifestRules), not the policy taken from the defaults, and
 * src/core/softdelete/stamp-seal.ts:131-133 (sealDeclaredRules) writes no
 * proof when the manifest declares nothing. The finalizer's reading
 * (src/core/bundle/finalize.ts keptFromCascade: readDeletionRules over
 * bundle.defaults) sees Orphan, the guard cannot.
 *
 * Suggested fix: seal the effective keeping policy, defaults included, into
 * the declared-rules proof (a field for "policy from defaults", or seal the
 * object's effective rules), so the guard reads it in clear like the
 * manifest's own; or have the guard refuse a collector's delete of any
 * Bundle-held object carrying the managed label until the finalizer has
 * marked it as left to the collector.
 *
 * Fixed: the declared-rules proof seals a keeping policy the object takes
 * from the Bundle's defaults (countdown.ts declarationToSeal), so the guard
 * reads Orphan in it after the annotation is taken off.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { installDeletionGuard } from './deletion-propagation.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const f = referenceFixture('rt7gd');

it("foreground, deletion guard installed: an object Orphan by the Bundle's defaults, its live policy taken off by hand, is not deleted by the collector", async () => {
  const { env, ns, t } = f;
  const bundleManifest = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'gd', namespace: ns },
    spec: {
      deletionDefaults: { deletionPolicy: 'Orphan' },
      resources: [
        { name: 'edited', spec: { object: configMap('rt7g-edited', { k: 'v' }) } },
        { name: 'control', spec: { object: configMap('rt7g-control', { k: 'v' }) } },
        { name: 'plain', spec: { object: configMap('rt7g-plain', { k: 'v' }, { [Annotations.deletionPolicy]: 'Delete' }) } },
      ],
    },
  };
  await env.client.apply(BUNDLE_RESOURCE_TYPE, bundleManifest, { fieldManager: 'test-user', force: true });
  await waitForReady(env, ns, 'gd');
  const edited = await env.client.get(t.configMap, ns, 'rt7g-edited');
  const control = await env.client.get(t.configMap, ns, 'rt7g-control');
  expect(edited.metadata.annotations?.[Annotations.deletionPolicy]).toBe('Orphan');
  expect(control.metadata.annotations?.[Annotations.deletionPolicy]).toBe('Orphan');

  const removeGuard = await installDeletionGuard(f, t.configMap, control.metadata);
  try {
    // The operator is down (a restart); another tool takes the policy off one object meanwhile.
    await f.operator.stop();
    await env.client.patch(t.configMap, ns, 'rt7g-edited', { metadata: { annotations: { [Annotations.deletionPolicy]: null } } }, 'merge', {
      fieldManager: 'another-tool',
    });
    const bundle = await getBundle(env, ns, 'gd');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'gd', { uid: bundle?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    await waitFor(
      'the collector to take the plain object',
      async () => (await env.client.tryGet(t.configMap, ns, 'rt7g-plain')) === undefined,
      { timeoutMs: 90_000 },
    );
    await sleep(5_000);
    await f.startOperator();
    await waitFor('gd to be gone', async () => (await getBundle(env, ns, 'gd')) === undefined, { timeoutMs: 90_000 });
    await sleep(3_000);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt7g-control'), control.metadata.uid);
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt7g-edited'), edited.metadata.uid);
  } finally {
    await removeGuard();
  }
}, 300_000);
