/**
 * The real side of the soft-delete fuzzer: a control plane (ours or the one
 * given), the Gate CRD, and per seed a namespace, an operator process (the
 * real binary, SIGKILLed at random) and a watch that records when each
 * object incarnation appears and goes.
 */
import { rmSync } from 'node:fs';
import { startBenchCluster, type BenchCluster } from '../../../bench/cluster.js';
import { applyCrd } from '../../../hack/crd-install.js';
import { Annotations } from '../../../src/api/names.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';
import { BUNDLE_RESOURCE_TYPE } from '../../../src/controllers/bundle/bundle-resource.js';
import { KubeClient, loadKubeConfig } from '../../../src/kube/client.js';
import { installCrd } from '../../../src/kube/crds.js';
import { Discovery } from '../../../src/kube/discovery.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { KubeObject, ResourceType } from '../../../src/kube/types.js';
import { startOperatorProcess, type OperatorProcess } from '../../integration/operator.js';
import type { Defaults, Entry, Propagation, Rule, Spoil } from './model.js';

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

const POLICY: Record<Propagation, 'Background' | 'Foreground' | 'Orphan'> = { background: 'Background', foreground: 'Foreground', orphan: 'Orphan' };

export const GATE_GROUP = 'fuzz.bundlesmith.dev';
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
    versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
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
  private readonly seen = new Map<string, string>();
  private readonly gone = new Set<string>();
  failure: unknown;

  constructor(
    private readonly client: KubeClient,
    private readonly rt: ResourceType,
    private readonly namespace: string,
    private readonly record: (o: Observation) => void,
  ) {}

  async start(): Promise<void> {
    const list = await this.client.list(this.rt, this.namespace, { metadataOnly: true });
    for (const item of list.items) this.onObject('ADDED', item);
    let rv = list.resourceVersion;
    this.done = (async () => {
      while (!this.abort.signal.aborted) {
        try {
          await this.client.watch(this.rt, this.namespace, rv, { metadataOnly: true, timeoutSeconds: 300, signal: this.abort.signal }, (event) => {
            rv = event.object.metadata.resourceVersion || rv;
            if (event.type !== 'BOOKMARK') this.onObject(event.type, event.object);
          });
        } catch (err) {
          if (this.abort.signal.aborted) return;
          // A 410 would mean events were lost: the seed cannot be judged.
          this.failure = err instanceof KubeApiError && err.code === 410 ? new Error(`the ${this.rt.plural} watch expired: deletions may have been missed`) : err;
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
  private operator: OperatorProcess | undefined;
  private readonly logs: string[] = [];
  private readonly watches: IncarnationWatch[];
  private readonly bundleUids = new Map<string, string>();

  constructor(
    readonly cluster: FuzzCluster,
    readonly namespace: string,
  ) {
    const record = (o: Observation) => this.observations.push(o);
    this.watches = [new IncarnationWatch(cluster.client, cluster.configMaps, namespace, record), new IncarnationWatch(cluster.client, cluster.gates, namespace, record)];
  }

  async start(): Promise<void> {
    await this.cluster.client.create(this.cluster.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace } });
    for (const w of this.watches) await w.start();
  }

  /** A watch that failed makes the seed unjudgeable: the caller reports it. */
  watchFailure(): unknown {
    return this.watches.find((w) => w.failure !== undefined)?.failure;
  }

  startOperator(): number {
    this.operator = startOperatorProcess(['--namespace', this.namespace, '--gc=cluster'], {}, this.cluster.kubeconfig);
    this.logs.push(this.operator.logFile);
    return Date.now();
  }

  async killOperator(): Promise<void> {
    await this.operator?.kill();
    this.operator = undefined;
  }

  operatorLogs(): string[] {
    return [...this.logs];
  }

  /** Stops everything; keeps the operator logs only when asked (a failing seed). */
  async stop(keepLogs: boolean): Promise<void> {
    await this.killOperator();
    for (const w of this.watches) await w.stop();
    if (!keepLogs) for (const log of this.logs) rmSync(log, { force: true });
  }

  bundleManifest(bundle: string, entries: readonly Entry[], spoil: Spoil, defaults: Defaults = {}): Record<string, unknown> {
    const resources: Record<string, unknown>[] = entries.map((e) => {
      if (e.kind === 'Gate') return { name: 'gate', spec: { object: { apiVersion: GATE_API_VERSION, kind: 'Gate', metadata: { name: e.object }, spec: { bundle } } } };
      const annotations = { ...(e.delay.kind === 'none' ? {} : { [Annotations.deletionDelay]: e.delay.text }), ...RULE_ANNOTATIONS[e.rule ?? 'Delete'] };
      return {
        name: e.object,
        ...(e.gated ? { references: [{ resource: 'gate' }] } : {}),
        spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: e.object, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) }, data: { bundle } } },
      };
    });
    // A reference to a resource the Bundle does not have: the whole spec is invalid.
    if (spoil === 'invalid') resources.push({ name: 'broken', references: [{ resource: 'missing' }], spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `broken-${bundle}` }, data: { bundle } } } });
    // A ConfigMap key the apiserver rejects (422): the apply fails, so the pass prunes nothing.
    if (spoil === 'failing') resources.push({ name: 'poison', spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `poison-${bundle}` }, data: { 'not a key!': bundle } } } });
    const deletionDefaults = {
      ...(defaults.delay?.kind === 'valid' ? { deletionDelay: defaults.delay.text } : {}),
      ...(defaults.rule === 'Orphan' || defaults.rule === 'Approve' ? { deletionPolicy: defaults.rule } : {}),
      ...(defaults.rule === 'BundleReady' ? { deleteWhen: 'BundleReady' } : {}),
    };
    return { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name: bundle, namespace: this.namespace }, spec: { resources, ...(Object.keys(deletionDefaults).length > 0 ? { deletionDefaults } : {}) } };
  }

  async applyBundle(bundle: string, entries: readonly Entry[], spoil: Spoil, defaults: Defaults): Promise<BundleWrite> {
    const sentAt = Date.now();
    const live = await this.cluster.client.apply(BUNDLE_RESOURCE_TYPE, this.bundleManifest(bundle, entries, spoil, defaults), { fieldManager: 'fuzz-user', force: true });
    this.bundleUids.set(bundle, live.metadata.uid);
    return { sentAt, ackedAt: Date.now() };
  }

  /** Background delete with a UID precondition; resolves once the request is answered. */
  async deleteBundle(bundle: string, propagation: Propagation): Promise<BundleWrite> {
    const uid = this.bundleUids.get(bundle);
    if (!uid) throw new Error(`no uid known for Bundle ${bundle}`);
    const sentAt = Date.now();
    await this.cluster.client.delete(BUNDLE_RESOURCE_TYPE, this.namespace, bundle, { uid, propagationPolicy: POLICY[propagation] });
    return { sentAt, ackedAt: Date.now() };
  }

  async bundleGone(bundle: string): Promise<boolean> {
    return (await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, bundle)) === undefined;
  }

  /** Whether the operator has written status for the Bundle's current generation. */
  async bundleObserved(bundle: string): Promise<boolean> {
    const b = await this.cluster.client.tryGet(BUNDLE_RESOURCE_TYPE, this.namespace, bundle);
    if (!b) return false;
    return (b.status as { observedGeneration?: number } | undefined)?.observedGeneration === b.metadata.generation;
  }

  async getObject(kind: 'ConfigMap' | 'Gate', name: string): Promise<KubeObject | undefined> {
    return await this.cluster.client.tryGet(kind === 'Gate' ? this.cluster.gates : this.cluster.configMaps, this.namespace, name);
  }

  /**
   * Writes smith.atlassian.com/deletionApproved naming `time` on the live
   * ConfigMap, as a user's `kubectl annotate` would; false when it does not exist.
   */
  async approve(object: string, time: number): Promise<boolean> {
    try {
      await this.cluster.client.patch(this.cluster.configMaps, this.namespace, object, { metadata: { annotations: { [Annotations.deletionApproved]: formatRfc3339(time) } } }, 'merge');
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return false;
      throw err;
    }
  }

  /** Opens or closes a Gate through its status subresource; false when it does not exist. */
  async setGate(name: string, open: boolean): Promise<boolean> {
    try {
      await this.cluster.client.patch(this.cluster.gates, this.namespace, name, { status: { phase: open ? GATE_OPEN : 'Closed' } }, 'merge', { subresource: 'status' });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return false;
      throw err;
    }
  }
}
