/**
 * The garbage-collection scenarios, written once and run twice: against our
 * collector (gc-ours.test.ts) and against kube-controller-manager's
 * (gc-reference.test.ts), asserting the same end states. They follow
 * upstream's test/integration/garbagecollector and e2e garbage collector
 * tests, with ConfigMaps and a test CRD instead of pods and controllers.
 *
 * Each scenario gets its own namespaces. Waits poll; nothing asserts time.
 */
import { randomBytes } from 'node:crypto';
import { installCrd, CRD_RESOURCE } from '../../src/kube/crds.js';
import type { OwnerReference } from '../../src/api/resource.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { waitFor, waitForGone, type TestEnv } from './harness.js';

export const TEST_GROUP = 'gc.bundlesmith.test';
/** Cluster-scoped objects a scenario creates carry this label, so a restricted collector may act on them. */
export const CLUSTER_SCOPED_LABEL = 'gc.bundlesmith.test/scenario';

export interface ScenarioContext {
  env: TestEnv;
  /** Two namespaces of this scenario's own. */
  ns: string;
  ns2: string;
  cm: ResourceType;
  widget: ResourceType;
  /** Upper bound for each wait (the reference collector re-discovers CRDs every 30 s). */
  timeoutMs: number;
  /** Resolves once the collector under test watches this (new) resource. */
  collectorWatches(rt: ResourceType): Promise<void>;
  /** Takes the collector down, as a crash would (nothing more is decided until collectorUp). */
  collectorDown(): Promise<void>;
  /** Brings a collector back with an empty graph (it relists everything). */
  collectorUp(): Promise<void>;
}

export interface GcScenario {
  name: string;
  run(ctx: ScenarioContext): Promise<void>;
}

export function widgetCrd(plural = 'widgets', kind = 'Widget'): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${TEST_GROUP}`, labels: { [CLUSTER_SCOPED_LABEL]: 'crd' } },
    spec: {
      group: TEST_GROUP,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

export async function installWidgetCrd(env: TestEnv, plural = 'widgets', kind = 'Widget'): Promise<ResourceType> {
  await installCrd(env.client, widgetCrd(plural, kind));
  return await waitFor(`${kind} to be served`, async () => {
    await env.discovery.refresh();
    return env.discovery.lookup(`${TEST_GROUP}/v1`, kind);
  });
}

interface ObjectSpec {
  owners?: OwnerReference[];
  finalizers?: string[];
  namespace?: string;
}

async function create(ctx: ScenarioContext, rt: ResourceType, name: string, spec: ObjectSpec = {}): Promise<KubeObject> {
  const namespace = rt.namespaced ? (spec.namespace ?? ctx.ns) : undefined;
  return ctx.env.client.create(rt, {
    apiVersion: rt.apiVersion,
    kind: rt.kind,
    metadata: {
      name,
      ...(namespace !== undefined ? { namespace } : { labels: { [CLUSTER_SCOPED_LABEL]: 'yes' } }),
      ...(spec.owners ? { ownerReferences: spec.owners } : {}),
      ...(spec.finalizers ? { finalizers: spec.finalizers } : {}),
    },
  });
}

const cm = (ctx: ScenarioContext, name: string, spec: ObjectSpec = {}) => create(ctx, ctx.cm, name, spec);
const widget = (ctx: ScenarioContext, name: string, spec: ObjectSpec = {}) => create(ctx, ctx.widget, name, spec);

function ref(owner: KubeObject, opts: { blocking?: boolean; controller?: boolean } = {}): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    ...(opts.blocking !== undefined ? { blockOwnerDeletion: opts.blocking } : {}),
    ...(opts.controller ? { controller: true } : {}),
  };
}

function fakeRef(apiVersion: string, kind: string, name: string): OwnerReference {
  return { apiVersion, kind, name, uid: `00000000-0000-4000-8000-${randomBytes(6).toString('hex')}` };
}

async function del(
  ctx: ScenarioContext,
  obj: KubeObject,
  propagationPolicy: 'Background' | 'Foreground' | 'Orphan',
  rt: ResourceType = ctx.cm,
): Promise<void> {
  await ctx.env.client.delete(rt, obj.metadata.namespace, obj.metadata.name, { uid: obj.metadata.uid, propagationPolicy });
}

async function gone(ctx: ScenarioContext, obj: KubeObject, rt: ResourceType = ctx.cm): Promise<void> {
  await waitForGone(ctx.env, rt, obj.metadata.namespace, obj.metadata.name, { timeoutMs: ctx.timeoutMs, intervalMs: 200 });
}

async function live(ctx: ScenarioContext, obj: KubeObject, rt: ResourceType = ctx.cm): Promise<KubeObject | undefined> {
  return ctx.env.client.tryGet(rt, obj.metadata.namespace, obj.metadata.name, { metadataOnly: true });
}

/** Waits until the object exists and `check` holds for it. */
async function until(
  ctx: ScenarioContext,
  what: string,
  obj: KubeObject,
  check: (o: KubeObject) => boolean,
  rt: ResourceType = ctx.cm,
): Promise<KubeObject> {
  return waitFor(
    what,
    async () => {
      const o = await live(ctx, obj, rt);
      return o && check(o) ? o : undefined;
    },
    { timeoutMs: ctx.timeoutMs, intervalMs: 200 },
  );
}

async function mustExist(ctx: ScenarioContext, obj: KubeObject, rt: ResourceType = ctx.cm): Promise<KubeObject> {
  const o = await live(ctx, obj, rt);
  if (!o) throw new Error(`${rt.kind} ${obj.metadata.namespace}/${obj.metadata.name} should still exist`);
  return o;
}

/**
 * Waits until `check` holds for the object, for objects that must be kept:
 * the wait fails, saying why, if the object is being deleted, gone or
 * replaced (another UID) instead.
 */
async function keptUntil(
  ctx: ScenarioContext,
  what: string,
  obj: KubeObject,
  check: (o: KubeObject) => boolean,
  rt: ResourceType = ctx.cm,
): Promise<KubeObject> {
  return waitFor(
    what,
    async () => {
      const o = await live(ctx, obj, rt);
      const where = `${rt.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
      if (!o) throw new Error(`${where} must be kept, and is gone`);
      if (o.metadata.uid !== obj.metadata.uid)
        throw new Error(`${where} must be kept, and was replaced (UID ${o.metadata.uid}, was ${obj.metadata.uid})`);
      if (o.metadata.deletionTimestamp) throw new Error(`${where} must be kept, and is being deleted`);
      return check(o) ? o : undefined;
    },
    { timeoutMs: ctx.timeoutMs, intervalMs: 200 },
  );
}

/** The object is there, same UID, not being deleted. */
async function mustBeKept(ctx: ScenarioContext, obj: KubeObject, rt: ResourceType = ctx.cm): Promise<KubeObject> {
  return keptUntil(ctx, `${rt.kind} ${obj.metadata.name} kept`, obj, () => true, rt);
}

const HOLD = `${TEST_GROUP}/hold`;

const refNames = (o: KubeObject): string[] => (o.metadata.ownerReferences ?? []).map((r) => r.name).sort();

async function setFinalizers(ctx: ScenarioContext, obj: KubeObject, finalizers: string[], rt: ResourceType = ctx.cm): Promise<void> {
  await ctx.env.client.patch(rt, obj.metadata.namespace, obj.metadata.name, { metadata: { finalizers } }, 'merge');
}

async function eventsAbout(ctx: ScenarioContext, namespace: string, name: string, reason: string): Promise<unknown[]> {
  const body = (await ctx.env.client.raw('GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`)) as {
    items?: { reason?: string; regarding?: { name?: string } }[];
  };
  const v1 = (await ctx.env.client.raw('GET', `/api/v1/namespaces/${namespace}/events`)) as {
    items?: { reason?: string; involvedObject?: { name?: string } }[];
  };
  return [
    ...(body.items ?? []).filter((e) => e.reason === reason && e.regarding?.name === name),
    ...(v1.items ?? []).filter((e) => e.reason === reason && e.involvedObject?.name === name),
  ];
}

export const scenarios: GcScenario[] = [
  {
    // Issue 9, case 1: a collector that decides before every resource is
    // listed finishes a foreground deletion with its blocking dependents still
    // there, and turns an orphan deletion into a cascade.
    name: 'deletions requested while the collector was down, across kinds: foreground owners wait for their blocking dependents, orphan owners keep theirs',
    async run(ctx) {
      const secret = await ctx.env.discovery.resolve('v1', 'Secret');
      if (!secret) throw new Error('v1 Secret is not served');
      // Secret owners with ConfigMap dependents, ConfigMap owners with Secret dependents.
      const secretFg = await Promise.all([0, 1].map((i) => create(ctx, secret, `secret-fg-${i}`)));
      const secretOrphan = await create(ctx, secret, 'secret-orphan');
      const cmFg = await Promise.all([0, 1].map((i) => cm(ctx, `cm-fg-${i}`)));
      const cmOrphan = await cm(ctx, 'cm-orphan');
      const heldCms = await Promise.all(
        secretFg.map((o, i) => cm(ctx, `held-by-secret-${i}`, { owners: [ref(o, { blocking: true })], finalizers: [HOLD] })),
      );
      const heldSecrets = await Promise.all(
        cmFg.map((o, i) => create(ctx, secret, `held-by-cm-${i}`, { owners: [ref(o, { blocking: true })], finalizers: [HOLD] })),
      );
      const orphanedCms = await Promise.all(
        [0, 1].map((i) => cm(ctx, `orphaned-by-secret-${i}`, { owners: [ref(secretOrphan, { blocking: true, controller: true })] })),
      );
      const orphanedSecrets = await Promise.all(
        [0, 1].map((i) => create(ctx, secret, `orphaned-by-cm-${i}`, { owners: [ref(cmOrphan, { blocking: true, controller: true })] })),
      );

      await ctx.collectorDown();
      for (const o of secretFg) await del(ctx, o, 'Foreground', secret);
      for (const o of cmFg) await del(ctx, o, 'Foreground');
      await del(ctx, secretOrphan, 'Orphan', secret);
      await del(ctx, cmOrphan, 'Orphan');
      await ctx.collectorUp();

      // Orphan: the owners go, every dependent stays (same UID, not being deleted) without the reference.
      for (const d of orphanedCms) await keptUntil(ctx, 'the orphaned ConfigMap to lose its reference', d, (o) => refNames(o).length === 0);
      for (const d of orphanedSecrets)
        await keptUntil(ctx, 'the orphaned Secret to lose its reference', d, (o) => refNames(o).length === 0, secret);
      await gone(ctx, secretOrphan, secret);
      await gone(ctx, cmOrphan);
      for (const d of orphanedCms) await mustBeKept(ctx, d);
      for (const d of orphanedSecrets) await mustBeKept(ctx, d, secret);

      // Foreground: the collector deletes the blocking dependents (held by
      // the foreign finalizer) and the owners wait for them.
      for (const d of heldCms) await until(ctx, 'the held ConfigMap to be deleted', d, (o) => o.metadata.deletionTimestamp !== undefined);
      for (const d of heldSecrets)
        await until(ctx, 'the held Secret to be deleted', d, (o) => o.metadata.deletionTimestamp !== undefined, secret);
      for (const [owner, rt] of [...secretFg.map((o) => [o, secret] as const), ...cmFg.map((o) => [o, ctx.cm] as const)]) {
        const held = await mustExist(ctx, owner, rt);
        expect(held.metadata.uid).toBe(owner.metadata.uid);
        expect(held.metadata.finalizers).toContain('foregroundDeletion');
      }
      for (const d of heldCms) await setFinalizers(ctx, d, []);
      for (const d of heldSecrets) await setFinalizers(ctx, d, [], secret);
      for (const d of heldCms) await gone(ctx, d);
      for (const d of heldSecrets) await gone(ctx, d, secret);
      for (const o of secretFg) await gone(ctx, o, secret);
      for (const o of cmFg) await gone(ctx, o);
    },
  },
  {
    // Fuzz seed 15352. Upstream's classifyReferences counts an owner being
    // deleted with the orphan finalizer as solid (only `foregroundDeletion`
    // makes it waiting), so a dependent shared with a foreground owner is
    // kept, stripped of the foreground owner's reference, when it is
    // attempted before the orphan removed the other reference, and deleted
    // when attempted after. Either order is kube-controller-manager's; what
    // holds in both is asserted: never kept with a reference to either
    // owner, never being deleted and then kept, and the objects of one owner
    // only go as that owner says.
    name: 'an orphan and a foreground deletion requested while the collector was down, with a dependent they share: each owner finishes; the shared dependent is deleted or kept without references',
    async run(ctx) {
      const secret = await ctx.env.discovery.resolve('v1', 'Secret');
      if (!secret) throw new Error('v1 Secret is not served');
      const orphaning = await cm(ctx, 'orphaning-owner');
      const foreground = await cm(ctx, 'foreground-owner', { owners: [ref(orphaning, { blocking: true })] });
      const shared = await create(ctx, secret, 'shared', {
        owners: [ref(foreground, { blocking: true, controller: true }), ref(orphaning)],
      });
      const onlyForeground = await cm(ctx, 'only-foreground', { owners: [ref(foreground, { blocking: true })] });
      const onlyOrphaning = await cm(ctx, 'only-orphaning', { owners: [ref(orphaning)] });

      await ctx.collectorDown();
      await del(ctx, orphaning, 'Orphan');
      await del(ctx, foreground, 'Foreground');
      await ctx.collectorUp();

      await gone(ctx, onlyForeground);
      await gone(ctx, foreground);
      await gone(ctx, orphaning);
      await keptUntil(ctx, 'the orphaned ConfigMap to lose its reference', onlyOrphaning, (o) => refNames(o).length === 0);
      // The shared Secret: gone, or kept (same UID, not being deleted) with no reference left.
      const settled = await waitFor(
        'the shared Secret to be gone or kept without references',
        async () => {
          const o = await live(ctx, shared, secret);
          if (!o) return 'gone';
          if (o.metadata.uid !== shared.metadata.uid) throw new Error('the shared Secret was replaced');
          if (o.metadata.deletionTimestamp) return undefined;
          return refNames(o).length === 0 ? 'kept' : undefined;
        },
        { timeoutMs: ctx.timeoutMs, intervalMs: 200 },
      );
      if (settled === 'kept') {
        const kept = await mustBeKept(ctx, shared, secret);
        expect(kept.metadata.ownerReferences ?? []).toEqual([]);
      } else {
        await gone(ctx, shared, secret);
      }
      await mustBeKept(ctx, onlyOrphaning);
    },
  },
  {
    // Issue 9, case 2: an owner reference from a cluster-scoped object to a
    // namespaced kind is invalid; kube-controller-manager leaves the object
    // alone and records nothing about the owner.
    name: 'a cluster-scoped object owned by a namespaced kind is kept, and the real namespaced owner of that UID keeps its dependents',
    async run(ctx) {
      const clusterRole = await ctx.env.discovery.resolve('rbac.authorization.k8s.io/v1', 'ClusterRole');
      if (!clusterRole) throw new Error('ClusterRole is not served');
      const suffix = randomBytes(3).toString('hex');
      const owner = await cm(ctx, 'someone');
      const realDep = await cm(ctx, 'real-dep', { owners: [ref(owner)] });
      // Created while the collector is down, so that on its return the
      // cluster-scoped dependents may be listed before their "owner".
      await ctx.collectorDown();
      const ownedByLive = await create(ctx, clusterRole, `gc-test-owned-by-live-cm-${suffix}`, { owners: [ref(owner)] });
      const ownedByGhost = await create(ctx, clusterRole, `gc-test-owned-by-ghost-cm-${suffix}`, {
        owners: [fakeRef('v1', 'ConfigMap', 'someone')],
      });
      const ghostCmDep = await cm(ctx, 'ghost-dep', { owners: [fakeRef('v1', 'ConfigMap', 'someone')] });
      // Control: a cluster-scoped object whose cluster-scoped owner is missing is collected.
      const control = await create(ctx, clusterRole, `gc-test-control-${suffix}`, {
        owners: [fakeRef('rbac.authorization.k8s.io/v1', 'ClusterRole', `missing-${suffix}`)],
      });
      await ctx.collectorUp();
      await gone(ctx, control, clusterRole);
      await gone(ctx, ghostCmDep);
      await mustBeKept(ctx, ownedByLive, clusterRole);
      await mustBeKept(ctx, ownedByGhost, clusterRole);
      await mustBeKept(ctx, owner);
      const dep = await mustBeKept(ctx, realDep);
      expect(refNames(dep)).toEqual(['someone']);
      await ctx.env.client.delete(clusterRole, undefined, ownedByLive.metadata.name, { uid: ownedByLive.metadata.uid });
      await ctx.env.client.delete(clusterRole, undefined, ownedByGhost.metadata.name, { uid: ownedByGhost.metadata.uid });
    },
  },
  {
    name: 'cascading deletion with multiple owners: the dependent with a second owner survives, losing the dangling reference',
    async run(ctx) {
      const o1 = await cm(ctx, 'owner-1');
      const o2 = await cm(ctx, 'owner-2');
      const only = await cm(ctx, 'only-o1', { owners: [ref(o1)] });
      const both = await cm(ctx, 'both', { owners: [ref(o1), ref(o2)] });
      await del(ctx, o1, 'Background');
      await gone(ctx, only);
      await until(ctx, 'the dangling reference to be removed', both, (o) => refNames(o).join() === 'owner-2');
    },
  },
  {
    name: 'a dependent created with a non-existent owner is collected',
    async run(ctx) {
      const dep = await cm(ctx, 'orphan-at-birth', { owners: [fakeRef('v1', 'ConfigMap', 'never-existed')] });
      await gone(ctx, dep);
    },
  },
  {
    name: 'orphaning: the owner goes, its dependents stay without the reference',
    async run(ctx) {
      const owner = await cm(ctx, 'owner');
      const deps = await Promise.all([0, 1, 2].map((i) => cm(ctx, `dep-${i}`, { owners: [ref(owner, { blocking: true })] })));
      await del(ctx, owner, 'Orphan');
      await gone(ctx, owner);
      for (const d of deps) await until(ctx, 'the reference to be removed', d, (o) => refNames(o).length === 0);
    },
  },
  {
    name: 'a solid owner does not block a waiting owner',
    async run(ctx) {
      const waiting = await cm(ctx, 'to-be-deleted');
      const solid = await cm(ctx, 'solid');
      const dep = await cm(ctx, 'dep', { owners: [ref(waiting, { blocking: true }), ref(solid)] });
      await del(ctx, waiting, 'Foreground');
      await gone(ctx, waiting);
      await until(ctx, 'only the solid reference to remain', dep, (o) => refNames(o).join() === 'solid' && !o.metadata.deletionTimestamp);
    },
  },
  {
    name: 'a non-blocking reference does not block a foreground deletion',
    async run(ctx) {
      const owner = await cm(ctx, 'owner');
      const a = await cm(ctx, 'non-blocking', { owners: [ref(owner, { blocking: false })], finalizers: ['x/y'] });
      const b = await cm(ctx, 'unset', { owners: [ref(owner)], finalizers: ['x/y'] });
      await del(ctx, owner, 'Foreground');
      await gone(ctx, owner);
      await mustExist(ctx, a);
      await mustExist(ctx, b);
      await setFinalizers(ctx, a, []);
      await setFinalizers(ctx, b, []);
      await gone(ctx, a);
      await gone(ctx, b);
    },
  },
  {
    name: 'double foreground deletion of an object with another finalizer',
    async run(ctx) {
      const obj = await cm(ctx, 'lucy', { finalizers: ['x/y'] });
      await del(ctx, obj, 'Foreground');
      await until(ctx, 'only x/y to remain after the first deletion', obj, (o) => (o.metadata.finalizers ?? []).join() === 'x/y');
      await del(ctx, obj, 'Foreground');
      await until(ctx, 'only x/y to remain after the second deletion', obj, (o) => (o.metadata.finalizers ?? []).join() === 'x/y');
      await setFinalizers(ctx, obj, []);
      await gone(ctx, obj);
    },
  },
  {
    name: 'a blocking reference blocks while the dependent has another finalizer',
    async run(ctx) {
      const owner = await cm(ctx, 'owner');
      const dep = await cm(ctx, 'dep', { owners: [ref(owner, { blocking: true })], finalizers: ['x/y'] });
      await del(ctx, owner, 'Foreground');
      await until(ctx, 'the dependent to be deleted', dep, (o) => o.metadata.deletionTimestamp !== undefined);
      const held = await mustExist(ctx, owner);
      expect(held.metadata.finalizers).toContain('foregroundDeletion');
      await setFinalizers(ctx, dep, []);
      await gone(ctx, dep);
      await gone(ctx, owner);
    },
  },
  {
    name: 'custom resources cascade',
    async run(ctx) {
      const owner = await widget(ctx, 'owner');
      const dep = await widget(ctx, 'dep', { owners: [ref(owner)] });
      await del(ctx, owner, 'Background', ctx.widget);
      await gone(ctx, dep, ctx.widget);
    },
  },
  {
    name: 'mixed custom resource / ConfigMap relationships',
    async run(ctx) {
      const cmOwner = await cm(ctx, 'cm-owner');
      const crDep = await widget(ctx, 'cr-dep', { owners: [ref(cmOwner)] });
      const crOwner = await widget(ctx, 'cr-owner');
      const cmDep = await cm(ctx, 'cm-dep', { owners: [ref(crOwner)] });
      await del(ctx, cmOwner, 'Background');
      await del(ctx, crOwner, 'Foreground', ctx.widget);
      await gone(ctx, crDep, ctx.widget);
      await gone(ctx, cmDep);
      await gone(ctx, crOwner, ctx.widget);
    },
  },
  {
    name: 'deleting a CRD cascades to the dependents of its custom resources',
    async run(ctx) {
      const plural = `gadgets${randomBytes(2).toString('hex')}`;
      const rt = await installWidgetCrd(ctx.env, plural, `Gadget${plural.slice(7)}`);
      // Both collectors keep a dependent whose owner's kind they never
      // served (unknown kind): the cascade needs the CR's deletion observed.
      await ctx.collectorWatches(rt);
      const owner = await create(ctx, rt, 'owner');
      const dep = await cm(ctx, 'dep', { owners: [ref(owner)] });
      await ctx.env.client.delete(CRD_RESOURCE, undefined, `${plural}.${TEST_GROUP}`, {
        uid: (await ctx.env.client.get(CRD_RESOURCE, undefined, `${plural}.${TEST_GROUP}`)).metadata.uid,
      });
      await gone(ctx, dep);
    },
  },
  {
    name: 'cross-namespace references: the invalid one is collected with a warning, the valid one kept',
    async run(ctx) {
      const owner = await cm(ctx, 'parent');
      const valid = await cm(ctx, 'valid-child', { owners: [ref(owner)] });
      const invalid = await cm(ctx, 'invalid-child', { owners: [ref(owner)], namespace: ctx.ns2 });
      await gone(ctx, invalid);
      await mustExist(ctx, valid);
      await waitFor(
        'an OwnerRefInvalidNamespace event on the invalid child',
        async () => (await eventsAbout(ctx, ctx.ns2, 'invalid-child', 'OwnerRefInvalidNamespace')).length > 0,
        { timeoutMs: ctx.timeoutMs, intervalMs: 200 },
      );
    },
  },
  {
    name: 'cluster-scoped owners: a missing one lets the dependent go, an unknown kind keeps it',
    async run(ctx) {
      const unknown = await cm(ctx, 'unknown-kind-owner', { owners: [fakeRef('unknown.example.com/v1', 'Thing', 'thing')] });
      const missing = await cm(ctx, 'missing-owner', { owners: [fakeRef('rbac.authorization.k8s.io/v1', 'ClusterRole', 'missing')] });
      await gone(ctx, missing);
      // Decided after the missing one (same queue), and still there.
      await mustExist(ctx, unknown);
    },
  },
  {
    name: 'background deletion of an owner with many dependents',
    async run(ctx) {
      const owner = await cm(ctx, 'owner');
      const deps = await Promise.all(
        Array.from({ length: 40 }, (_, i) => cm(ctx, `dep-${i}`, { owners: [ref(owner, { controller: true, blocking: true })] })),
      );
      await del(ctx, owner, 'Background');
      for (const d of deps) await gone(ctx, d);
    },
  },
  {
    name: 'orphan deletion keeps every dependent',
    async run(ctx) {
      const owner = await cm(ctx, 'owner', { finalizers: ['x/keep-until-checked'] });
      const deps = await Promise.all(
        Array.from({ length: 10 }, (_, i) => cm(ctx, `dep-${i}`, { owners: [ref(owner, { controller: true, blocking: true })] })),
      );
      await del(ctx, owner, 'Orphan');
      await until(ctx, 'the orphan finalizer to be handled', owner, (o) => !(o.metadata.finalizers ?? []).includes('orphan'));
      for (const d of deps)
        await until(ctx, 'the reference to be removed', d, (o) => refNames(o).length === 0 && !o.metadata.deletionTimestamp);
      await setFinalizers(ctx, owner, []);
      await gone(ctx, owner);
    },
  },
  {
    name: 'foreground deletion keeps the owner until its dependents are gone',
    async run(ctx) {
      const owner = await cm(ctx, 'owner');
      const deps = await Promise.all(
        Array.from({ length: 5 }, (_, i) => cm(ctx, `dep-${i}`, { owners: [ref(owner, { blocking: true })], finalizers: ['x/y'] })),
      );
      await del(ctx, owner, 'Foreground');
      for (const d of deps) await until(ctx, 'the dependent to be deleted', d, (o) => o.metadata.deletionTimestamp !== undefined);
      await mustExist(ctx, owner);
      for (const d of deps) await setFinalizers(ctx, d, []);
      for (const d of deps) await gone(ctx, d);
      await gone(ctx, owner);
    },
  },
  {
    name: 'half the dependents owned by a second owner survive a foreground deletion',
    async run(ctx) {
      const o1 = await cm(ctx, 'owner-1');
      const o2 = await cm(ctx, 'owner-2');
      const deps = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          cm(ctx, `dep-${i}`, { owners: i % 2 === 0 ? [ref(o1, { blocking: true }), ref(o2)] : [ref(o1, { blocking: true })] }),
        ),
      );
      await del(ctx, o1, 'Foreground');
      await gone(ctx, o1);
      for (const [i, d] of deps.entries()) {
        if (i % 2 === 0)
          await until(
            ctx,
            'the survivor to keep only owner-2',
            d,
            (o) => refNames(o).join() === 'owner-2' && !o.metadata.deletionTimestamp,
          );
        else await gone(ctx, d);
      }
    },
  },
  {
    name: 'a three-object ownership cycle under foreground deletion is fully deleted',
    async run(ctx) {
      const a = await cm(ctx, 'a');
      const b = await cm(ctx, 'b', { owners: [ref(a, { blocking: true })] });
      const c = await cm(ctx, 'c', { owners: [ref(b, { blocking: true })] });
      await ctx.env.client.patch(ctx.cm, ctx.ns, 'a', { metadata: { ownerReferences: [ref(c, { blocking: true })] } }, 'merge');
      await del(ctx, { ...a, metadata: { ...a.metadata, resourceVersion: '' } }, 'Foreground');
      await gone(ctx, a);
      await gone(ctx, b);
      await gone(ctx, c);
    },
  },
  {
    name: 'a custom resource owning a custom resource: background and orphan',
    async run(ctx) {
      const owner = await widget(ctx, 'bg-owner');
      const dep = await widget(ctx, 'bg-dep', { owners: [ref(owner, { blocking: true })] });
      const owner2 = await widget(ctx, 'orphan-owner');
      const dep2 = await widget(ctx, 'orphan-dep', { owners: [ref(owner2, { blocking: true })] });
      await del(ctx, owner, 'Background', ctx.widget);
      await del(ctx, owner2, 'Orphan', ctx.widget);
      await gone(ctx, dep, ctx.widget);
      await gone(ctx, owner2, ctx.widget);
      await until(ctx, 'the orphaned custom resource to lose its reference', dep2, (o) => refNames(o).length === 0, ctx.widget);
    },
  },
  {
    name: 'stress: orphan, background and foreground deletions over many groups',
    async run(ctx) {
      const policies = ['Orphan', 'Background', 'Foreground'] as const;
      const groups = await Promise.all(
        Array.from({ length: 9 }, async (_, g) => {
          const owner = await cm(ctx, `owner-${g}`);
          const deps = await Promise.all(
            Array.from({ length: 6 }, (_, i) => cm(ctx, `g${g}-dep-${i}`, { owners: [ref(owner, { blocking: i % 2 === 0 })] })),
          );
          return { owner, deps, policy: policies[g % 3]! };
        }),
      );
      await Promise.all(groups.map((g) => del(ctx, g.owner, g.policy)));
      for (const g of groups) {
        await gone(ctx, g.owner);
        for (const d of g.deps) {
          if (g.policy === 'Orphan') await until(ctx, 'orphaned dependent', d, (o) => refNames(o).length === 0);
          else await gone(ctx, d);
        }
      }
    },
  },
];
