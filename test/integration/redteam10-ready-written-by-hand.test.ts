/**
 * Red team 10 probe: `deleteWhen: BundleReady` reads the Bundle's Ready
 * condition from its status, and the chart's record guard leaves that field
 * (and status.observedGeneration) writable by anyone with bundles/status.
 *
 * Steps: Bundle rr lists ConfigMap rr-v1 (`deleteWhen: BundleReady`) and a
 * Deployment reading it; the Deployment is marked available, the Bundle is
 * Ready. The new version: rr-v2 replaces rr-v1, the Deployment switched to
 * it and not rolled out (no workload controller: never available). rr-v1
 * waits for BundleReady (status.pendingDeletions waitingFor BundleReady),
 * the Bundle is not Ready. The operator is down (rollout); the chart's record
 * guard is in force. Another status writer (a status restored from a backup
 * taken while the Bundle was Ready at this generation, a tool reporting
 * health, `kubectl patch --subresource=status`) writes Ready=True and
 * observedGeneration = the current generation: the record guard lets it
 * through (pendingDeletions, declaredRules, managedKinds unchanged). The
 * operator starts again.
 *
 * Expected (docs/safety.md "Edits by hand can put a deletion off, never
 * bring it forward"; deletion.md: "a Bundle that never gets Ready keeps
 * it"; deleteWhen BundleReady: "deleted only once the Bundle is Ready with
 * its current spec"): rr-v1 kept while the Deployment is not available.
 *
 * Actual: rr-v1 deleted within 8s of the operator's start (second test), and
 * with the operator running, within 8s of the status write (third test: one
 * `kubectl patch --subresource=status`, no operator downtime needed). The
 * control (same steps, no status write, operator restarted) keeps it.
 *
 * Cause: src/core/bundle/plan-input.ts isReadyWithCurrentSpec reads the
 * gate from the cached Bundle's status (status.observedGeneration ===
 * metadata.generation and status.conditions Ready=True), which the operator
 * wrote last but anyone with bundles/status may overwrite; planPrune /
 * decideSoftDelete (src/core/softdelete/decide.ts, `rules.deleteWhen ===
 * 'BundleReady' && input.bundleReady !== true`) then lets the object go on
 * that value, and the pass's own readiness of its resources (web not
 * available, so the status it writes a moment later says Ready=False) is not
 * consulted before the delete. The record guard
 * (charts/bundlesmith/templates/recordguard.yaml) protects pendingDeletions,
 * declaredRules and managedKinds only, and says other status fields stay
 * writable, so the chart does not close it either.
 */
import { Annotations } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { applyBundle, configMap, getBundle, markDeploymentAvailable, waitForBundle, waitForReady } from './bundles.js';
import { conditionOf, expectKept, run, uidOf, waitFor } from './harness.js';
import { installChartPolicy, statusWriterArgs } from './deletion-propagation.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('rt10-ready');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const deployment = (config: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'rr-web' },
  spec: {
    selector: { matchLabels: { app: 'rr' } },
    template: {
      metadata: { labels: { app: 'rr' } },
      spec: { containers: [{ name: 'web', image: 'registry.example/web:1', envFrom: [{ configMapRef: { name: config } }] }] },
    },
  },
});
const config = (name: string) => ({ name, object: configMap(name, { v: name }, { [Annotations.deleteWhen]: 'BundleReady' }) });
const waitingFor = (b: KubeObject | undefined, name: string): string | undefined =>
  ((b?.status as { pendingDeletions?: { name: string; waitingFor?: string }[] } | undefined)?.pendingDeletions ?? []).find(
    (p) => p.name === name,
  )?.waitingFor;

async function scenario(name: string, mode: 'control' | 'operator-down' | 'operator-running'): Promise<void> {
  const { env, ns, t } = f;
  const v1Name = `${name}-v1`;
  const v2Name = `${name}-v2`;
  const web = (c: string) => ({ ...deployment(c), metadata: { name: `${name}-web` } });
  await applyBundle(env, ns, name, [config(v1Name), { name: 'web', object: web(v1Name), references: [{ resource: v1Name }] }]);
  await waitFor('the Deployment', () => env.client.tryGet(t.deployment, ns, `${name}-web`));
  await markDeploymentAvailable(env, ns, `${name}-web`);
  const readyBundle = await waitForReady(env, ns, name);
  const readyCondition = conditionOf(readyBundle, 'Ready');
  const v1 = await uidOf(env, t.configMap, ns, v1Name);

  // The new version, not rolled out (the Deployment never becomes available again).
  await applyBundle(env, ns, name, [config(v2Name), { name: 'web', object: web(v2Name), references: [{ resource: v2Name }] }]);
  const waiting = await waitForBundle(env, ns, name, `${v1Name} waiting for the Bundle`, (b) => waitingFor(b, v1Name) === 'BundleReady');
  expect(conditionOf(waiting, 'Ready')?.status).not.toBe('True');
  await waitFor('the Deployment to be updated', async () =>
    JSON.stringify((await env.client.get(t.deployment, ns, `${name}-web`)).spec).includes(v2Name),
  );

  if (mode !== 'operator-running') await f.op.stop();
  const generation = (await getBundle(env, ns, name))!.metadata.generation;
  const patch = {
    status: {
      observedGeneration: generation,
      conditions: [{ ...readyCondition, type: 'Ready', status: 'True', observedGeneration: generation }],
    },
  };
  if (mode === 'operator-down') {
    // The record guard in force (it refuses a change of pendingDeletions): it lets the Ready condition through.
    // Another tool with rights on bundles/status (the test's own identity holds every verb and is exempt).
    const asWriter = await statusWriterArgs(env, ns);
    const patchStatus = (body: unknown, ...extra: string[]): ReturnType<typeof run> =>
      run('kubectl', [
        ...asWriter,
        'patch',
        'bundle.smith.atlassian.com',
        name,
        '-n',
        ns,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify(body),
        ...extra,
      ]);
    const remove = await installChartPolicy(env, ns, 'recordguard.yaml', ['--set', 'recordGuard.enabled=true'], async () => {
      const r = await patchStatus({ status: { pendingDeletions: null } }, '--dry-run=server');
      return r.code !== 0 && /bundlesmith record guard/.test(r.stderr);
    });
    // The orphan reading the finalizer records (status.deletionPropagation) is the record's too.
    const orphanReading = await patchStatus({ status: { deletionPropagation: 'Orphan' } }, '--dry-run=server');
    expect(orphanReading.code).not.toBe(0);
    expect(orphanReading.stderr).toMatch(/bundlesmith record guard/);
    try {
      const written = await patchStatus(patch);
      expect(written.stderr).toBe('');
      expect(written.code).toBe(0);
    } finally {
      await remove();
    }
  } else if (mode === 'operator-running') {
    const written = await run('kubectl', [
      'patch',
      'bundle.smith.atlassian.com',
      name,
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(patch),
    ]);
    expect(written.code).toBe(0);
  }
  if (mode !== 'operator-running') f.op = await startOperator({ namespace: ns });
  await sleep(8_000);
  expectKept(await env.client.tryGet(t.configMap, ns, v1Name), v1);
}

it('control: the same steps without the status write keep the object (the operator restarted)', async () => {
  await scenario('rc', 'control');
}, 120_000);

it('a Ready condition written by another status writer while the operator is down (record guard in force) does not release a deleteWhen BundleReady object', async () => {
  await scenario('rd', 'operator-down');
}, 120_000);

it('a Ready condition written by another status writer while the operator runs does not release a deleteWhen BundleReady object', async () => {
  await scenario('rr', 'operator-running');
}, 120_000);
