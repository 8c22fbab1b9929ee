/**
 * Red team 8: an object whose deletion rules the operator cannot read
 * because the Bundle's spec.deletionDefaults.deletionDelay cannot be read
 * (a typo such as "1h30", "1h-30m") is, by the operator's own reading,
 * "released and kept, never deleted on a value that could not be read" in a
 * foreground deletion (finalize.ts keptFromCascade). The chart's deletion
 * guard is the only thing that orders kube-controller-manager's collector
 * behind that release, and it reads only the object's own annotations: the
 * object says nothing unreadable (its delay comes from the Bundle's
 * defaults), so the guard lets the collector delete it.
 *
 * Steps: kube-controller-manager runs; the chart's deletion guard is
 * installed for it. A Bundle with spec.deletionDefaults.deletionDelay "1h"
 * lists ConfigMaps rt8u-x (its manifest declares no rules), rt8u-orphan
 * (no rules; the edit below adds deletionPolicy Orphan to its manifest),
 * rt8u-control (no rules;
 * a value no one can read is written on its own deletionDelay by
 * hand later, the case the guard covers) and rt8u-plain (its own
 * deletionDelay "0s": readable whatever the defaults). It is Ready. The
 * defaults are edited to "1h-30m", and rt8u-orphan's manifest gains
 * deletionPolicy Orphan, in one edit (the CRD accepts any string of 64
 * characters; the operator reports InvalidSpec and writes nothing, so no
 * later pass can put anything onto the objects). The operator is down (a
 * restart: only there to make the order deterministic; with it running the
 * finalizer races the collector, the race the guard exists to settle).
 * `kubectl delete bundle --cascade=foreground` (Argo CD's default
 * propagation). The collector takes rt8u-plain. The operator comes back.
 *
 * Expected (docs/deletion.md: "In a background deletion, an object whose
 * rules cannot be read is released and kept, never deleted, in a
 * foreground one too (the chart's deletion guard holds the collector back
 * until the finalizer has released it)"; "Values that cannot be read are
 * never guessed at; the object is kept"; docs/safety.md: "the chart's
 * deletion guard refuses the collectors' deletes of those"): rt8u-x,
 * rt8u-orphan and rt8u-control are kept (the operator's finalizer would
 * release all three: keptFromCascade, reading not ok). Actual:
 * rt8u-control kept; rt8u-x and rt8u-orphan (Orphan in its manifest)
 * deleted by kube-controller-manager.
 *
 * Cause: charts/bundlesmith/templates/deletionguard.yaml:66-75
 * (rulesReadable) reads the deletionDelay annotation of the object only,
 * while the operator reads the object's rules over the Bundle's defaults
 * (src/core/softdelete/rules.ts:60-66 readDeletionRules: `ownDelay ??
 * defaults?.deletionDelay`; src/core/bundle/finalize.ts:261-276
 * keptFromCascade releases on `!reading.ok`). The default delay is checked
 * only by the operator (src/core/bundle/validate.ts:43-48
 * deletionDefaultsIssues), never at the API server
 * (crds/bundles.smith.atlassian.com.yaml:232-235: type string, maxLength
 * 64), and it is not written or sealed onto the objects
 * (countdown.ts declarationToSeal seals only a keeping policy).
 *
 * Suggested fix: refuse an unreadable default at the door: an
 * x-kubernetes-validations rule on spec.deletionDefaults.deletionDelay with
 * the guard's own test (the Go-duration regex and `duration(self) >=
 * duration('0s')`), so a Bundle can never hold a default the guard and the
 * operator read differently; or seal the default delay into the
 * declared-rules proof and have the guard read it there.
 *
 * Fixed: the CRD refuses a default delay that is not a non-negative Go
 * duration (x-kubernetes-validations on spec.deletionDefaults.deletionDelay,
 * the guard's own test; validate checks it offline), so the edit never
 * lands; this test now asserts the refusal.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { KubeApiError } from '../../src/kube/errors.js';
import { expectKept } from './harness.js';
import { configMap, getBundle, waitForReady } from './bundles.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('rt8ud');

it('a default delay no one can read is refused by the API server: the Bundle keeps what it had, nothing is deleted', async () => {
  const { env, ns, t } = f;
  const manifest = (delay: string) => ({
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'ud', namespace: ns },
    spec: {
      deletionDefaults: { deletionDelay: delay },
      resources: [
        { name: 'x', spec: { object: configMap('rt8u-x', { k: 'v' }) } },
        // Orphan added to its manifest in the same edit as the typo: declareOps seals nothing while the rules read over the defaults fail.
        {
          name: 'orphan',
          spec: { object: configMap('rt8u-orphan', { k: 'v' }, delay === '1h' ? undefined : { [Annotations.deletionPolicy]: 'Orphan' }) },
        },
        { name: 'control', spec: { object: configMap('rt8u-control', { k: 'v' }) } },
        { name: 'plain', spec: { object: configMap('rt8u-plain', { k: 'v' }, { [Annotations.deletionDelay]: '0s' }) } },
      ],
    },
  });
  await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest('1h'), { fieldManager: 'test-user', force: true });
  await waitForReady(env, ns, 'ud');
  const x = await env.client.get(t.configMap, ns, 'rt8u-x');
  const control = await env.client.get(t.configMap, ns, 'rt8u-control');
  const orphan = await env.client.get(t.configMap, ns, 'rt8u-orphan');
  expect(x.metadata.annotations?.[Annotations.deletionDelay]).toBeUndefined();

  // A typo in the default delay: the API server refuses the edit (the CRD's rule, the operator's own reading of a Go
  // duration), so the Bundle keeps what it had and nothing can be read any other way.
  const refused = await env.client.apply(BUNDLE_RESOURCE_TYPE, manifest('1h-30m'), { fieldManager: 'test-user', force: true }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(KubeApiError);
  expect((refused as KubeApiError).code).toBe(422);
  expect((refused as KubeApiError).message).toMatch(
    /spec\.deletionDefaults\.deletionDelay: Invalid value: .*must be a non-negative Go duration/,
  );
  const stored = await getBundle(env, ns, 'ud');
  expect((stored?.spec as { deletionDefaults?: { deletionDelay?: string } }).deletionDefaults?.deletionDelay).toBe('1h');
  for (const [name, uid] of [
    ['rt8u-x', x.metadata.uid],
    ['rt8u-orphan', orphan.metadata.uid],
    ['rt8u-control', control.metadata.uid],
  ] as const) {
    expectKept(await env.client.tryGet(t.configMap, ns, name), uid);
  }
});
