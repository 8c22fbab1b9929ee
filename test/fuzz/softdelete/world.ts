/**
 * The real side of the soft-delete fuzzer: a control plane (ours or the one
 * given), the Gate CRD, and per seed a namespace, an operator process (the
 * real binary, SIGKILLed at random) and a watch that records when each
 * object incarnation appears and goes.
 */
import { rmSync } from 'node:fs';
import { startBenchCluster, type BenchCluster } from '../../../bench/cluster.js';
import { applyCrd } from '../../../hack/crd-install.js';
import { Annotations, ApplySetLabels, Labels } from '../../../src/api/names.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';
import { BUNDLE_RESOURCE_TYPE } from '../../../src/controllers/bundle/bundle-resource.js';
import { KubeClient, loadKubeConfig } from '../../../src/kube/client.js';
import { CRD_RESOURCE, installCrd } from '../../../src/kube/crds.js';
import { Discovery } from '../../../src/kube/discovery.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { KubeObject, ResourceType } from '../../../src/kube/types.js';
import type { OwnerReference } from '../../../src/api/resource.js';
import { DEFAULT_RELEASE_KEY_SECRET, loadReleaseKey } from '../../../src/controllers/softdelete/release-key.js';
import { releaseFactsOf, signRelease } from '../../../src/core/softdelete/provenance.js';
import { startOperatorProcess, type OperatorProcess } from '../../integration/operator.js';
import type { Defaults, Entry, Propagation, Rule, Spoil } from './model.js';
import {
  drawDriftAnnotations,
  drawDriftDefaults,
  NO_DIMENSIONS,
  type HandEdit,
  type Naming,
  type RbacRevocation,
  type SoftDeleteDimensions,
} from './dimensions.js';
import type { Random } from '../random.js';
import type { HoldHow } from './steps.js';
import { FUZZ_GROUP, operatorRoles, revokedRights, withoutRights, type OperatorRole, type PolicyRule } from './rbac.js';

/** The field manager of the hand edits: anyone but the operator. */
export const HAND_MANAGER = 'fuzz-hand';
/** Names of a person's copies (copy-object): no Bundle lists them, and no name of the seed starts so. */
export const COPY_PREFIX = 'person-copy-';

/**
 * The budget dimension's bulk ConfigMaps carry no drift controls: drawn anew
 * at every write of b1, they would make each of its 60-120 objects a write
 * under the tight budget (seed 18003 was then left past the model's bound),
 * which the model's budget allowance does not count.
 */
function isBulk(object: string): boolean {
  return object.startsWith('bulk-');
}

/** The annotations an old copy of an object brings back: its countdown, the operator's proofs, its rules. */
const REPLAYED_ANNOTATIONS = [
  Annotations.deletionTimestamp,
  Annotations.stampProof,
  Annotations.declaredRules,
  Annotations.deletionDelay,
  Annotations.deletionPolicy,
  Annotations.deleteWhen,
  Annotations.deletionApproved,
  // A released object's: an earlier release's proof written back with its stamp (red team 27).
  Annotations.releaseProof,
] as const;

function deletionAnnotationsOf(annotations: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(REPLAYED_ANNOTATIONS.flatMap((k) => (annotations?.[k] !== undefined ? [[k, annotations[k]]] : [])));
}
/** Logical names of the custom resources of the seed's versioned CRD (crdVersions). */
export const isVersioned = (object: string): boolean => object.startsWith('cr-');
/** The live Secret outside the seed that hand edits name as a foreign owner. */
const ANCHOR = 'fuzz-anchor';

/** The annotations each rule is written as; Delete is Smith's default, no annotation. */
const RULE_ANNOTATIONS: Record<Rule, Record<string, string>> = {
  Delete: {},
  Orphan: { [Annotations.deletionPolicy]: 'Orphan' },
  Approve: { [Annotations.deletionPolicy]: 'Approve' },
  BundleReady: { [Annotations.deleteWhen]: 'BundleReady' },
};

/** The rule the live object's annotations say, as the model names it. */
export function ruleOf(annotations: Readonly<Record<string, string>> | undefined): Rule {
  const a = annotations ?? {};
  if (a[Annotations.deletionPolicy] === 'Orphan') return 'Orphan';
  if (a[Annotations.deletionPolicy] === 'Approve') return 'Approve';
  if (a[Annotations.deleteWhen] === 'BundleReady') return 'BundleReady';
  return 'Delete';
}

const POLICY: Record<Propagation, 'Background' | 'Foreground' | 'Orphan'> = {
  background: 'Background',
  foreground: 'Foreground',
  orphan: 'Orphan',
};

export const GATE_GROUP = FUZZ_GROUP;
export const GATE_API_VERSION = `${GATE_GROUP}/v1`;
/** A Gate is Ready when the test sets status.phase to Open (the CRD's readiness annotations). */
export const GATE_OPEN = 'Open';

const GATE_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: {
    name: `gates.${GATE_GROUP}`,
    annotations: { [Annotations.crReadyWhenFieldPath]: 'status.phase', [Annotations.crReadyWhenFieldValue]: GATE_OPEN },
  },
  spec: {
    group: GATE_GROUP,
    scope: 'Namespaced',
    names: { kind: 'Gate', plural: 'gates', singular: 'gate' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

export interface Observation {
  type: 'created' | 'deleted';
  object: string;
  uid: string;
  at: number;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Watches one kind in one namespace, recording incarnations; restarts the stream from the last resourceVersion. */
class IncarnationWatch {
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();
  failure: unknown;

  constructor(
    private readonly client: KubeClient,
    readonly rt: ResourceType,
    private readonly namespace: string,
    private readonly record: (o: Observation) => void,
    /** Shared with the watch this one replaces at another version of the same kind. */
    private readonly seen = new Map<string, string>(),
    private readonly gone = new Set<string>(),
    /** Survives the ends and errors of a watch whose CRD changes (see start). */
    private readonly tolerant = false,
  ) {}

  /** A watch of the same objects at another version: what the old one saw and the new list lacks went in between. */
  successor(rt: ResourceType): IncarnationWatch {
    return new IncarnationWatch(this.client, rt, this.namespace, this.record, this.seen, this.gone, this.tolerant);
  }

  /** Lists, records what went since and what appeared; returns the list's resourceVersion. */
  private async relist(): Promise<string> {
    const list = await this.client.list(this.rt, this.namespace, { metadataOnly: true });
    const listed = new Set(list.items.map((i) => i.metadata.uid));
    for (const [name, uid] of this.seen) if (!listed.has(uid) && !this.gone.has(uid)) this.goneNow(name, uid, Date.now());
    for (const item of list.items) this.onObject('ADDED', item);
    return list.resourceVersion;
  }

  async start(): Promise<void> {
    let rv = await this.relist();
    let failures = 0;
    this.done = (async () => {
      while (!this.abort.signal.aborted) {
        try {
          await this.client.watch(
            this.rt,
            this.namespace,
            rv,
            { metadataOnly: true, timeoutSeconds: 300, signal: this.abort.signal },
            (event) => {
              rv = event.object.metadata.resourceVersion || rv;
              if (event.type !== 'BOOKMARK') this.onObject(event.type, event.object);
            },
          );
        } catch (err) {
          if (this.abort.signal.aborted) return;
          // The versioned CRD's watch ends with each change of the CRD (its storage is re-created): list again and
          // count what went meanwhile as gone now (a later time than the truth: never a false "too early").
          if (this.tolerant && failures++ < 100) {
            await sleep(200);
            try {
              rv = await this.relist();
            } catch {
              // Still re-initializing: try again.
            }
            continue;
          }
          // A 410 would mean events were lost: the seed cannot be judged.
          this.failure =
            err instanceof KubeApiError && err.code === 410
              ? new Error(`the ${this.rt.plural} watch expired: deletions may have been missed`)
              : err;
          return;
        }
      }
    })();
  }

  private onObject(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void {
    const { name, uid } = obj.metadata;
    const now = Date.now();
    const previous = this.seen.get(name);
    if (previous !== uid) {
      // A new incarnation: the previous one is gone even if its DELETED event was never seen.
      if (previous !== undefined && !this.gone.has(previous)) this.goneNow(name, previous, now);
      this.seen.set(name, uid);
      this.record({ type: 'created', object: name, uid, at: now });
    }
    if ((type === 'DELETED' || obj.metadata.deletionTimestamp !== undefined) && !this.gone.has(uid)) this.goneNow(name, uid, now);
  }

  private goneNow(name: string, uid: string, at: number): void {
    this.gone.add(uid);
    this.record({ type: 'deleted', object: name, uid, at });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

const rbacType = (kind: string, plural: string, namespaced: boolean): ResourceType => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  plural,
  namespaced,
  verbs: ['get', 'create', 'patch', 'delete'],
});
const ROLES = { cluster: rbacType('ClusterRole', 'clusterroles', false), namespaced: rbacType('Role', 'roles', true) };
const BINDINGS = {
  cluster: rbacType('ClusterRoleBinding', 'clusterrolebindings', false),
  namespaced: rbacType('RoleBinding', 'rolebindings', true),
};
const ADMISSION = {
  policy: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    plural: 'validatingadmissionpolicies',
    namespaced: false,
    verbs: ['get', 'create', 'patch', 'delete'],
  },
  binding: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    plural: 'validatingadmissionpolicybindings',
    namespaced: false,
    verbs: ['get', 'create', 'patch', 'delete'],
  },
} satisfies Record<string, ResourceType>;
const SERVICE_ACCOUNT = 'bundlesmith';
const RBAC_MANAGER = 'fuzz-admin';

/** The control plane and the types the suite uses; one per run. */
export class FuzzCluster {
  private constructor(
    readonly kubeconfig: string,
    readonly client: KubeClient,
    readonly configMaps: ResourceType,
    readonly gates: ResourceType,
    readonly namespaces: ResourceType,
    private readonly owned: BenchCluster | undefined,
  ) {}

  static async start(kubeconfig: string | undefined): Promise<FuzzCluster> {
    const owned = kubeconfig === undefined ? await startBenchCluster() : undefined;
    try {
      const path = kubeconfig ?? (owned as BenchCluster).state.kubeconfig;
      await applyCrd(path);
      const client = await KubeClient.fromKubeConfig(loadKubeConfig(path));
      await installCrd(client, GATE_CRD);
      const discovery = new Discovery(client, 0);
      let gates: ResourceType | undefined;
      for (let i = 0; i < 100 && !gates; i++) {
        discovery.invalidate();
        gates = await discovery.resolve(GATE_API_VERSION, 'Gate');
        if (!gates) await sleep(100);
      }
      const configMaps = await discovery.resolve('v1', 'ConfigMap');
      const namespaces = await discovery.resolve('v1', 'Namespace');
      if (!gates || !configMaps || !namespaces) throw new Error('the apiserver does not serve Gates, ConfigMaps or Namespaces');
      return new FuzzCluster(path, client, configMaps, gates, namespaces, owned);
    } catch (err) {
      owned?.stop();
      throw err;
    }
  }

  stop(): void {
    this.client.close();
    this.owned?.stop();
  }
}

export interface BundleWrite {
  sentAt: number;
  ackedAt: number;
}

/** One seed's namespace, operator and watches. */
export class SeedWorld {
  readonly observations: Observation[] = [];
  /** The running operator processes: one, or two replicas (replicas). */
  private operators: OperatorProcess[] = [];
  private readonly logs: string[] = [];
  private readonly watches: IncarnationWatch[];
  private readonly bundleUids = new Map<string, string>();
  /** The seed's versioned CRD (crdVersions): its kind, plural, and the version objects are read at now. */
  private readonly versioned: { kind: string; plural: string; rt: ResourceType } | undefined;
  private anchorUid: string | undefined;
  /** A person's copies (copy-object), by name: whose copy, its uid, the references the person kept. */
  readonly copies = new Map<string, { of: string; uid: string; references: readonly OwnerReference[] }>();
  /** What replay-annotations read of each incarnation (`object/uid`), oldest first. */
  private readonly replayHistory = new Map<string, Record<string, string>[]>();
  /** The rbac dimension: the operator's roles as granted, the revocation in force, and the processes killed on purpose. */
  private roles: OperatorRole[] = [];
  /**
   * Where the operator keeps its release key, and so its release records:
   * its --leader-election-namespace, the seed's with replicas, else the
   * default `default` (src/main.ts).
   */
  private readonly keyNamespace: string;
  /** The held Bundles (hold-back) by logical name, and their uids: never the model's, never watched. */
  private readonly heldUids = new Map<string, string>();
  private revoked: RbacRevocation | undefined;
  private readonly killedOnPurpose = new WeakSet<OperatorProcess>();
  private stopped = false;
  /** Operator processes that exited on their own and were started again (rbac: as a Deployment's pod would be). */
  restarts = 0;

  constructor(
    readonly cluster: FuzzCluster,
    readonly namespace: string,
    readonly dims: SoftDeleteDimensions = NO_DIMENSIONS,
    readonly names?: Naming,
    /** The drift dimension's stream: each Bundle write's drift annotations and defaults are drawn from it. */
    private readonly driftRnd?: Random,
  ) {
    this.keyNamespace = dims.replicas ? namespace : 'default';
    const record = (o: Observation) => {
      // Real names back to the model's; anything else in the namespace (the anchor, leftovers, copies) is not the seed's.
      if (o.object.startsWith(COPY_PREFIX)) return;
      const object = this.logical(o.object);
      if (object !== undefined) this.observations.push({ ...o, object });
    };
    this.watches = [
      new IncarnationWatch(cluster.client, cluster.configMaps, namespace, record),
      new IncarnationWatch(cluster.client, cluster.gates, namespace, record),
    ];
    if (dims.crdVersions) {
      const suffix = namespace.replace(/[^a-z0-9]/g, '');
      const kind = `Vault${suffix}`;
      const plural = `vaults${suffix}`;
      const rt = customType(kind, plural, 'v1alpha1');
      this.versioned = { kind, plural, rt };
      this.watches.push(new IncarnationWatch(cluster.client, rt, namespace, record, new Map(), new Set(), true));
    }
  }

  real(logical: string): string {
    return this.names?.real(logical) ?? logical;
  }

  logical(real: string): string | undefined {
    return this.names ? this.names.logical(real) : real;
  }

  async start(): Promise<void> {
    await this.cluster.client.create(this.cluster.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace } });
    if (this.versioned) {
      await installCrd(this.cluster.client, versionedCrd(this.versioned.kind, this.versioned.plural, 'v1alpha1'));
      await this.servedAt(this.versioned.rt, true);
    }
    if (this.dims.handEdits) {
      const secrets: ResourceType = { ...this.cluster.configMaps, kind: 'Secret', plural: 'secrets' };
      const anchor = await this.cluster.client.create(secrets, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: ANCHOR, namespace: this.namespace },
      });
      this.anchorUid = anchor.metadata.uid;
    }
    for (const w of this.watches) await w.start();
    if (this.dims.rbac) await this.grantRbac();
  }

  /** The operator's ServiceAccount as a user name (rbac). */
  get operatorUser(): string {
    return `system:serviceaccount:${this.namespace}:${SERVICE_ACCOUNT}`;
  }

  /** The fuzzer's own kinds the operator gets object rights on: Gates, and the versioned CRD's. */
  private fuzzKinds(): string[] {
    return ['gates', ...(this.versioned ? [this.versioned.plural] : [])];
  }

  /** Creates the ServiceAccount and every role and binding the chart would (operatorRoles); waits until they are in force. */
  private async grantRbac(): Promise<void> {
    const sa: ResourceType = { ...this.cluster.configMaps, kind: 'ServiceAccount', plural: 'serviceaccounts' };
    await this.cluster.client.apply(
      sa,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SERVICE_ACCOUNT, namespace: this.namespace } },
      { fieldManager: RBAC_MANAGER, force: true },
    );
    const discovery = new Discovery(this.cluster.client, 0);
    await discovery.refresh();
    const groups = [
      ...new Set(
        discovery
          .resources()
          .map((r) => r.group)
          .filter((g) => g !== ''),
      ),
    ].sort();
    this.roles = operatorRoles(this.namespace, groups, this.fuzzKinds(), this.keyNamespace, this.dims.replicas !== undefined);
    for (const role of this.roles) await this.applyRole(role, role.rules);
    for (const role of this.roles) await this.applyBinding(role);
    await this.untilAllowed(true);
  }

  private async applyRole(role: OperatorRole, rules: PolicyRule[]): Promise<void> {
    const rt = role.namespace ? ROLES.namespaced : ROLES.cluster;
    await this.cluster.client.apply(
      rt,
      {
        apiVersion: rt.apiVersion,
        kind: rt.kind,
        metadata: { name: role.name, ...(role.namespace ? { namespace: role.namespace } : {}) },
        rules,
      },
      { fieldManager: RBAC_MANAGER, force: true },
    );
  }

  private async applyBinding(role: OperatorRole): Promise<void> {
    const rt = role.namespace ? BINDINGS.namespaced : BINDINGS.cluster;
    await this.cluster.client.apply(
      rt,
      {
        apiVersion: rt.apiVersion,
        kind: rt.kind,
        metadata: { name: role.name, ...(role.namespace ? { namespace: role.namespace } : {}) },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: role.namespace ? 'Role' : 'ClusterRole', name: role.name },
        subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: this.namespace }],
      },
      { fieldManager: RBAC_MANAGER, force: true },
    );
  }

  private async deleteRbacObject(rt: ResourceType, role: OperatorRole): Promise<void> {
    const live = await this.cluster.client.tryGet(rt, role.namespace, role.name);
    if (live) await this.cluster.client.delete(rt, role.namespace, role.name, { uid: live.metadata.uid });
  }

  /** Whether the API server's authorizer lets the operator's ServiceAccount do this now (a SubjectAccessReview). */
  private async allowed(verb: string, group: string, resource: string, namespace = this.namespace): Promise<boolean> {
    const [plural = resource, subresource] = resource.split('/');
    const review = (await this.cluster.client.raw('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: this.operatorUser,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${this.namespace}`, 'system:authenticated'],
        resourceAttributes: { namespace, verb, group, resource: plural, ...(subresource ? { subresource } : {}) },
      },
    })) as { status?: { allowed?: unknown } };
    return review.status?.allowed === true;
  }

  /** Waits until the authorizer answers as the roles now say: the revoked verbs refused (or, whole, every probe allowed). */
  private async untilAllowed(whole: boolean): Promise<void> {
    const revoked = this.revoked;
    // The records' own Role is revoked only where they are kept apart from the seed's namespace (its Role grants ConfigMaps too).
    const records = { verb: 'get', group: '', resource: 'configmaps', namespace: this.keyNamespace };
    const recordsApart = this.keyNamespace !== this.namespace;
    const probes: { verb: string; group: string; resource: string; namespace?: string; want: boolean }[] =
      whole || revoked === undefined
        ? [
            { verb: 'list', group: 'smith.atlassian.com', resource: 'bundles', want: true },
            { verb: 'delete', group: '', resource: 'configmaps', want: true },
            { verb: 'list', group: GATE_GROUP, resource: 'gates', want: true },
            { verb: 'patch', group: 'smith.atlassian.com', resource: 'bundles/status', want: true },
            { ...records, want: true },
          ]
        : revoked === 'binding'
          ? [{ verb: 'list', group: 'smith.atlassian.com', resource: 'bundles', want: false }]
          : revoked === 'admission-configmaps'
            ? []
            : revoked === 'records'
              ? recordsApart
                ? [{ ...records, want: false }]
                : []
              : revokedRights(revoked, this.fuzzKinds()).flatMap((r) =>
                  r.verbs.map((verb) => ({ verb, group: r.group, resource: r.resource, want: false })),
                );
    const deadline = Date.now() + 30_000;
    for (const p of probes) {
      while ((await this.allowed(p.verb, p.group, p.resource, p.namespace)) !== p.want) {
        if (Date.now() > deadline)
          throw new Error(`RBAC: ${p.verb} ${p.group}/${p.resource} still ${p.want ? 'refused' : 'allowed'} 30 s after the change`);
        await sleep(50);
      }
    }
  }

  /** Takes part of the operator's rights away; resolves once the authorizer refuses them. Returns when it was sent and in force. */
  async revokeRbac(what: RbacRevocation): Promise<BundleWrite> {
    const sentAt = Date.now();
    this.revoked = what;
    if (what === 'binding') {
      for (const role of this.roles) await this.deleteRbacObject(role.namespace ? BINDINGS.namespaced : BINDINGS.cluster, role);
    } else if (what === 'admission-configmaps') {
      await this.refuseByAdmission(true);
      return { sentAt, ackedAt: Date.now() };
    } else if (what === 'records') {
      // The records' Role loses its ConfigMaps, and the collector's ClusterRole too (it reads them in every namespace).
      const records = [{ group: '', resource: 'configmaps', verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'] }];
      for (const role of this.roles.filter((r) => r.name.endsWith('-release-key') || r.name.endsWith('-gc')))
        await this.applyRole(role, withoutRights(role.rules, records, this.fuzzKinds()));
    } else {
      const revoked = revokedRights(what, this.fuzzKinds());
      for (const role of this.roles) {
        const rules = withoutRights(role.rules, revoked, this.fuzzKinds());
        if (JSON.stringify(rules) !== JSON.stringify(role.rules)) await this.applyRole(role, rules);
      }
    }
    await this.untilAllowed(false);
    return { sentAt, ackedAt: Date.now() };
  }

  /**
   * Installs (or removes) a ValidatingAdmissionPolicy and its binding that
   * refuse every write of a ConfigMap of the seed's namespace by the
   * operator's ServiceAccount with 422 Invalid, as a validating webhook of
   * another team would; waits until a dry-run create as the operator is
   * refused (or allowed again).
   */
  private async refuseByAdmission(refuse: boolean): Promise<void> {
    const name = `fuzz-refuse-${this.namespace}`;
    if (refuse) {
      await this.cluster.client.apply(
        ADMISSION.policy,
        {
          apiVersion: ADMISSION.policy.apiVersion,
          kind: 'ValidatingAdmissionPolicy',
          metadata: { name },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': this.namespace } },
              resourceRules: [
                { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] },
              ],
            },
            validations: [
              {
                expression: `request.userInfo.username != '${this.operatorUser}'`,
                message: 'refused by the fuzzer: writes of configmaps are closed for now',
                reason: 'Invalid',
              },
            ],
          },
        },
        { fieldManager: RBAC_MANAGER, force: true },
      );
      await this.cluster.client.apply(
        ADMISSION.binding,
        {
          apiVersion: ADMISSION.binding.apiVersion,
          kind: 'ValidatingAdmissionPolicyBinding',
          metadata: { name },
          spec: { policyName: name, validationActions: ['Deny'] },
        },
        { fieldManager: RBAC_MANAGER, force: true },
      );
    } else {
      for (const rt of [ADMISSION.binding, ADMISSION.policy]) {
        const live = await this.cluster.client.tryGet(rt, undefined, name);
        if (live) await this.cluster.client.delete(rt, undefined, name, { uid: live.metadata.uid });
      }
    }
    const asOperator = this.cluster.client.impersonating({ user: this.operatorUser });
    const deadline = Date.now() + 30_000;
    for (;;) {
      let refused: boolean;
      try {
        await asOperator.create(
          this.cluster.configMaps,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'admission-probe', namespace: this.namespace } },
          { dryRun: true },
        );
        refused = false;
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.code !== 422) throw err;
        refused = true;
      }
      if (refused === refuse) return;
      if (Date.now() > deadline) throw new Error(`admission: writes of configmaps still ${refuse ? 'allowed' : 'refused'} after 30 s`);
      await sleep(100);
    }
  }

  /** Whether a revocation is in force. */
  get rbacRevoked(): RbacRevocation | undefined {
    return this.revoked;
  }

  /** Grants every right back; resolves once the authorizer allows them. */
  async restoreRbac(): Promise<BundleWrite> {
    const sentAt = Date.now();
    const was = this.revoked;
    this.revoked = undefined;
    if (was === 'admission-configmaps') {
      await this.refuseByAdmission(false);
      return { sentAt, ackedAt: Date.now() };
    }
    if (was === 'binding') for (const role of this.roles) await this.applyBinding(role);
    else for (const role of this.roles) await this.applyRole(role, role.rules);
    await this.untilAllowed(true);
    return { sentAt, ackedAt: Date.now() };
  }

  /** Clears these fields of the Bundle's status as another status writer would; false when the Bundle is gone. */
  async wipeRecord(bundle: string, fields: readonly string[]): Promise<boolean> {
    try {
      await this.cluster.client.patch(
        BUNDLE_RESOURCE_TYPE,
        this.namespace,
        this.real(bundle),
        { status: Object.fromEntries(fields.map((f) => [f, null])) },
        'merge',
        { subresource: 'status', fieldManager: HAND_MANAGER },
      );
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return false;
      throw err;
    }
  }

  /** The Bundle's conditions that are not True, as `Type=Reason`, for the record of a held deletion. */
  async bundleTrouble(bundle: string): Promise<string> {
    const b = await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, this.real(bundle));
    const conditions = (b?.status as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)?.conditions ?? [];
    return conditions
      .filter((c) => (c.type === 'Ready' ? c.status !== 'True' : c.status === 'True'))
      .map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`)
      .join(' ');
  }

  /**
   * What holds a Bundle that should be gone: its finalizers, its trouble,
   * and each object that still names it as an owner (with its own
   * finalizers and deletion state), for a divergence's report.
   */
  async bundleHold(bundle: string): Promise<string> {
    const b = await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, this.real(bundle));
    if (!b) return 'gone';
    const uid = b.metadata.uid;
    const types = [
      this.cluster.configMaps,
      this.cluster.gates,
      ...(this.versioned ? [customType(this.versioned.kind, this.versioned.plural, 'v1')] : []),
    ];
    const held: string[] = [];
    for (const rt of types) {
      const items = await this.cluster.client.list(rt, this.namespace, { metadataOnly: true }).then(
        (l) => l.items,
        (err: unknown) => {
          held.push(`${rt.kind}: cannot list (${err instanceof Error ? err.message : String(err)})`);
          return [];
        },
      );
      for (const o of items) {
        const ref = (o.metadata.ownerReferences ?? []).find((r) => r.uid === uid);
        if (!ref) continue;
        held.push(
          `${rt.kind} ${o.metadata.name} (controller ${String(ref.controller ?? false)}, blocking ${String(ref.blockOwnerDeletion ?? false)}, finalizers [${(o.metadata.finalizers ?? []).join(',')}]${o.metadata.deletionTimestamp ? ', being deleted' : ''})`,
        );
      }
    }
    const trouble = await this.bundleTrouble(bundle);
    return `finalizers [${(b.metadata.finalizers ?? []).join(',')}]${trouble ? `, ${trouble}` : ''}; dependents: ${held.length > 0 ? held.join('; ') : 'none'}`;
  }

  /** Waits until the version is served (or not) in the namespace. */
  private async servedAt(rt: ResourceType, served: boolean): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      let ok: boolean;
      try {
        await this.cluster.client.list(rt, this.namespace, { metadataOnly: true });
        ok = true;
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.code !== 404) throw err;
        ok = false;
      }
      if (ok === served) return;
      if (Date.now() > deadline)
        throw new Error(`${rt.apiVersion} ${rt.kind} still ${served ? 'not ' : ''}served 30 s after the CRD change`);
      await sleep(100);
    }
  }

  /**
   * The versioned CRD gains v1 and moves its storage there (v1alpha1 still
   * served); the watch moves to v1.
   */
  async crdAddVersion(): Promise<void> {
    const v = this.versioned;
    if (!v) throw new Error('crdAddVersion without the crdVersions dimension');
    await this.cluster.client.apply(CRD_RESOURCE, versionedCrd(v.kind, v.plural, 'v1'), { fieldManager: 'fuzz-admin', force: true });
    const v1 = customType(v.kind, v.plural, 'v1');
    await this.servedAt(v1, true);
    v.rt = v1;
    const old = this.watches.findIndex((w) => w.rt.kind === v.kind);
    const watch = this.watches[old];
    if (watch) {
      const next = watch.successor(v1);
      await next.start();
      await watch.stop();
      this.watches[old] = next;
    }
  }

  /** The versioned CRD stops serving v1alpha1; resolves once the server answers 404 there. Returns when the change was sent and answered. */
  async crdUnserveOld(): Promise<BundleWrite> {
    const v = this.versioned;
    if (!v) throw new Error('crdUnserveOld without the crdVersions dimension');
    const sentAt = Date.now();
    await this.cluster.client.apply(CRD_RESOURCE, versionedCrd(v.kind, v.plural, 'unserved'), { fieldManager: 'fuzz-admin', force: true });
    const ackedAt = Date.now();
    await this.servedAt(customType(v.kind, v.plural, 'v1alpha1'), false);
    return { sentAt, ackedAt };
  }

  /** The resource type of a logical object as it is read now. */
  private typeOf(object: string): ResourceType {
    if (object.startsWith('gate-')) return this.cluster.gates;
    if (isVersioned(object) && this.versioned) return this.versioned.rt;
    return this.cluster.configMaps;
  }

  /**
   * A hand edit by another field manager on the live object; false when
   * it does not exist (or the edit changed nothing).
   */
  async handEdit(object: string, edit: HandEdit): Promise<boolean> {
    if (edit === 'copy-object') return await this.personCopy(object);
    const rt = this.typeOf(object);
    const name = this.real(object);
    for (let attempt = 0; attempt < 10; attempt++) {
      const live = await this.cluster.client.tryGet(rt, this.namespace, name, { metadataOnly: true });
      if (!live || live.metadata.deletionTimestamp !== undefined) return false;
      const rv = live.metadata.resourceVersion;
      // Every hand edit reads the object: what it reads is a copy a later replay-annotations may write back.
      const historyKey = `${object}/${live.metadata.uid ?? ''}`;
      if (attempt === 0)
        this.replayHistory.set(historyKey, [
          ...(this.replayHistory.get(historyKey) ?? []),
          deletionAnnotationsOf(live.metadata.annotations),
        ]);
      let meta: Record<string, unknown>;
      switch (edit) {
        case 'unlabel-managed':
          if (live.metadata.labels?.[Labels.managed] === undefined) return false;
          meta = { labels: { [Labels.managed]: null } };
          break;
        case 'label-managed-false':
          meta = { labels: { [Labels.managed]: 'false' } };
          break;
        case 'label-other':
          meta = { labels: { 'team.example.com/owner': `team-${attempt}` } };
          break;
        case 'annotate-other':
          meta = { annotations: { 'example.com/last-edited-by': 'a-human' } };
          break;
        case 'drop-owner-refs':
          if ((live.metadata.ownerReferences ?? []).length === 0) return false;
          meta = { ownerReferences: null };
          break;
        case 'add-foreign-owner':
          if (!this.anchorUid) return false;
          meta = {
            ownerReferences: [
              ...(live.metadata.ownerReferences ?? []),
              { apiVersion: 'v1', kind: 'Secret', name: ANCHOR, uid: this.anchorUid },
            ],
          };
          break;
        case 'legacy-release': {
          // The release as an earlier version (before release records) would have left it: the same facts under a v2 proof,
          // and no record. What every release outstanding at an upgrade is; the sweep records it as it stands (red teams
          // 32 and 33). The record goes first (the operator's namespace: the fuzzer's admin rights stand in for the upgrade).
          const facts = releaseFactsOf(live.metadata);
          const proof = live.metadata.annotations?.[Annotations.releaseProof];
          if (facts === undefined || proof === undefined || !proof.startsWith('v3:')) return false;
          const at = { namespace: this.keyNamespace, name: DEFAULT_RELEASE_KEY_SECRET };
          const key = await loadReleaseKey(this.cluster.client, at);
          const recordName = `${DEFAULT_RELEASE_KEY_SECRET}-${live.metadata.uid ?? ''}`;
          const record = await this.cluster.client.tryGet(this.cluster.configMaps, this.keyNamespace, recordName);
          // Only a release whose record names it signed: a cancelled or ended one is over, and deleting its record would
          // revive it by the fuzzer's own admin edit (the documented trust in the operator's namespace).
          const data = (record as { data?: Record<string, string> } | undefined)?.data;
          if (record !== undefined && (data?.['state'] !== 'signed' || data['proof'] !== proof)) return false;
          if (record !== undefined)
            await this.cluster.client.delete(this.cluster.configMaps, this.keyNamespace, recordName, { uid: record.metadata.uid });
          meta = { annotations: { [Annotations.releaseProof]: signRelease(key, facts, 'v2') } };
          break;
        }
        case 'strip-release-proof':
          // A released object's proof taken off (while a Bundle lists it, say): the listing must still cancel the recorded
          // signing, so a replay of the proof later does not bring the old stamp back (red team 32).
          if (live.metadata.annotations?.[Annotations.releaseProof] === undefined) return false;
          meta = { annotations: { [Annotations.releaseProof]: null } };
          break;
        case 'blank-claim-record':
          // Only where a claim is recorded: the edit that once turned the claim into the user's reference (red team 16).
          if (live.metadata.annotations?.[Annotations.claimReferences] === undefined) return false;
          meta = { annotations: { [Annotations.claimReferences]: '' } };
          break;
        case 'blank-dependency-record':
          // Only where the operator recorded a dependency reference (red team 21: the reference must stay the operator's).
          if (live.metadata.annotations?.[Annotations.dependencyReferences] === undefined) return false;
          meta = { annotations: { [Annotations.dependencyReferences]: '' } };
          break;
        case 'relabel-part-of':
          // Another tool's ApplySet claims the object (red team 20): membership is never evidence of anything.
          meta = { labels: { [ApplySetLabels.partOf]: 'applyset-another-tool-v1' } };
          break;
        case 'erase-traces':
          // What tells an orphan deletion from a background one once the orphan finalizer is gone (red team 26): the
          // orphan reading recorded on the Bundle must hold without them.
          meta = {
            labels: { [ApplySetLabels.partOf]: null },
            annotations: { [Annotations.appliedHash]: null, [Annotations.dependencyReferences]: null },
          };
          break;
        case 'reset-managed-fields':
          // What the API server documents for stripping managedFields: the next apply starts the field ownership over.
          meta = { managedFields: [{}] };
          break;
        case 'replay-annotations': {
          // Puts back the earliest copy of this incarnation (every hand edit saved what it read) that differs; on a released
          // object too, where an earlier release's stamp and proof must not end the current countdown (red team 27: the
          // sweep counts a stamp only when the release record names it).
          const now = deletionAnnotationsOf(live.metadata.annotations);
          const history = this.replayHistory.get(historyKey) ?? [];
          const earlier = history.find((h) => JSON.stringify(h) !== JSON.stringify(now));
          if (earlier === undefined) return false;
          meta = { annotations: Object.fromEntries(REPLAYED_ANNOTATIONS.map((k) => [k, earlier[k] ?? null])) };
          break;
        }
      }
      try {
        await this.cluster.client.patch(rt, this.namespace, name, { metadata: { resourceVersion: rv, ...meta } }, 'merge', {
          fieldManager: HAND_MANAGER,
        });
        return true;
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 409) continue;
        if (err instanceof KubeApiError && err.code === 404) return false;
        throw err;
      }
    }
    return false;
  }

  /**
   * A person's copy of the live ConfigMap (`kubectl get -o yaml`, renamed,
   * `kubectl apply --server-side`): labels, annotations and data come along;
   * every other copy keeps the references to its sibling ConfigMaps (a copy
   * meant to go with its sibling: red team 23), the rest keep none. It
   * is the person's: nothing may delete it but kube-controller-manager once
   * every owner it names is gone, and nothing may take its references.
   */
  private async personCopy(object: string): Promise<boolean> {
    const live = await this.cluster.client.tryGet(this.typeOf(object), this.namespace, this.real(object));
    if (!live || live.metadata.deletionTimestamp !== undefined || live.kind !== 'ConfigMap') return false;
    const name = `${COPY_PREFIX}${this.copies.size}`;
    const references = this.copies.size % 2 === 1 ? (live.metadata.ownerReferences ?? []).filter((r) => r.kind === 'ConfigMap') : [];
    const copy = await this.cluster.client.apply(
      this.cluster.configMaps,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name,
          namespace: this.namespace,
          ...(live.metadata.labels ? { labels: live.metadata.labels } : {}),
          ...(live.metadata.annotations ? { annotations: live.metadata.annotations } : {}),
          ...(references.length > 0 ? { ownerReferences: references } : {}),
        },
        ...(live['data'] !== undefined ? { data: live['data'] } : {}),
      },
      { fieldManager: 'kubectl', force: true },
    );
    this.copies.set(name, { of: object, uid: copy.metadata.uid ?? '', references });
    return true;
  }

  /** A watch that failed makes the seed unjudgeable: the caller reports it. */
  watchFailure(): unknown {
    return this.watches.find((w) => w.failure !== undefined)?.failure;
  }

  startOperator(): number {
    this.operators = [];
    for (let i = 0; i < (this.dims.replicas ? 2 : 1); i++) this.startReplica();
    return Date.now();
  }

  private startReplica(): void {
    const budget = this.dims.budget ? ['--qps', String(this.dims.budget.qps), '--burst', String(this.dims.budget.burst)] : [];
    const election = this.dims.replicas
      ? [
          '--leader-elect',
          '--leader-election-namespace',
          this.namespace,
          '--lease-duration-seconds',
          String(this.dims.replicas.leaseSeconds),
        ]
      : [];
    // The log file is named by the millisecond: never two in one.
    const last = this.lastStart;
    while (Date.now() <= last) {
      // spin (at most a millisecond)
    }
    this.lastStart = Date.now();
    const identity = this.dims.rbac ? ['--impersonate', this.operatorUser] : [];
    // SOFTDELETE_FUZZ_LOG_LEVEL=debug: one line per pass in the operator logs (kept with SOFTDELETE_FUZZ_KEEP_LOGS=1).
    const logLevel = process.env.SOFTDELETE_FUZZ_LOG_LEVEL ? ['--log-level', process.env.SOFTDELETE_FUZZ_LOG_LEVEL] : [];
    const op = startOperatorProcess(
      ['--namespace', this.namespace, '--gc=cluster', ...budget, ...election, ...identity, ...logLevel],
      {},
      this.cluster.kubeconfig,
    );
    this.operators.push(op);
    this.logs.push(op.logFile);
    // Without its rights the operator may exit (no release key after a minute, a Lease it cannot renew): started again
    // a second later, as a Deployment's pod would be.
    if (this.dims.rbac) {
      op.child.on('exit', () => {
        if (this.killedOnPurpose.has(op) || this.stopped) return;
        this.operators = this.operators.filter((o) => o !== op);
        this.restarts++;
        setTimeout(() => {
          if (!this.stopped) this.startReplica();
        }, 1_000);
      });
    }
  }

  private lastStart = 0;

  async killOperator(): Promise<void> {
    for (const op of this.operators) {
      this.killedOnPurpose.add(op);
      await op.kill();
    }
    this.operators = [];
  }

  /** The replica that holds the Lease now, if one does. */
  private async leader(): Promise<OperatorProcess | undefined> {
    const leases: ResourceType = {
      group: 'coordination.k8s.io',
      version: 'v1',
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      plural: 'leases',
      namespaced: true,
      verbs: ['get'],
    };
    const lease = await this.cluster.client.tryGet(leases, this.namespace, 'bundlesmith-leader');
    const holder = (lease?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    return this.operators.find((op) => holder !== undefined && holder.endsWith(`-${op.child.pid}`));
  }

  /** SIGSTOPs the leader (a frozen VM); returns it, or undefined when no replica holds the Lease. */
  async pauseLeader(): Promise<OperatorProcess | undefined> {
    const leader = await this.leader();
    leader?.child.kill('SIGSTOP');
    return leader;
  }

  /** SIGCONTs a paused replica, lets it run `runMs`, then SIGKILLs it and starts a new standby in its place. */
  async resumeThenKill(paused: OperatorProcess, runMs: number): Promise<void> {
    paused.child.kill('SIGCONT');
    await sleep(runMs);
    this.killedOnPurpose.add(paused);
    await paused.kill();
    this.operators = this.operators.filter((op) => op !== paused);
    this.startReplica();
  }

  operatorLogs(): string[] {
    return [...this.logs];
  }

  /** Stops everything; keeps the operator logs only when asked (a failing seed). */
  async stop(keepLogs: boolean): Promise<void> {
    this.stopped = true;
    await this.killOperator();
    // A held Bundle left over (a step that threw): a `nobody` one's finalizer would never finish.
    for (const holder of [...this.heldUids.keys()]) await this.freeHeld(holder).catch(() => undefined);
    // The seed's roles and bindings (rbac): some are cluster-wide, one sits beside the release key.
    for (const role of this.roles) {
      await this.deleteRbacObject(role.namespace ? BINDINGS.namespaced : BINDINGS.cluster, role).catch(() => undefined);
      await this.deleteRbacObject(role.namespace ? ROLES.namespaced : ROLES.cluster, role).catch(() => undefined);
    }
    for (const w of this.watches) await w.stop();
    // SOFTDELETE_FUZZ_KEEP_LOGS=1 keeps them for every seed (to read what the operator was refused, say).
    if (!keepLogs && process.env.SOFTDELETE_FUZZ_KEEP_LOGS !== '1') for (const log of this.logs) rmSync(log, { force: true });
    // The CRD is the seed's own: its objects go with it.
    if (this.versioned) {
      const name = `${this.versioned.plural}.${GATE_GROUP}`;
      const crd = await this.cluster.client.tryGet(CRD_RESOURCE, undefined, name).catch(() => undefined);
      if (crd) await this.cluster.client.delete(CRD_RESOURCE, undefined, name, { uid: crd.metadata.uid }).catch(() => undefined);
    }
  }

  bundleManifest(logicalBundle: string, entries: readonly Entry[], spoil: Spoil, defaults: Defaults = {}): Record<string, unknown> {
    const bundle = this.real(logicalBundle);
    const resources: Record<string, unknown>[] = entries.map((e) => {
      if (e.kind === 'Gate')
        return {
          name: 'gate',
          spec: { object: { apiVersion: GATE_API_VERSION, kind: 'Gate', metadata: { name: this.real(e.object) }, spec: { bundle } } },
        };
      const annotations = {
        ...(e.delay.kind === 'none' ? {} : { [Annotations.deletionDelay]: e.delay.text }),
        ...RULE_ANNOTATIONS[e.rule ?? 'Delete'],
        ...(this.driftRnd && !isBulk(e.object) ? drawDriftAnnotations(this.driftRnd) : {}),
      };
      const metadata = { name: this.real(e.object), ...(Object.keys(annotations).length > 0 ? { annotations } : {}) };
      const v = this.versioned;
      const object =
        isVersioned(e.object) && v
          ? { apiVersion: `${GATE_GROUP}/${e.legacy === true ? 'v1alpha1' : 'v1'}`, kind: v.kind, metadata, spec: { bundle } }
          : { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { bundle } };
      return {
        // The resource name stays the logical one: it is the spec's, not the object's.
        name: e.object,
        ...(e.gated ? { references: [{ resource: 'gate' }] } : {}),
        spec: { object },
      };
    });
    // A reference to a resource the Bundle does not have: the whole spec is invalid.
    if (spoil === 'invalid')
      resources.push({
        name: 'broken',
        references: [{ resource: 'missing' }],
        spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `broken-${logicalBundle}` }, data: { bundle } } },
      });
    // A ConfigMap key the apiserver rejects (422): the apply fails, so the pass prunes nothing.
    if (spoil === 'failing')
      resources.push({
        name: 'poison',
        spec: {
          object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `poison-${logicalBundle}` }, data: { 'not a key!': bundle } },
        },
      });
    const deletionDefaults = {
      ...(defaults.delay?.kind === 'valid' ? { deletionDelay: defaults.delay.text } : {}),
      ...(defaults.rule === 'Orphan' || defaults.rule === 'Approve' ? { deletionPolicy: defaults.rule } : {}),
      ...(defaults.rule === 'BundleReady' ? { deleteWhen: 'BundleReady' } : {}),
    };
    const driftDefaults = this.driftRnd ? drawDriftDefaults(this.driftRnd) : undefined;
    return {
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name: bundle, namespace: this.namespace },
      spec: {
        resources,
        ...(Object.keys(deletionDefaults).length > 0 ? { deletionDefaults } : {}),
        ...(driftDefaults ? { driftDefaults } : {}),
      },
    };
  }

  async applyBundle(bundle: string, entries: readonly Entry[], spoil: Spoil, defaults: Defaults): Promise<BundleWrite> {
    const sentAt = Date.now();
    const live = await this.cluster.client.apply(BUNDLE_RESOURCE_TYPE, this.bundleManifest(bundle, entries, spoil, defaults), {
      fieldManager: 'fuzz-user',
      force: true,
    });
    this.bundleUids.set(bundle, live.metadata.uid);
    return { sentAt, ackedAt: Date.now() };
  }

  /**
   * The live object as the hold-back step needs it: its uid and annotations
   * (saved for a later replay-annotations, as any hand edit's read is);
   * undefined when it is gone, being deleted or controlled by someone.
   */
  async releasedNow(object: string): Promise<{ uid: string; annotations: Record<string, string> } | undefined> {
    const live = await this.cluster.client.tryGet(this.typeOf(object), this.namespace, this.real(object));
    const uid = live?.metadata.uid;
    if (!live || uid === undefined || live.metadata.deletionTimestamp !== undefined) return undefined;
    if ((live.metadata.ownerReferences ?? []).some((r) => r.controller === true)) return undefined;
    const annotations = { ...(live.metadata.annotations ?? {}) };
    const historyKey = `${object}/${uid}`;
    this.replayHistory.set(historyKey, [...(this.replayHistory.get(historyKey) ?? []), deletionAnnotationsOf(annotations)]);
    return { uid, annotations };
  }

  /** The release record of the object with this uid (the operator's, in its key's namespace), or undefined. */
  async releaseRecord(uid: string): Promise<{ state: string; proof: string } | undefined> {
    const record = await this.cluster.client.tryGet(this.cluster.configMaps, this.keyNamespace, `${DEFAULT_RELEASE_KEY_SECRET}-${uid}`);
    const data = (record as { data?: Record<string, string> } | undefined)?.data;
    if (record === undefined || data === undefined) return undefined;
    return { state: data['state'] ?? '', proof: data['proof'] ?? '' };
  }

  /**
   * Applies a held Bundle (hold-back): it lists `object` with the rules it
   * carries now (`declared`), and never takes hold of it: it runs as the
   * ServiceAccount `nobody`, which does not exist, or the object waits on a
   * Deployment that never becomes Ready (no workload controllers; no node
   * matches it, its image does not exist). `unlisted`: the same Bundle
   * listing nothing. Not bundleManifest: that draws drift annotations.
   */
  async applyHeld(holder: string, object: string, declared: Record<string, string>, how: HoldHow, unlisted = false): Promise<BundleWrite> {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: this.real(object), ...(Object.keys(declared).length > 0 ? { annotations: declared } : {}) },
      data: { bundle: holder },
    };
    const app = { app: `${holder}-dep` };
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `${holder}-dep` },
      spec: {
        replicas: 1,
        selector: { matchLabels: app },
        template: {
          metadata: { labels: app },
          spec: { nodeSelector: { 'fuzz.bundlesmith.dev/none': 'true' }, containers: [{ name: 'c', image: 'registry.invalid/never:0' }] },
        },
      },
    };
    const resources = unlisted
      ? []
      : how === 'nobody'
        ? [{ name: object, spec: { object: cm } }]
        : [
            { name: 'held-dep', spec: { object: dep } },
            { name: object, references: [{ resource: 'held-dep' }], spec: { object: cm } },
          ];
    const sentAt = Date.now();
    const live = await this.cluster.client.apply(
      BUNDLE_RESOURCE_TYPE,
      {
        apiVersion: 'smith.atlassian.com/v1',
        kind: 'Bundle',
        metadata: { name: holder, namespace: this.namespace },
        spec: { ...(how === 'nobody' ? { serviceAccountName: 'nobody' } : {}), resources },
      },
      { fieldManager: 'fuzz-user', force: true },
    );
    this.heldUids.set(holder, live.metadata.uid);
    return { sentAt, ackedAt: Date.now() };
  }

  /** Deletes the held Bundle (background), or drops the object from its spec (`unlist`, with `nobody` only). */
  async dropHeld(holder: string, object: string, how: HoldHow, mode: 'delete' | 'unlist'): Promise<BundleWrite> {
    if (mode === 'unlist') return await this.applyHeld(holder, object, {}, how, true);
    const uid = this.heldUids.get(holder);
    if (!uid) throw new Error(`no uid known for held Bundle ${holder}`);
    const sentAt = Date.now();
    await this.cluster.client.delete(BUNDLE_RESOURCE_TYPE, this.namespace, holder, { uid, propagationPolicy: 'Background' });
    return { sentAt, ackedAt: Date.now() };
  }

  /** The uid of a held Bundle. */
  heldUid(holder: string): string | undefined {
    return this.heldUids.get(holder);
  }

  /** Whether the live object names the held Bundle as an owner (it took hold after all). */
  async heldTookHold(holder: string, object: string): Promise<boolean> {
    const uid = this.heldUids.get(holder);
    const live = await this.cluster.client.tryGet(this.typeOf(object), this.namespace, this.real(object));
    return uid !== undefined && (live?.metadata.ownerReferences ?? []).some((r) => r.uid === uid);
  }

  /** Whether the held Bundle is gone. */
  async heldGone(holder: string): Promise<boolean> {
    const live = await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, holder);
    return live === undefined || live.metadata.uid !== this.heldUids.get(holder);
  }

  /**
   * Takes the held Bundle's finalizers off by hand and deletes it (a
   * `nobody` Bundle's finalizer never finishes: it cannot list as nobody).
   * Only for one that never held anything. Gone already is fine.
   */
  async freeHeld(holder: string): Promise<void> {
    const uid = this.heldUids.get(holder);
    this.heldUids.delete(holder);
    if (!uid) return;
    const live = await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, holder);
    if (!live || live.metadata.uid !== uid) return;
    try {
      // Deleted first: once it is being deleted no finalizer can be added again, so the one taken off stays off.
      if (live.metadata.deletionTimestamp === undefined)
        await this.cluster.client.delete(BUNDLE_RESOURCE_TYPE, this.namespace, holder, { uid, propagationPolicy: 'Background' });
      await this.cluster.client.patch(BUNDLE_RESOURCE_TYPE, this.namespace, holder, { metadata: { uid, finalizers: null } }, 'merge', {
        fieldManager: HAND_MANAGER,
      });
    } catch (err) {
      // Gone already, or another incarnation by now.
      if (err instanceof KubeApiError && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
  }

  /** Background delete with a UID precondition; resolves once the request is answered. */
  async deleteBundle(bundle: string, propagation: Propagation): Promise<BundleWrite> {
    const uid = this.bundleUids.get(bundle);
    if (!uid) throw new Error(`no uid known for Bundle ${bundle}`);
    const sentAt = Date.now();
    await this.cluster.client.delete(BUNDLE_RESOURCE_TYPE, this.namespace, this.real(bundle), {
      uid,
      propagationPolicy: POLICY[propagation],
    });
    return { sentAt, ackedAt: Date.now() };
  }

  /** The UID of the Bundle's incarnation last applied. */
  bundleUid(bundle: string): string | undefined {
    return this.bundleUids.get(bundle);
  }

  async bundleGone(bundle: string): Promise<boolean> {
    return (await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, this.real(bundle))) === undefined;
  }

  /** Whether the operator has written status for the Bundle's current generation. */
  async bundleObserved(bundle: string): Promise<boolean> {
    const b = await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, this.real(bundle));
    if (!b) return false;
    return (b.status as { observedGeneration?: number } | undefined)?.observedGeneration === b.metadata.generation;
  }

  /** The live object of a logical name (a custom resource at the version served now; `kind` is the model's). */
  async getObject(kind: 'ConfigMap' | 'Gate', name: string): Promise<KubeObject | undefined> {
    return await this.cluster.client.tryGet(kind === 'Gate' ? this.cluster.gates : this.typeOf(name), this.namespace, this.real(name));
  }

  /**
   * Writes smith.atlassian.com/deletionApproved naming `time` on the live
   * ConfigMap, as a user's `kubectl annotate` would; false when it does not exist.
   */
  async approve(object: string, time: number): Promise<boolean> {
    try {
      await this.cluster.client.patch(
        this.typeOf(object),
        this.namespace,
        this.real(object),
        { metadata: { annotations: { [Annotations.deletionApproved]: formatRfc3339(time) } } },
        'merge',
      );
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return false;
      throw err;
    }
  }

  /** Opens or closes a Gate through its status subresource; false when it does not exist. */
  async setGate(name: string, open: boolean): Promise<boolean> {
    try {
      await this.cluster.client.patch(
        this.cluster.gates,
        this.namespace,
        this.real(name),
        { status: { phase: open ? GATE_OPEN : 'Closed' } },
        'merge',
        { subresource: 'status' },
      );
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return false;
      throw err;
    }
  }
}

/** A namespaced custom resource type of the fuzzer's group at `version`. */
function customType(kind: string, plural: string, version: string): ResourceType {
  return {
    group: GATE_GROUP,
    version,
    apiVersion: `${GATE_GROUP}/${version}`,
    kind,
    plural,
    namespaced: true,
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  };
}

/**
 * The seed's versioned CRD at each stage of the upgrade: v1alpha1 only;
 * v1 added and made the storage version (v1alpha1 still served); v1alpha1
 * no longer served (kept in the list: objects may still be stored at it).
 */
function versionedCrd(kind: string, plural: string, stage: 'v1alpha1' | 'v1' | 'unserved'): Record<string, unknown> {
  const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  const versions =
    stage === 'v1alpha1'
      ? [{ name: 'v1alpha1', served: true, storage: true, schema }]
      : [
          { name: 'v1alpha1', served: stage === 'v1', storage: false, schema },
          { name: 'v1', served: true, storage: true, schema },
        ];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GATE_GROUP}` },
    spec: {
      group: GATE_GROUP,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions,
    },
  };
}
