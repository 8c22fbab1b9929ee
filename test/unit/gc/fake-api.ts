/**
 * An in-memory API server for engine tests: enough of GET, DELETE (with UID
 * and resourceVersion preconditions and the three propagation policies, as
 * finalizers) and JSON patch to run the collector's steps, recording every
 * call. Faults are injected per call (`failNext`), not by mocking modules.
 */
import type { DeleteOptions, EventInput, PatchType } from '../../../src/kube/client.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { KubeObject, ResourceType } from '../../../src/kube/types.js';
import type { GcApi } from '../../../src/controllers/gc/engine.js';
import type { ResourceResolver } from '../../../src/controllers/gc/owner-verifier.js';
import type { ObservedObject } from '../../../src/core/gc/graph-change.js';

const rt = (apiVersion: string, kind: string, plural: string, namespaced: boolean): ResourceType => {
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
  return { group, version, apiVersion, kind, plural, namespaced, verbs: ['get', 'list', 'watch', 'delete', 'patch'] };
};

export const RESOURCES: ResourceType[] = [
  rt('v1', 'ConfigMap', 'configmaps', true),
  rt('v1', 'Secret', 'secrets', true),
  rt('v1', 'Pod', 'pods', true),
  rt('apps/v1', 'Deployment', 'deployments', true),
  rt('apps/v1', 'ReplicaSet', 'replicasets', true),
  rt('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false),
  rt('smith.atlassian.com/v1', 'Bundle', 'bundles', true),
];

export interface Call {
  verb: 'get' | 'patch' | 'delete' | 'event' | 'event-series';
  what: string;
  detail?: unknown;
}

export class FakeApi implements GcApi, ResourceResolver {
  readonly objects = new Map<string, KubeObject>();
  readonly calls: Call[] = [];
  readonly events: EventInput[] = [];
  private rv = 100;
  private faults: { verb: Call['verb']; error: Error }[] = [];

  resolve(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    return Promise.resolve(RESOURCES.find((r) => r.apiVersion === apiVersion && r.kind === kind));
  }

  /** Stores an object (as an apiserver would have it) and returns it. */
  put(o: ObservedObject): KubeObject {
    const obj = structuredClone(o) as KubeObject;
    obj.metadata.resourceVersion = obj.metadata.resourceVersion ?? String(++this.rv);
    this.objects.set(this.key(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name), obj);
    return obj;
  }

  find(kind: string, name: string, namespace = 'ns'): KubeObject | undefined {
    return [...this.objects.values()].find(
      (o) => o.kind === kind && o.metadata.name === name && (o.metadata.namespace ?? '') === (namespace ?? ''),
    );
  }

  failNext(verb: Call['verb'], error: Error): void {
    this.faults.push({ verb, error });
  }

  /** Calls as short strings, e.g. "delete ConfigMap ns/a Background". */
  log(): string[] {
    return this.calls.map((c) => `${c.verb} ${c.what}${c.detail !== undefined && typeof c.detail === 'string' ? ` ${c.detail}` : ''}`);
  }

  private key(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
    return `${apiVersion}|${kind}|${namespace ?? ''}|${name}`;
  }

  private fault(verb: Call['verb']): void {
    const i = this.faults.findIndex((f) => f.verb === verb);
    if (i >= 0) {
      const [f] = this.faults.splice(i, 1);
      if (f) throw f.error;
    }
  }

  private where(rt: ResourceType, namespace: string | undefined, name: string): string {
    return `${rt.kind} ${namespace ? `${namespace}/` : ''}${name}`;
  }

  async tryGet(rt: ResourceType, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    await Promise.resolve();
    this.calls.push({ verb: 'get', what: this.where(rt, namespace, name) });
    this.fault('get');
    const o = this.objects.get(this.key(rt.apiVersion, rt.kind, namespace, name));
    return o ? structuredClone(o) : undefined;
  }

  async patch(rt: ResourceType, namespace: string | undefined, name: string, patch: unknown, type: PatchType): Promise<KubeObject> {
    await Promise.resolve();
    this.calls.push({ verb: 'patch', what: this.where(rt, namespace, name), detail: patch });
    this.fault('patch');
    if (type !== 'json') throw new Error('fake supports JSON patch only');
    const key = this.key(rt.apiVersion, rt.kind, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw new KubeApiError(404, 'NotFound', 'not found', 'PATCH', name);
    const next = structuredClone(current);
    for (const op of patch as { op: string; path: string; value?: unknown }[]) applyOp(next, op);
    next.metadata.resourceVersion = String(++this.rv);
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) this.objects.delete(key);
    else this.objects.set(key, next);
    return structuredClone(next);
  }

  async delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<'deleted' | 'not-found'> {
    await Promise.resolve();
    this.calls.push({ verb: 'delete', what: this.where(rt, namespace, name), detail: opts.propagationPolicy ?? 'Background' });
    this.fault('delete');
    const key = this.key(rt.apiVersion, rt.kind, namespace, name);
    const current = this.objects.get(key);
    if (!current) return 'not-found';
    if (current.metadata.uid !== opts.uid || (opts.resourceVersion && current.metadata.resourceVersion !== opts.resourceVersion)) {
      throw new KubeApiError(409, 'Conflict', 'Precondition failed', 'DELETE', name);
    }
    const finalizers = [...(current.metadata.finalizers ?? [])];
    if (opts.propagationPolicy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
    if (opts.propagationPolicy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
    if (finalizers.length === 0) {
      this.objects.delete(key);
      return 'deleted';
    }
    current.metadata.finalizers = finalizers;
    current.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    current.metadata.resourceVersion = String(++this.rv);
    return 'deleted';
  }

  async createEvent(input: EventInput): Promise<string> {
    await Promise.resolve();
    this.calls.push({ verb: 'event', what: `${input.reason} ${input.regarding.kind} ${input.regarding.name}` });
    this.events.push(input);
    return `event-${this.events.length}`;
  }

  /** A series update: the event's note becomes the new one, its count is recorded. */
  readonly seriesUpdates: { name: string; count: number; note: string }[] = [];
  async updateEventSeries(_namespace: string, name: string, series: { count: number }, note: string): Promise<void> {
    await Promise.resolve();
    this.calls.push({ verb: 'event-series', what: `${name} ${series.count}` });
    this.seriesUpdates.push({ name, count: series.count, note });
  }
}

function applyOp(target: KubeObject, op: { op: string; path: string; value?: unknown }): void {
  const parts = op.path.split('/').slice(1);
  const last = parts.pop();
  let parent: unknown = target;
  for (const p of parts) parent = (parent as Record<string, unknown>)[p];
  if (parent === undefined || last === undefined) throw new KubeApiError(422, 'Invalid', `path ${op.path} not found`, 'PATCH', op.path);
  const container = parent as Record<string, unknown> & unknown[];
  switch (op.op) {
    case 'test':
      if (JSON.stringify(container[last]) !== JSON.stringify(op.value))
        throw new KubeApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', 'PATCH', op.path);
      return;
    case 'remove':
      if (Array.isArray(container)) container.splice(Number(last), 1);
      else delete container[last];
      return;
    case 'add':
    case 'replace':
      container[last] = op.value;
      return;
  }
}
