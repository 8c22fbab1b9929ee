/**
 * Executes a plan's steps against one cluster: resolves logical objects to
 * names and, when a reference is written, to the owner's UID in this
 * cluster (each incarnation's UID is remembered, so the judge can tell a
 * recreated object from the original), kills and restarts this cluster's
 * collector, and waits for quiescence.
 */
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../../../src/kube/client.js';
import type { Discovery } from '../../../src/kube/discovery.js';
import { installCrd } from '../../../src/kube/crds.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { OwnerReference } from '../../../src/api/resource.js';
import type { KubeObject, ResourceType } from '../../../src/kube/types.js';
import {
  HOLD_FINALIZER,
  KINDS,
  MANAGED_LABEL,
  SEED_LABEL,
  TEST_GROUP,
  namespaceName,
  objectName,
  type KindName,
  type Plan,
  type PlanObject,
  type PlanRef,
  type Step,
  type TouchEdit,
  type GcRevocation,
} from './plan.js';
import type { CollectorRbac } from './rbac.js';

/** The field manager of every hand edit (references, labels, annotations): anyone but the operator. */
export const HAND_MANAGER = 'fuzz-hand';

/** Kills and starts one cluster's collector (ours: the operator process; the reference: kube-controller-manager). */
export interface CollectorControl {
  kill(): Promise<void>;
  /** Starts it and waits until its process answers its health check (not until it has synced). */
  start(): Promise<void>;
  running(): boolean;
  /** Where to look when this cluster misbehaves (log files). */
  describe(): string;
}

export interface FuzzCluster {
  label: 'ours' | 'reference';
  client: KubeClient;
  discovery: Discovery;
  collector: CollectorControl;
  /** A namespace of the suite's own for probes. */
  probeNamespace: string;
  /** Our collector's rights (the rbac dimension); the reference has none to take. */
  rbac?: CollectorRbac;
}

export type Snapshot = Map<string, KubeObject>;

export function snapshotKey(kind: string, namespace: string | undefined, name: string): string {
  return `${kind}|${namespace ?? ''}|${name}`;
}

/**
 * How long a snapshot must stay unchanged to count as quiet between groups;
 * the judge's final settle waits longer (FINAL_QUIET_MS). Both collectors
 * react within milliseconds when running (after a restart, the probe has
 * already proven that), so these are margins, not measurements.
 */
export const QUIET_MS = 1_500;
export const FINAL_QUIET_MS = 3_000;
/** Upper bound of one settle; past it the judge compares what is there. */
const SETTLE_BOUND_MS = 40_000;
const POLL_MS = 250;
/** An incarnation never created in this cluster (a step failed): references to it are dangling. */
const NEVER_CREATED_UID = '00000000-0000-4000-8000-00000000dead';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `fn` again while the API server answers that a custom resource's
 * storage is (re)initializing (for a moment after each change of its CRD,
 * crdVersion), or that a just-unserved version is gone from under a list in
 * flight; up to 15 s.
 */
export async function retryWhileCrdSettles<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      const transient =
        err instanceof KubeApiError && (err.code === 429 || err.code === 503 || /storage is \(re\)initializing/.test(err.message));
      if (!transient || Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

/**
 * A schemaless CRD in the fuzzer's group: the fixed Widget and Realm kinds, and the gadget kinds plans create and delete.
 * `versions`: v1 only (the default); v1alpha1 only; both with v1 stored; v1 stored and v1alpha1 no longer served.
 */
export function fuzzCrd(
  kind: string,
  plural: string,
  scope: 'Namespaced' | 'Cluster' = 'Namespaced',
  versions: 'v1' | 'v1alpha1' | 'both' | 'unserved' = 'v1',
): Record<string, unknown> {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  const list =
    versions === 'v1'
      ? [{ name: 'v1', served: true, storage: true, schema }]
      : versions === 'v1alpha1'
        ? [{ name: 'v1alpha1', served: true, storage: true, schema }]
        : [
            { name: 'v1alpha1', served: versions === 'both', storage: false, schema },
            { name: 'v1', served: true, storage: true, schema },
          ];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${TEST_GROUP}` },
    spec: {
      group: TEST_GROUP,
      scope,
      names: { plural, singular: plural.replace(/s$/, ''), kind, listKind: `${kind}List` },
      versions: list,
    },
  };
}

export async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(200);
  }
}

/**
 * Proves the cluster's collector acts on kind `rt`: an object of that kind
 * owned by an owner that never existed must be collected.
 */
export async function probeCollector(cluster: FuzzCluster, rt: ResourceType, timeoutMs = 90_000): Promise<void> {
  const name = `probe-${randomBytes(4).toString('hex')}`;
  const owner: OwnerReference = rt.namespaced
    ? {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'probe-owner-never-existed',
        uid: `00000000-0000-4000-8000-${randomBytes(6).toString('hex')}`,
      }
    : {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        name: 'probe-owner-never-existed',
        uid: `00000000-0000-4000-8000-${randomBytes(6).toString('hex')}`,
      };
  const namespace = rt.namespaced ? cluster.probeNamespace : undefined;
  await retryWhileCrdSettles(() =>
    cluster.client.create(rt, {
      apiVersion: rt.apiVersion,
      kind: rt.kind,
      metadata: { name, ...(namespace ? { namespace } : {}), ownerReferences: [owner] },
    }),
  );
  await waitUntil(`${cluster.label}'s collector to collect probe ${rt.kind} ${name}`, timeoutMs, async () =>
    (await retryWhileCrdSettles(() => cluster.client.tryGet(rt, namespace, name, { metadataOnly: true }))) ? undefined : true,
  );
}

export class PlanExecutor {
  /** UIDs of each logical object's incarnations in this cluster, in creation order. */
  readonly uids = new Map<string, string[]>();
  /** Things that did not go as planned here (a create refused, a settle that hit its bound). */
  readonly notes: string[] = [];
  private readonly types = new Map<KindName, ResourceType>();
  private needsProbe = false;
  /** When our collector lost rights (rbac), and until when a settle waits after it got them back. */
  private revokedAt: number | undefined;
  private revokedWhat: GcRevocation | undefined;
  private graceUntil = 0;
  /** The version the mid-run CRD's objects and new references are written at (crdVersions: v1alpha1, then v1). */
  private gadgetVersion: 'v1alpha1' | 'v1';
  lastSnapshot: Snapshot = new Map();
  /**
   * UIDs of objects that, when this cluster's collector (re)started, had a
   * non-blocking reference to an owner waiting in foreground deletion (the
   * judge's start-up tolerance: whether kube-controller-manager attempts
   * them depends on the order its informers hand over their lists).
   */
  readonly foregroundDependentsAtStart = new Set<string>();
  /** UIDs of the owners waiting in foreground deletion at a collector (re)start. */
  readonly foregroundOwnersAtStart = new Set<string>();
  /** UIDs of objects referring, at a collector (re)start, both to an owner orphaning its dependents and to one waiting in foreground deletion (the judge's orphanRaceLeak). */
  readonly orphanRaceDependentsAtStart = new Set<string>();

  constructor(
    readonly cluster: FuzzCluster,
    readonly plan: Plan,
  ) {
    this.gadgetVersion = plan.gadget?.versioned ? 'v1alpha1' : 'v1';
  }

  async prepare(): Promise<void> {
    const nsType = await this.resolve('v1', 'Namespace');
    for (const ns of ['a', 'b'] as const) {
      await this.cluster.client.create(nsType, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: namespaceName(this.plan.seed, ns) },
      });
    }
    for (const kind of ['ConfigMap', 'Secret', 'Widget', 'ClusterRole', 'Realm'] as const) {
      this.types.set(kind, await this.resolve(KINDS[kind].apiVersion, kind));
    }
    if (!this.cluster.collector.running()) {
      await this.cluster.collector.start();
      this.needsProbe = true;
    }
  }

  async run(step: Step): Promise<void> {
    switch (step.op) {
      case 'create':
        await this.create(step.obj, step.refs);
        return;
      case 'delete':
        await this.delete(step.obj, step.policy);
        return;
      case 'addRef':
        await this.editRefs(step.obj, (refs) => {
          const added = this.ownerRef(step.ref);
          if (refs.some((r) => r.uid === added.uid)) return refs;
          const controller = added.controller && !refs.some((r) => r.controller);
          return [...refs, { ...added, ...(added.controller ? { controller } : {}) }];
        });
        return;
      case 'removeRef': {
        const gone = new Set(this.uids.get(step.owner) ?? []);
        await this.editRefs(step.obj, (refs) => refs.filter((r) => !gone.has(r.uid)));
        return;
      }
      case 'recreate':
        await this.recreate(step.obj, step.refs);
        return;
      case 'release':
        await this.release(step.obj);
        return;
      case 'kill':
        await this.cluster.collector.kill();
        return;
      case 'start':
        {
          const snap = await this.snapshot();
          for (const uid of nonBlockingDependentsOfForegroundOwners(snap)) this.foregroundDependentsAtStart.add(uid);
          for (const uid of foregroundOwners(snap)) this.foregroundOwnersAtStart.add(uid);
          for (const uid of dependentsOfOrphanAndUnsolidOwners(snap)) this.orphanRaceDependentsAtStart.add(uid);
        }
        await this.cluster.collector.start();
        this.needsProbe = true;
        return;
      case 'installCrd':
        await this.installGadget();
        return;
      case 'touch':
        await this.touch(step.obj, step.edit);
        return;
      case 'crdVersion':
        await this.gadgetVersionStep(step.stage);
        return;
      case 'rbac':
        await this.rbacStep(step.revoke);
        return;
      case 'settle':
        await this.settle();
        return;
    }
  }

  // ---- objects ---------------------------------------------------------------

  private object(id: string): PlanObject {
    const o = this.plan.objects.find((x) => x.id === id);
    if (!o) throw new Error(`the plan has no object ${id}`);
    return o;
  }

  private kindOf(o: PlanObject): string {
    return o.kind === 'Gadget' ? (this.plan.gadget?.kind ?? 'Gadget') : o.kind;
  }

  private typeOf(o: PlanObject): ResourceType {
    const rt = this.types.get(o.kind);
    if (!rt) throw new Error(`${o.kind} is not served (yet) in ${this.cluster.label}`);
    return rt;
  }

  private where(o: PlanObject): { namespace: string | undefined; name: string } {
    return { namespace: o.ns ? namespaceName(this.plan.seed, o.ns) : undefined, name: objectName(this.plan.seed, o) };
  }

  private currentUid(id: string): string {
    return this.uids.get(id)?.at(-1) ?? NEVER_CREATED_UID;
  }

  ownerRef(r: PlanRef): OwnerReference {
    const flags = {
      ...(r.blocking !== undefined ? { blockOwnerDeletion: r.blocking } : {}),
      ...(r.controller ? { controller: true } : {}),
    };
    if ('fake' in r.owner) return { ...r.owner.fake, ...flags };
    const owner = this.object(r.owner.obj);
    const apiVersion = owner.kind === 'Gadget' ? `${TEST_GROUP}/${this.gadgetVersion}` : KINDS[owner.kind].apiVersion;
    return {
      apiVersion,
      kind: this.kindOf(owner),
      name: objectName(this.plan.seed, owner),
      uid: r.wrongUid ?? this.currentUid(owner.id),
      ...flags,
    };
  }

  private async create(id: string, refs: PlanRef[]): Promise<void> {
    const o = this.object(id);
    const rt = this.typeOf(o);
    const { namespace, name } = this.where(o);
    try {
      const created = await retryWhileCrdSettles(() =>
        this.cluster.client.create(rt, {
          apiVersion: rt.apiVersion,
          kind: rt.kind,
          metadata: {
            name,
            ...(namespace ? { namespace } : {}),
            labels: { [SEED_LABEL]: String(this.plan.seed) },
            ...(o.hold ? { finalizers: [HOLD_FINALIZER] } : {}),
            ...(refs.length > 0 ? { ownerReferences: refs.map((r) => this.ownerRef(r)) } : {}),
          },
        }),
      );
      this.uids.set(id, [...(this.uids.get(id) ?? []), created.metadata.uid]);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) {
        this.notes.push(`create ${id}: it already exists (an earlier incarnation is still being deleted)`);
        return;
      }
      throw err;
    }
  }

  private async delete(id: string, policy: 'Background' | 'Foreground' | 'Orphan'): Promise<void> {
    const o = this.object(id);
    const { namespace, name } = this.where(o);
    try {
      await this.cluster.client.delete(this.typeOf(o), namespace, name, { uid: this.currentUid(id), propagationPolicy: policy });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 409) {
        this.notes.push(`delete ${id}: UID precondition failed`);
        return;
      }
      throw err;
    }
  }

  private async live(o: PlanObject): Promise<KubeObject | undefined> {
    const { namespace, name } = this.where(o);
    return retryWhileCrdSettles(() => this.cluster.client.tryGet(this.typeOf(o), namespace, name, { metadataOnly: true }));
  }

  /** Read, change, write with the read's resourceVersion; again on conflict. Absent: nothing to edit. */
  private async patchMeta(o: PlanObject, change: (live: KubeObject) => Record<string, unknown> | undefined): Promise<void> {
    const { namespace, name } = this.where(o);
    for (let attempt = 0; attempt < 10; attempt++) {
      const live = await this.live(o);
      if (!live || live.metadata.uid !== this.currentUid(o.id)) return;
      const meta = change(live);
      if (!meta) return;
      try {
        await this.cluster.client.patch(
          this.typeOf(o),
          namespace,
          name,
          { metadata: { resourceVersion: live.metadata.resourceVersion, ...meta } },
          'merge',
          { fieldManager: HAND_MANAGER },
        );
        return;
      } catch (err) {
        if (err instanceof KubeApiError && (err.code === 409 || err.code === 404)) continue;
        throw err;
      }
    }
    this.notes.push(`edit ${o.id}: conflicts on every attempt`);
  }

  private async editRefs(id: string, edit: (refs: OwnerReference[]) => OwnerReference[]): Promise<void> {
    await this.patchMeta(this.object(id), (live) => {
      const before = live.metadata.ownerReferences ?? [];
      const after = edit(before);
      return JSON.stringify(after) === JSON.stringify(before) ? undefined : { ownerReferences: after };
    });
  }

  private async release(id: string): Promise<void> {
    await this.patchMeta(this.object(id), (live) => {
      const finalizers = live.metadata.finalizers ?? [];
      return finalizers.includes(HOLD_FINALIZER) ? { finalizers: finalizers.filter((f) => f !== HOLD_FINALIZER) } : undefined;
    });
  }

  private async recreate(id: string, refs: PlanRef[]): Promise<void> {
    const o = this.object(id);
    const live = await this.live(o);
    if (live) {
      const { namespace, name } = this.where(o);
      await this.cluster.client.delete(this.typeOf(o), namespace, name, { uid: live.metadata.uid, propagationPolicy: 'Background' });
      const gone = await waitUntil(`${id} to go`, 5_000, async () => ((await this.live(o)) ? undefined : true)).catch(() => false);
      if (!gone) {
        this.notes.push(`recreate ${id}: still there 5 s after its deletion (a finalizer holds it); not recreated`);
        return;
      }
    }
    await this.create(id, refs);
  }

  /** A hand edit of labels or annotations (the seed label stays: the snapshot lists by it). */
  private async touch(id: string, edit: TouchEdit): Promise<void> {
    await this.patchMeta(this.object(id), (live) => {
      switch (edit) {
        case 'label-managed':
          return { labels: { [MANAGED_LABEL]: 'true' } };
        case 'unlabel-managed':
          return live.metadata.labels?.[MANAGED_LABEL] === undefined ? undefined : { labels: { [MANAGED_LABEL]: null } };
        case 'label-other':
          return { labels: { 'team.example.com/owner': 'a-team' } };
        case 'annotate-other':
          return { annotations: { 'example.com/last-edited-by': 'a-human' } };
      }
    });
  }

  /**
   * The versioned mid-run CRD gains v1 as its storage version, or stops
   * serving v1alpha1; then both collectors must act on objects at v1 (a
   * probe there) before the plan goes on.
   */
  private async gadgetVersionStep(stage: 'add-v1' | 'unserve-old'): Promise<void> {
    const gadget = this.plan.gadget;
    if (!gadget?.versioned) throw new Error('crdVersion in a plan without a versioned gadget kind');
    await installCrd(this.cluster.client, fuzzCrd(gadget.kind, gadget.plural, 'Namespaced', stage === 'add-v1' ? 'both' : 'unserved'));
    const rt = await waitUntil(`${gadget.kind} to be served at v1`, 30_000, async () => {
      this.cluster.discovery.invalidate();
      return await this.cluster.discovery.resolve(`${TEST_GROUP}/v1`, gadget.kind);
    });
    // Discovery may name the new version before the server handles it (seed 20104: the next list got a 404).
    await waitUntil(`${gadget.kind} v1 to answer a list`, 30_000, async () => {
      try {
        await this.cluster.client.list(rt, undefined, { limit: 1, metadataOnly: true });
        return true;
      } catch (err) {
        if (err instanceof KubeApiError && (err.code === 404 || err.code === 503)) return undefined;
        throw err;
      }
    });
    if (stage === 'unserve-old') {
      // Discovery keeps what it once resolved: ask the server at the old version until it answers 404.
      const old = { ...rt, version: 'v1alpha1', apiVersion: `${TEST_GROUP}/v1alpha1` };
      await waitUntil(`${gadget.kind} v1alpha1 to be no longer served`, 30_000, async () => {
        try {
          await this.cluster.client.list(old, undefined, { limit: 1, metadataOnly: true });
          return undefined;
        } catch (err) {
          if (err instanceof KubeApiError && err.code === 404) return true;
          return undefined;
        }
      });
      await probeCollector(this.cluster, rt);
    }
    this.types.set('Gadget', rt);
    this.gadgetVersion = 'v1';
  }

  /**
   * Our collector loses `revoke`, or gets every right back. Once back, the
   * next settle probes the kinds it lost and waits at least half again the
   * time the rights were missing plus two seconds (its retries back off,
   * up to a minute, while refused), so that it has had the time to retry
   * what was refused.
   */
  private async rbacStep(revoke: GcRevocation | undefined): Promise<void> {
    const rbac = this.cluster.rbac;
    if (!rbac) return;
    if (revoke !== undefined) {
      await rbac.revoke(revoke);
      this.revokedAt = Date.now();
      this.revokedWhat = revoke;
      return;
    }
    await rbac.grant(this.plan.gadget?.plural);
    const missing = Date.now() - (this.revokedAt ?? Date.now());
    this.graceUntil = Date.now() + Math.min(60_000, 1.5 * missing + 2_000);
    this.needsProbe = true;
    this.probeWidgets = this.revokedWhat === 'crs-list';
    this.revokedAt = undefined;
    this.revokedWhat = undefined;
  }

  private probeWidgets = false;

  private async installGadget(): Promise<void> {
    const gadget = this.plan.gadget;
    if (!gadget) throw new Error('installCrd in a plan without a gadget kind');
    const version = gadget.versioned ? 'v1alpha1' : 'v1';
    await installCrd(this.cluster.client, fuzzCrd(gadget.kind, gadget.plural, 'Namespaced', version));
    const rt = await waitUntil(`${gadget.kind} to be served`, 30_000, async () => {
      this.cluster.discovery.invalidate();
      return await this.cluster.discovery.resolve(`${TEST_GROUP}/${version}`, gadget.kind);
    });
    this.types.set('Gadget', rt);
    // The reference re-discovers every 30 s: wait until its collector acts on the new kind.
    await probeCollector(this.cluster, rt);
  }

  private async resolve(apiVersion: string, kind: string): Promise<ResourceType> {
    const rt = await this.cluster.discovery.resolve(apiVersion, kind);
    if (!rt) throw new Error(`${this.cluster.label}: ${apiVersion} ${kind} is not served`);
    return rt;
  }

  // ---- quiescence --------------------------------------------------------------

  /** Every object of this seed, by kind|namespace|name (metadata only). */
  async snapshot(): Promise<Snapshot> {
    const out: Snapshot = new Map();
    const lists = await Promise.all(
      [...this.types].map(async ([kind, rt]) => ({
        kind,
        list: await retryWhileCrdSettles(() =>
          this.cluster.client.list(rt, undefined, { labelSelector: `${SEED_LABEL}=${this.plan.seed}`, metadataOnly: true }),
        ),
      })),
    );
    for (const { kind, list } of lists)
      for (const item of list.items) out.set(snapshotKey(kind, item.metadata.namespace, item.metadata.name), item);
    return out;
  }

  /**
   * Waits until the collector has nothing left it could finish: (after a
   * restart) it collected a probe, the snapshot stayed unchanged for
   * the quiet period, and no object waits on something only a collector does (an
   * `orphan` finalizer; `foregroundDeletion` with no blocking dependent
   * left; a deletionTimestamp with no finalizer). Bounded: past
   * SETTLE_BOUND_MS the judge compares what is there, with a note.
   */
  async settle(quietMs = QUIET_MS): Promise<void> {
    const started = Date.now();
    // Without its rights our collector may not collect a probe: the probe waits until they are back.
    if (this.needsProbe && this.revokedAt === undefined) {
      const cm = this.types.get('ConfigMap');
      if (cm) await probeCollector(this.cluster, cm);
      const widget = this.types.get('Widget');
      if (this.probeWidgets && widget) await probeCollector(this.cluster, widget);
      this.needsProbe = false;
      this.probeWidgets = false;
    }
    if (Date.now() < this.graceUntil) await sleep(this.graceUntil - Date.now());
    let fingerprint = '';
    let quietSince = Date.now();
    for (;;) {
      const snap = await this.snapshot();
      this.lastSnapshot = snap;
      const print = [...snap.entries()]
        .map(([k, o]) => `${k}@${o.metadata.uid}/${o.metadata.resourceVersion}`)
        .sort()
        .join('\n');
      if (print !== fingerprint) {
        fingerprint = print;
        quietSince = Date.now();
      }
      const pending = pendingWork(snap);
      if (pending.length === 0 && Date.now() - quietSince >= quietMs) return;
      if (Date.now() - started > SETTLE_BOUND_MS) {
        this.notes.push(
          `settle: not quiet after ${SETTLE_BOUND_MS / 1000} s${pending.length > 0 ? ` (still pending: ${pending.slice(0, 5).join('; ')})` : ''}`,
        );
        return;
      }
      await sleep(POLL_MS);
    }
  }
}

/** Objects on which a running collector still has work it can do on its own. */
export function pendingWork(snap: Snapshot): string[] {
  const blockingDependents = new Map<string, number>();
  for (const o of snap.values()) {
    for (const r of o.metadata.ownerReferences ?? [])
      if (r.blockOwnerDeletion) blockingDependents.set(r.uid, (blockingDependents.get(r.uid) ?? 0) + 1);
  }
  const out: string[] = [];
  for (const [key, o] of snap) {
    const finalizers = o.metadata.finalizers ?? [];
    if (finalizers.includes('orphan')) out.push(`${key} has the orphan finalizer`);
    else if (finalizers.includes('foregroundDeletion') && !blockingDependents.has(o.metadata.uid))
      out.push(`${key} waits in foreground deletion with no blocking dependent`);
    else if (o.metadata.deletionTimestamp && finalizers.length === 0) out.push(`${key} is being deleted`);
  }
  return out;
}

/** Objects with a non-blocking reference to an owner (in the snapshot) that waits in foreground deletion. */
/** UIDs of the objects waiting in foreground deletion. */
export function foregroundOwners(snap: Snapshot): Set<string> {
  const waiting = new Set<string>();
  for (const o of snap.values())
    if (o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).includes('foregroundDeletion')) waiting.add(o.metadata.uid);
  return waiting;
}

export function nonBlockingDependentsOfForegroundOwners(snap: Snapshot): string[] {
  const waiting = foregroundOwners(snap);
  const out: string[] = [];
  for (const o of snap.values())
    if ((o.metadata.ownerReferences ?? []).some((r) => waiting.has(r.uid) && r.blockOwnerDeletion !== true)) out.push(o.metadata.uid);
  return out;
}

/** Owners being deleted with the `orphan` finalizer: their dependents are released, not deleted. */
function orphaningOwners(snap: Snapshot): Set<string> {
  const orphaning = new Set<string>();
  for (const o of snap.values())
    if (o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).includes('orphan')) orphaning.add(o.metadata.uid);
  return orphaning;
}

/**
 * Objects with a reference to an owner orphaning its dependents and one to
 * an owner that is not solid: waiting in foreground deletion, or gone
 * (seed 20104: deleted while the collector was down). Upstream counts the
 * orphaning owner solid, so which of its workers acts first decides the end.
 */
export function dependentsOfOrphanAndUnsolidOwners(snap: Snapshot): string[] {
  const waiting = foregroundOwners(snap);
  const orphaning = orphaningOwners(snap);
  const present = new Set([...snap.values()].map((o) => o.metadata.uid));
  const out: string[] = [];
  for (const o of snap.values()) {
    const refs = o.metadata.ownerReferences ?? [];
    if (refs.some((r) => waiting.has(r.uid) || !present.has(r.uid)) && refs.some((r) => orphaning.has(r.uid))) out.push(o.metadata.uid);
  }
  return out;
}
