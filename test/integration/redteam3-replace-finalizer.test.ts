/**
 * Red team round three (redteam3): `kubectl replace` of a Bundle drops the
 * operator's finalizer, and the chart's finalizer guard
 * (templates/finalizerguard.yaml) that now refuses it.
 *
 * What a user (or a tool) does: replaces a Bundle from its manifest with a
 * PUT: `kubectl replace -f bundle.yaml`, `helm upgrade --force`, Argo CD's
 * `Replace=true`. The manifest, as kept in git, has no metadata.finalizers;
 * a PUT takes them off. This happens while the operator is not running (an
 * upgrade of the operator, a node drain, a crash loop) or before its next
 * pass re-adds the finalizer (its queue is long). Then the Bundle is
 * deleted, the default way (`kubectl delete bundle rf`, background).
 *
 * What happened without the guard: with no
 * `smith.atlassian.com/deleteResources` finalizer the Bundle was gone at
 * once; kube-controller-manager's collector found its objects' owner absent
 * and deleted them all, the one with `deletionDelay: 1h` included. Every
 * safety property of the finalizer (delays, Approve without a guard, objects
 * another Bundle lists before its claim) hung on a finalizer that a routine
 * replace removed.
 *
 * Now: the chart's finalizer guard, a ValidatingAdmissionPolicy, refuses an
 * update of a Bundle that is not being deleted when it removes the
 * finalizer (the operator's ServiceAccount is exempt; the operator itself
 * only ever removes it from a Bundle being deleted, which anyone may). Here
 * it is rendered by the real helm and installed on a control plane where
 * kube-controller-manager's collector runs; the operator runs in-process as
 * the admin user, so its removal passes the policy like anyone's would.
 */
import { Finalizers, Annotations } from '../../src/api/names.js';
import type { Operator } from '../../src/operator.js';
import { createNamespace, expectKept, run, waitFor, type RunResult, type TestEnv } from './harness.js';
import { startReferenceCluster, type ReferenceCluster } from './reference-cluster.js';
import {
  applyBundle,
  bundleManifest,
  configMap,
  getBundle,
  types,
  waitForReady,
  type KnownTypes,
  type ResourceFixture,
} from './bundles.js';
import { installChartPolicy } from './deletion-propagation.js';

let ref: ReferenceCluster;
let env: TestEnv;
let t: KnownTypes;
let ns: string;
let op: Operator | undefined;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const GUARD_MESSAGE =
  /bundlesmith finalizer guard: .*Keep metadata\.finalizers \[smith\.atlassian\.com\/deleteResources\] in the manifest, or use kubectl apply \/ server-side apply, which leaves it/s;

const kubectl = (args: string[], input?: unknown): Promise<RunResult> =>
  run('kubectl', args, { ...(input === undefined ? {} : { input: JSON.stringify(input) }), env: { KUBECONFIG: env.kubeconfig } });
const finalizersOf = async (name: string): Promise<string[] | undefined> => (await getBundle(env, ns, name))?.metadata.finalizers;

beforeAll(async () => {
  ref = await startReferenceCluster({ bundleCrd: true });
  env = ref.env;
  t = await types(env);
  ns = await createNamespace(env, 'rt3-replace');
  op = await ref.startOperator(ns);
  // The guard is in force once a dry-run replace of a Bundle holding the finalizer, from a manifest without it, is refused.
  await applyBundle(env, ns, 'probe', [{ name: 'c', object: configMap('probe-c') }]);
  await waitForReady(env, ns, 'probe');
  await installChartPolicy(env, ns, 'finalizerguard.yaml', [], async () => {
    const r = await kubectl(
      ['replace', '--dry-run=server', '-f', '-'],
      bundleManifest(ns, 'probe', [{ name: 'c', object: configMap('probe-c') }]),
    );
    return r.code !== 0 && /bundlesmith finalizer guard/.test(r.stderr);
  });
}, 240_000);

afterAll(async () => {
  await ref?.stop();
});

it('a replace from a manifest without finalizers is refused while the operator is down; kubectl apply, server-side apply and a replace that keeps the finalizer go through; the delete then goes through the finalizer and the delayed object is kept', async () => {
  const resources: ResourceFixture[] = [
    { name: 'later', object: configMap('rf-later', { k: 'v' }, { [Annotations.deletionDelay]: '1h' }) },
    { name: 'plain', object: configMap('rf-plain') },
  ];
  await applyBundle(env, ns, 'rf', resources);
  await waitForReady(env, ns, 'rf');
  const later = await env.client.get(t.configMap, ns, 'rf-later');

  await op?.stop();
  op = undefined;
  // The manifest as kept in git, one value changed, replaced (PUT): refused, with what to do instead.
  const changed = (data: Record<string, string>): ResourceFixture[] => [
    resources[0]!,
    { name: 'plain', object: configMap('rf-plain', data) },
  ];
  const manifest = bundleManifest(ns, 'rf', changed({ key: 'changed' }));
  const replaced = await kubectl(['replace', '-f', '-'], manifest);
  expect(replaced.code).not.toBe(0);
  expect(replaced.stderr).toMatch(GUARD_MESSAGE);
  expect(replaced.stderr).toMatch(/Bundle rf, which is not being deleted/);
  expect(await finalizersOf('rf')).toContain(Finalizers.deleteResources);

  // The same manifest keeping the finalizer: allowed.
  const keeping = { ...manifest, metadata: { ...(manifest.metadata as object), finalizers: [Finalizers.deleteResources] } };
  const kept = await kubectl(['replace', '-f', '-'], keeping);
  expect({ code: kept.code, stderr: kept.stderr }).toMatchObject({ code: 0 });
  const afterReplace = await getBundle(env, ns, 'rf');
  expect(afterReplace?.metadata.finalizers).toContain(Finalizers.deleteResources);
  expect(JSON.stringify(afterReplace?.spec)).toContain('changed');

  // Server-side apply by another manager whose manifest has no finalizers: the field is not its own, so it stays.
  const ssa = await kubectl(
    ['apply', '--server-side', '--force-conflicts', '--field-manager', 'someone-else', '-f', '-'],
    bundleManifest(ns, 'rf', changed({ key: 'ssa' })),
  );
  expect({ code: ssa.code, stderr: ssa.stderr }).toMatchObject({ code: 0 });
  expect(await finalizersOf('rf')).toContain(Finalizers.deleteResources);
  expect(JSON.stringify((await getBundle(env, ns, 'rf'))?.spec)).toContain('ssa');

  // Client-side kubectl apply: its three-way patch touches only what the manifests name, so the finalizer stays.
  for (const value of ['csa-1', 'csa-2']) {
    const csa = await kubectl(['apply', '-f', '-'], bundleManifest(ns, 'rf', changed({ key: value })));
    expect({ code: csa.code, stderr: csa.stderr.replace(/^Warning: .*\n/gm, '') }).toMatchObject({ code: 0, stderr: '' });
    expect(await finalizersOf('rf')).toContain(Finalizers.deleteResources);
    expect(JSON.stringify((await getBundle(env, ns, 'rf'))?.spec)).toContain(value);
  }

  // The default delete, operator still down: the finalizer holds the Bundle.
  const deleted = await kubectl(['delete', 'bundle', 'rf', '-n', ns, '--wait=false']);
  if (deleted.code !== 0) throw new Error(deleted.stderr);
  await sleep(3_000);
  const deleting = await getBundle(env, ns, 'rf');
  expect(deleting?.metadata.deletionTimestamp).toBeDefined();
  expect(deleting?.metadata.finalizers).toContain(Finalizers.deleteResources);
  // Once it is being deleted, the finalizer may be taken off by anyone (the escape hatch for a Bundle without an operator): allowed, here as a dry run.
  const byHand = await kubectl([
    'patch',
    'bundle',
    'rf',
    '-n',
    ns,
    '--type',
    'merge',
    '-p',
    JSON.stringify({ metadata: { finalizers: null } }),
    '--dry-run=server',
  ]);
  expect({ code: byHand.code, stderr: byHand.stderr }).toMatchObject({ code: 0 });

  // The operator comes back: its finalizer releases the delayed object, deletes the plain one and removes itself.
  op = await ref.startOperator(ns);
  await waitFor('rf to be gone', async () => (await getBundle(env, ns, 'rf')) === undefined, { timeoutMs: 60_000 });
  await waitFor('the plain object to be deleted', async () => (await env.client.tryGet(t.configMap, ns, 'rf-plain')) === undefined, {
    timeoutMs: 120_000,
  });
  await sleep(3_000);
  const released = await env.client.tryGet(t.configMap, ns, 'rf-later');
  expectKept(released, later.metadata.uid);
  expect(released?.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
}, 240_000);
