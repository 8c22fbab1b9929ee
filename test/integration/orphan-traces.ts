/**
 * What the red-team tests of orphan traces share: a Bundle's
 * `--cascade=orphan` deletion that kube-controller-manager finishes while
 * the operator is down (its finalizer then reads the propagation from the
 * traces the objects keep), a person's later deletion of a sibling the
 * objects still reference, and a ServiceAccount with only the rights a case
 * gives it.
 */
import { Finalizers } from '../../src/api/names.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { conditionOf, expectKept, resourceType, waitFor, waitForGone, type TestEnv } from './harness.js';
import { applyBundle, configMap, resourceCondition, waitForBundle, waitForReady, type ResourceFixture } from './bundles.js';

/** A fixture whose operator can be stopped and started again (referenceFixture's). */
export interface RestartableOperator {
  env: TestEnv;
  ns: string;
  t: { configMap: ResourceType };
  startOperator(): Promise<unknown>;
}

/**
 * Bundle `name` lists ConfigMaps `${prefix}-p` and `${prefix}-c`, the second
 * `references` the first (and `others`): once Ready, the operator's dependency reference
 * from c to p is there. The Bundle and both objects as read then.
 */
export async function dependentPair(
  f: RestartableOperator,
  name: string,
  prefix: string,
  others: readonly ResourceFixture[] = [],
): Promise<{ bundle: KubeObject; p: KubeObject; c: KubeObject }> {
  const { env, ns, t } = f;
  await applyBundle(env, ns, name, [
    { name: 'p', object: configMap(`${prefix}-p`) },
    { name: 'c', references: [{ resource: 'p' }], object: configMap(`${prefix}-c`) },
    ...others,
  ]);
  const bundle = await waitForReady(env, ns, name);
  const p = await env.client.get(t.configMap, ns, `${prefix}-p`);
  const c = await env.client.get(t.configMap, ns, `${prefix}-c`);
  expect((c.metadata.ownerReferences ?? []).some((r) => r.uid === p.metadata.uid)).toBe(true);
  return { bundle, p, c };
}

/**
 * With the operator stopped: deletes the Bundle with `--cascade=orphan` (its
 * UID the precondition), waits until kube-controller-manager has orphaned
 * its dependents (the `orphan` finalizer gone), then starts the operator and
 * waits until its finalizer has let the Bundle go.
 */
export async function orphanDeletionFinishedWhileDown(f: RestartableOperator, name: string, uid: string | undefined): Promise<void> {
  const { env, ns } = f;
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, name, { uid: uid ?? '', propagationPolicy: 'Orphan' });
  await waitFor(
    'kube-controller-manager to orphan',
    async () => {
      const cur = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, name);
      return cur !== undefined && !(cur.metadata.finalizers ?? []).includes(Finalizers.orphan);
    },
    { timeoutMs: 60_000 },
  );
  await f.startOperator();
  await waitForGone(env, BUNDLE_RESOURCE_TYPE, ns, name, { timeoutMs: 60_000 });
}

/**
 * A person deletes `sibling` (nobody's now; its UID the precondition). The
 * collector then either takes the dangling reference out of `dependent` or
 * collects it: waits for either, and asserts it was kept (same UID, no
 * deletionTimestamp).
 */
export async function siblingDeletedDependentKept(
  env: TestEnv,
  rt: ResourceType,
  ns: string,
  sibling: KubeObject,
  dependent: KubeObject,
): Promise<void> {
  const siblingUid = sibling.metadata.uid ?? '';
  await env.client.delete(rt, ns, sibling.metadata.name, { uid: siblingUid });
  await waitFor(`${sibling.metadata.name} gone`, async () => (await env.client.tryGet(rt, ns, sibling.metadata.name)) === undefined);
  await waitFor(
    `${dependent.metadata.name} to keep no reference to ${sibling.metadata.name}, or be gone`,
    async () => {
      const o = await env.client.tryGet(rt, ns, dependent.metadata.name);
      return (
        o === undefined ||
        o.metadata.deletionTimestamp !== undefined ||
        !(o.metadata.ownerReferences ?? []).some((r) => r.uid === siblingUid)
      );
    },
    { timeoutMs: 60_000 },
  );
  expectKept(await env.client.tryGet(rt, ns, dependent.metadata.name), dependent.metadata.uid ?? '');
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** A ServiceAccount `name` in `ns` bound to a Role with exactly these rules (applied again: the rules replaced). */
export async function serviceAccountWithRules(env: TestEnv, ns: string, name: string, rules: readonly PolicyRule[]): Promise<void> {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const as = { fieldManager: 'test-admin', force: true };
  await env.client.apply(
    await resourceType(env, 'v1', 'ServiceAccount'),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } },
    as,
  );
  await env.client.apply(
    await resourceType(env, rbac, 'Role'),
    { apiVersion: rbac, kind: 'Role', metadata: { name, namespace: ns }, rules },
    as,
  );
  await env.client.apply(
    await resourceType(env, rbac, 'RoleBinding'),
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    },
    as,
  );
}

/**
 * A person's copy of `source` under `name`, as `kubectl get -o yaml`, edited
 * and `kubectl apply --server-side` make it (field manager kubectl): labels,
 * annotations and data come along; uid, resourceVersion, managedFields and
 * every ownerReference but the ones `keepReferences` chooses are taken out.
 */
export async function personCopy(
  f: Pick<RestartableOperator, 'env' | 'ns' | 't'>,
  source: KubeObject,
  name: string,
  keepReferences: (r: NonNullable<KubeObject['metadata']['ownerReferences']>[number]) => boolean = () => false,
): Promise<KubeObject> {
  const references = (source.metadata.ownerReferences ?? []).filter(keepReferences);
  return await f.env.client.apply(
    f.t.configMap,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: f.ns,
        labels: source.metadata.labels,
        annotations: source.metadata.annotations,
        ...(references.length > 0 ? { ownerReferences: references } : {}),
      },
      data: source['data'],
    },
    { fieldManager: 'kubectl', force: true },
  );
}

/**
 * The spec of Bundle `name` (made by dependentPair) becomes `kept` plus a
 * resource that fails to apply, so its prune is held back: `${prefix}-c`,
 * if `kept` drops it, stays controlled by the Bundle (checked).
 */
export async function dropWithPruneHeldBack(
  f: RestartableOperator,
  name: string,
  prefix: string,
  kept: readonly ResourceFixture[],
  bundleUid: string | undefined,
): Promise<void> {
  const { env, ns, t } = f;
  await applyBundle(env, ns, name, [...kept, { name: 'bad', object: configMap(`${prefix}-bad`, { 'not a key': 'x' }) }]);
  await waitForBundle(
    env,
    ns,
    name,
    'bad failing',
    (b) => resourceCondition(b, 'bad', 'Ready')?.status === 'False' || conditionOf(b, 'Ready')?.status === 'False',
  );
  await new Promise((r) => setTimeout(r, 2_000));
  const held = await env.client.get(t.configMap, ns, `${prefix}-c`);
  expect((held.metadata.ownerReferences ?? []).some((r) => r.uid === bundleUid && r.controller === true)).toBe(true);
}
