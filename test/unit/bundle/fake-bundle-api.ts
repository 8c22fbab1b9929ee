/**
 * A small in-memory double of the Bundle controller's port (BundleApi), for
 * the act phase's and the finalizer's step tests: objects by coordinates,
 * JSON patch with `test` ops (422 when one fails), merge patch of
 * metadata.finalizers with a resourceVersion precondition, delete with uid
 * and resourceVersion preconditions (409), every call recorded. Faults are
 * injected per call (`failNext`); `onGet` changes an object right before it
 * (or a list holding it)
 * is read fresh (what a stale cache missed).
 */
import type { ApplyOptions, DeleteOptions, PatchType } from '../../../src/kube/client.js';
import type { GroupKindLookup } from '../../../src/kube/discovery.js';
import { KubeApiError } from '../../../src/kube/errors.js';
import type { KubeObject, ResourceType } from '../../../src/kube/types.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { BUNDLE_RESOURCE_TYPE } from '../../../src/kube/bundle-resource.js';
import type { BundleApi } from '../../../src/controllers/bundle/api.js';
import type { EventRecorder, EventTarget } from '../../../src/controllers/events.js';

const rt = (apiVersion: string, kind: string, plural: string): ResourceType => {
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: apiVersion.slice(slash + 1),
    apiVersion,
    kind,
    plural,
    namespaced: true,
    verbs: ['get', 'list', 'watch', 'patch', 'delete'],
  };
};
export const CONFIGMAPS = rt('v1', 'ConfigMap', 'configmaps');
export const SECRETS = rt('v1', 'Secret', 'secrets');
const RESOURCES = [CONFIGMAPS, SECRETS, BUNDLE_RESOURCE_TYPE];

export type Verb = 'get' | 'list' | 'apply' | 'patch' | 'delete' | 'status';

export interface Call {
  verb: Verb;
  /** "ConfigMap ns1/a" */
  what: string;
  /** Preconditions of a delete, the patch body of a patch, the manifest of an apply. */
  detail?: unknown;
}

type JsonOp = { op: string; path: string; value?: unknown };

export class FakeBundleApi implements BundleApi {
  readonly objects = new Map<string, KubeObject>();
  readonly calls: Call[] = [];
  /** Runs right before a get reads the object (a change the cache has not seen yet). */
  onGet: ((o: KubeObject) => void) | undefined;
  private rv = 100;
  private faults: { verb: Verb; what?: string; error: Error }[] = [];

  resolve(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    return Promise.resolve(RESOURCES.find((r) => r.apiVersion === apiVersion && r.kind === kind));
  }

  resolveGroupKind(group: string, kind: string): Promise<GroupKindLookup> {
    const type = RESOURCES.find((r) => r.group === group && r.kind === kind);
    return Promise.resolve(type ? { state: 'served', type } : { state: 'not-served' });
  }

  /** Stores a copy of an object as the server would have it (test objects carry uid and resourceVersion). */
  put(o: LiveObject | KubeObject): KubeObject {
    const obj = structuredClone(o) as KubeObject;
    this.objects.set(key(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name), obj);
    return structuredClone(obj);
  }

  find(kind: string, name: string, namespace = 'ns1'): KubeObject | undefined {
    return [...this.objects.values()].find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace);
  }

  failNext(verb: Verb, error: Error, what?: string): void {
    this.faults.push({ verb, error, ...(what !== undefined ? { what } : {}) });
  }

  /** Calls as short strings: "delete ConfigMap ns1/a", "patch ConfigMap ns1/b". */
  log(): string[] {
    return this.calls.map((c) => `${c.verb} ${c.what}`);
  }

  callsOf(verb: Verb): Call[] {
    return this.calls.filter((c) => c.verb === verb);
  }

  async tryGet(r: ResourceType, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    await Promise.resolve();
    this.record('get', r, namespace, name);
    const o = this.objects.get(key(r.apiVersion, r.kind, namespace, name));
    if (o && this.onGet) this.onGet(o);
    return o ? structuredClone(o) : undefined;
  }

  /** A label selector of `key=value` terms (comma-separated) is honoured; nothing else of selectors. */
  async list(r: ResourceType, namespace: string | undefined, opts: { labelSelector?: string } = {}): Promise<{ items: KubeObject[] }> {
    await Promise.resolve();
    this.record('list', r, namespace, '*', opts.labelSelector !== undefined ? { labelSelector: opts.labelSelector } : undefined);
    const terms = (opts.labelSelector ?? '')
      .split(',')
      .filter(Boolean)
      .map((t) => t.split('=') as [string, string]);
    const matches = (o: KubeObject) => terms.every(([k, v]) => o.metadata.labels?.[k] === v);
    if (this.onGet) for (const o of this.objects.values()) if (o.apiVersion === r.apiVersion && o.kind === r.kind) this.onGet(o);
    return {
      items: [...this.objects.values()]
        .filter(
          (o) =>
            o.apiVersion === r.apiVersion &&
            o.kind === r.kind &&
            (namespace === undefined || o.metadata.namespace === namespace) &&
            matches(o),
        )
        .map((o) => structuredClone(o)),
    };
  }

  async apply(r: ResourceType, manifest: Record<string, unknown>, _opts: ApplyOptions): Promise<KubeObject> {
    await Promise.resolve();
    const m = manifest as KubeObject;
    this.record('apply', r, m.metadata.namespace, m.metadata.name, manifest);
    const k = key(r.apiVersion, r.kind, m.metadata.namespace, m.metadata.name);
    const current = this.objects.get(k);
    const next = structuredClone({
      ...current,
      ...m,
      metadata: {
        ...current?.metadata,
        ...m.metadata,
        uid: current?.metadata.uid ?? `${m.metadata.name}-uid`,
        resourceVersion: String(++this.rv),
      },
    });
    this.objects.set(k, next);
    return structuredClone(next);
  }

  async patch(r: ResourceType, namespace: string | undefined, name: string, patch: unknown, type: PatchType): Promise<KubeObject> {
    await Promise.resolve();
    this.record('patch', r, namespace, name, patch);
    const k = key(r.apiVersion, r.kind, namespace, name);
    const current = this.objects.get(k);
    if (!current) throw new KubeApiError(404, 'NotFound', 'not found', 'PATCH', name);
    const next = structuredClone(current);
    if (type === 'json') {
      for (const op of patch as JsonOp[]) applyOp(next, op);
    } else {
      const meta = (patch as { metadata: { finalizers?: string[]; resourceVersion?: string } }).metadata;
      if (meta.resourceVersion !== undefined && meta.resourceVersion !== current.metadata.resourceVersion)
        throw new KubeApiError(409, 'Conflict', 'the object has been modified', 'PATCH', name);
      if (meta.finalizers !== undefined) next.metadata.finalizers = meta.finalizers;
    }
    next.metadata.resourceVersion = String(++this.rv);
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) this.objects.delete(k);
    else this.objects.set(k, next);
    return structuredClone(next);
  }

  async delete(r: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<'deleted' | 'not-found'> {
    await Promise.resolve();
    this.record('delete', r, namespace, name, {
      uid: opts.uid,
      ...(opts.resourceVersion !== undefined ? { resourceVersion: opts.resourceVersion } : {}),
    });
    const k = key(r.apiVersion, r.kind, namespace, name);
    const current = this.objects.get(k);
    if (!current) return 'not-found';
    if (
      current.metadata.uid !== opts.uid ||
      (opts.resourceVersion !== undefined && current.metadata.resourceVersion !== opts.resourceVersion)
    ) {
      throw new KubeApiError(409, 'Conflict', 'Precondition failed', 'DELETE', name);
    }
    this.objects.delete(k);
    return 'deleted';
  }

  async replaceStatus(r: ResourceType, obj: KubeObject): Promise<KubeObject> {
    await Promise.resolve();
    this.record('status', r, obj.metadata.namespace, obj.metadata.name, obj['status']);
    const k = key(r.apiVersion, r.kind, obj.metadata.namespace, obj.metadata.name);
    const current = this.objects.get(k);
    if (!current) throw new KubeApiError(404, 'NotFound', 'not found', 'PUT', obj.metadata.name);
    if (current.metadata.resourceVersion !== obj.metadata.resourceVersion)
      throw new KubeApiError(409, 'Conflict', 'the object has been modified', 'PUT', obj.metadata.name);
    const next = { ...structuredClone(current), status: structuredClone(obj['status']) };
    next.metadata.resourceVersion = String(++this.rv);
    this.objects.set(k, next);
    return structuredClone(next);
  }

  private record(verb: Verb, r: ResourceType, namespace: string | undefined, name: string, detail?: unknown): void {
    const what = `${r.kind} ${namespace ? `${namespace}/` : ''}${name}`;
    this.calls.push({ verb, what, ...(detail !== undefined ? { detail: structuredClone(detail) } : {}) });
    const i = this.faults.findIndex((f) => f.verb === verb && (f.what === undefined || f.what === what));
    if (i >= 0) {
      const [f] = this.faults.splice(i, 1);
      if (f) throw f.error;
    }
  }
}

function key(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  return `${apiVersion}|${kind}|${namespace ?? ''}|${name}`;
}

/** One JSON patch op on a metadata path; a failed `test` (or a remove of nothing) is the apiserver's 422. */
function applyOp(target: KubeObject, op: JsonOp): void {
  const segments = op.path
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = segments.pop() ?? '';
  let parent: Record<string, unknown> = target;
  for (const s of segments) {
    const child = parent[s];
    if (typeof child !== 'object' || child === null) throw invalid(op);
    parent = child as Record<string, unknown>;
  }
  switch (op.op) {
    case 'test':
      if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw invalid(op);
      return;
    case 'remove':
      if (!(last in parent)) throw invalid(op);
      delete parent[last];
      return;
    default:
      parent[last] = structuredClone(op.value);
  }
}

function invalid(op: JsonOp): KubeApiError {
  return new KubeApiError(
    422,
    'Invalid',
    `the server rejected our request due to an error in our request (${op.op} ${op.path})`,
    'PATCH',
    op.path,
    [{ reason: 'UnexpectedServerResponse', message: `testing value ${op.path} failed` }],
  );
}

/** Records events instead of writing them. */
export class RecordingEvents implements EventRecorder {
  readonly events: { type: 'Normal' | 'Warning'; target: string; reason: string; message: string }[] = [];
  normal(target: EventTarget, reason: string, message: string): Promise<void> {
    this.events.push({ type: 'Normal', target: target.name, reason, message });
    return Promise.resolve();
  }
  warning(target: EventTarget, reason: string, message: string): Promise<void> {
    this.events.push({ type: 'Warning', target: target.name, reason, message });
    return Promise.resolve();
  }
}
