/**
 * Red team 6: the chart's deletion guard reads a deletionDelay that overflows
 * Go's Duration as readable, the operator does not: the collector deletes in
 * a foreground cascade an object the operator would release ("kept, never
 * deleted on a value that could not be read").
 *
 * Steps: a Bundle lists ConfigMaps rt6o-over, rt6o-soon and rt6o-plain
 * (no deletion rules). Another tool (or a person) writes deletionDelay
 * "9999999h" on rt6o-over (about 1,141 years: past Go's int64-nanosecond
 * Duration, so time.ParseDuration, and src/core/duration.ts, refuse it) and
 * "soon" on rt6o-soon (the control). The chart's deletion guard is installed
 * for kube-controller-manager. The operator restarts (stopped here for the
 * length of the deletion, so the order is the guard's, not a race's) and the
 * Bundle is deleted with `--cascade=foreground`. The operator comes back.
 *
 * Expected (docs/safety.md, commit 58b045a, deletionguard.yaml): an object
 * whose rules cannot be read is released, never deleted, and the guard
 * refuses the collectors' deletes of it until then. rt6o-soon is kept so.
 * rt6o-over is deleted by kube-controller-manager.
 *
 * Cause: charts/bundlesmith/templates/deletionguard.yaml:54 (variable
 * rulesReadable) checks the delay with a regular expression of Go's duration
 * syntax only; src/core/softdelete/rules.ts:38 (readDelayText ->
 * parseGoDuration, src/core/duration.ts leadingInt/overflow checks) also
 * refuses a value past 1<<63 ns (9999999h, 99999999999999999999s,
 * 2562048h). The guard lets the collector's DELETE through, and the
 * finalizer's release (src/core/bundle/finalize.ts:258, keptFromCascade
 * !reading.ok) comes too late. docs/safety.md even lists 9999999h among the
 * values that are refused.
 *
 * Suggested fix: bound the magnitude in the guard: refuse (treat as
 * unreadable) any deletionDelay the regex accepts whose digits could
 * overflow, e.g. reject when the value is longer than a safe length or any
 * integer part has more than 7 digits for h (2562047h), 9 for m, 10 for s,
 * ... (conservative: a false "unreadable" only makes the collector wait for
 * the release); or sum the components in CEL (int() of each part times its
 * unit, checked against 9223372036854775807) the way Go does.
 */
import { Annotations } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import { expectKept, waitFor } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady } from './bundles.js';
import { referenceFixture } from './reference-cluster.js';
import { installDeletionGuard } from './deletion-propagation.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const f = referenceFixture('rt6ov');

it("foreground, deletion guard installed: an object whose deletionDelay overflows Go's Duration is not deleted by the collector", async () => {
  const { env, ns, t } = f;
  await applyBundle(env, ns, 'ov', [
    { name: 'over', object: configMap('rt6o-over') },
    { name: 'soon', object: configMap('rt6o-soon') },
    { name: 'plain', object: configMap('rt6o-plain') },
  ]);
  await waitForReady(env, ns, 'ov');
  const over = await env.client.patch(
    t.configMap,
    ns,
    'rt6o-over',
    { metadata: { annotations: { [Annotations.deletionDelay]: '9999999h' } } },
    'merge',
    { fieldManager: 'another-tool' },
  );
  const soon = await env.client.patch(
    t.configMap,
    ns,
    'rt6o-soon',
    { metadata: { annotations: { [Annotations.deletionDelay]: 'soon' } } },
    'merge',
    { fieldManager: 'another-tool' },
  );
  await sleep(2_000);

  const removeGuard = await installDeletionGuard(f, t.configMap, soon.metadata);
  try {
    // The operator restarts; the Bundle is deleted meanwhile.
    await f.operator.stop();
    const bundle = await getBundle(env, ns, 'ov');
    await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, 'ov', { uid: bundle?.metadata.uid ?? '', propagationPolicy: 'Foreground' });
    await waitFor(
      'the collector to take the plain object',
      async () => (await env.client.tryGet(t.configMap, ns, 'rt6o-plain')) === undefined,
      { timeoutMs: 90_000 },
    );
    await sleep(5_000);
    await f.startOperator();
    await waitFor('ov to be gone', async () => (await getBundle(env, ns, 'ov')) === undefined, { timeoutMs: 90_000 });
    await sleep(3_000);
    // The control: an unreadable delay the guard recognises is kept.
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt6o-soon'), soon.metadata.uid);
    // The operator cannot read 9999999h either; the guard let the collector take it.
    expectKept(await env.client.tryGet(t.configMap, ns, 'rt6o-over'), over.metadata.uid);
  } finally {
    await removeGuard();
  }
}, 300_000);
