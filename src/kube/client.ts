/**
 * KubeClient: every API verb the operator uses, on generic objects. This
 * module (with transport.ts and discovery.ts) is the only place that talks to
 * the API server.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeTransport, type RequestOptions, type TransportOptions } from './transport.js';
import { KubeApiError, isApiStatus, isNotFound } from './errors.js';
import type { ServerTime } from './clock.js';
import { isKubeObject, type KubeObject, type ResourceType, type WatchEvent } from './types.js';
import {
  METADATA_ACCEPT,
  METADATA_LIST_ACCEPT,
  PATCH_CONTENT_TYPES,
  resourcePath,
  type ApplyOptions,
  type DeleteOptions,
  type EventInput,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type WatchOptions,
} from './requests.js';

/** The verbs' options are named with the client. */
export type { ApplyOptions, DeleteOptions, EventInput, ListOptions, PatchOptions, PatchType, WatchOptions } from './requests.js';

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
}

function asObject(value: unknown, context: string): KubeObject {
  if (!isKubeObject(value)) throw new Error(`${context}: the API server returned something that is not an object`);
  return value;
}

/**
 * Whom a client acts as when it is not the operator itself: the API server
 * authorizes (RBAC, escalation checks, admission) every request of such a
 * client as this user, after checking that the operator may impersonate it.
 */
export interface Impersonation {
  /** e.g. system:serviceaccount:<namespace>:<name> (the server adds a service account's groups itself). */
  user: string;
}

export class KubeClient {
  private readonly impersonationHeaders: Readonly<Record<string, string>> | undefined;

  constructor(
    readonly transport: KubeTransport,
    readonly impersonation?: Impersonation,
  ) {
    this.impersonationHeaders = impersonation ? { 'Impersonate-User': impersonation.user } : undefined;
  }

  /**
   * A client for the same server that acts as another identity. It shares
   * this client's connections and rate limit (one budget for the process);
   * closing it closes nothing.
   */
  impersonating(impersonation: Impersonation): KubeClient {
    // Impersonation does not nest: an identity set on the transport (--impersonate) would be silently replaced.
    if (this.transport.impersonates) throw new Error(`cannot act as ${impersonation.user}: this client already impersonates another user`);
    return new KubeClient(this.transport, impersonation);
  }

  /** Every request of this client goes through here, with its identity's headers. */
  private send(method: string, path: string, opts: RequestOptions = {}): Promise<unknown> {
    return this.transport.request(
      method,
      path,
      this.impersonationHeaders ? { ...opts, headers: { ...opts.headers, ...this.impersonationHeaders } } : opts,
    );
  }

  static async fromKubeConfig(kubeConfig: KubeConfig, options: TransportOptions = {}): Promise<KubeClient> {
    return new KubeClient(await KubeTransport.create(kubeConfig, options));
  }

  /** $KUBECONFIG (or ~/.kube/config), else the in-cluster service account. */
  static async fromEnvironment(kubeconfigPath?: string, options: TransportOptions = {}): Promise<KubeClient> {
    return KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath), options);
  }

  close(): void {
    if (this.impersonation) return; // the transport is the parent client's
    this.transport.close();
  }

  /** The API server's clock, from the Date headers of its answers. */
  get serverTime(): ServerTime {
    return this.transport.serverTime;
  }

  async raw(method: string, path: string, body?: unknown): Promise<unknown> {
    return this.send(method, path, body === undefined ? {} : { body });
  }

  async get(rt: ResourceType, namespace: string | undefined, name: string, opts: { metadataOnly?: boolean } = {}): Promise<KubeObject> {
    const body = await this.send('GET', resourcePath(rt, namespace, name), opts.metadataOnly ? { accept: METADATA_ACCEPT } : {});
    return withTypeMeta(asObject(body, `get ${rt.plural}/${name}`), rt);
  }

  /** GET that returns undefined for 404. */
  async tryGet(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: { metadataOnly?: boolean } = {},
  ): Promise<KubeObject | undefined> {
    try {
      return await this.get(rt, namespace, name, opts);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Lists all pages of a collection (all namespaces when namespace is undefined). */
  async list(rt: ResourceType, namespace: string | undefined, opts: ListOptions = {}): Promise<ListResult> {
    const items: KubeObject[] = [];
    const resourceVersion = await this.listPages(rt, namespace, opts, (page) => {
      for (const item of page) items.push(item);
    });
    return { items, resourceVersion };
  }

  /**
   * Lists a collection a page at a time (one consistent snapshot: the pages
   * after the first continue it), handing each page to `onPage` before the
   * next is fetched, so a caller that indexes them holds one page at a time.
   * Resolves with the list's resourceVersion.
   */
  async listPages(
    rt: ResourceType,
    namespace: string | undefined,
    opts: ListOptions,
    onPage: (items: KubeObject[]) => void,
  ): Promise<string> {
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const body = await this.send('GET', resourcePath(rt, namespace), {
        query: {
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          limit: opts.limit ?? 500,
          continue: continueToken,
          resourceVersion: continueToken ? undefined : opts.resourceVersion,
        },
        accept: opts.metadataOnly ? METADATA_LIST_ACCEPT : 'application/json',
      });
      const list = body as { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } };
      const items: KubeObject[] = [];
      for (const item of list.items ?? []) if (isKubeObject(item)) items.push(withTypeMeta(item, rt));
      onPage(items);
      resourceVersion = list.metadata?.resourceVersion ?? resourceVersion;
      continueToken = list.metadata?.continue || undefined;
    } while (continueToken);
    return resourceVersion;
  }

  /**
   * Watches from resourceVersion until the server closes the stream (resolve)
   * or it fails (reject). A watch ERROR event with 410 Gone rejects with a
   * KubeApiError of code 410: the caller relists.
   */
  async watch(
    rt: ResourceType,
    namespace: string | undefined,
    resourceVersion: string,
    opts: WatchOptions,
    onEvent: (event: WatchEvent) => void,
  ): Promise<void> {
    await this.transport.stream(
      resourcePath(rt, namespace),
      {
        ...(this.impersonationHeaders ? { headers: this.impersonationHeaders } : {}),
        query: {
          watch: 1,
          resourceVersion,
          allowWatchBookmarks: true,
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          timeoutSeconds: opts.timeoutSeconds ?? 300,
        },
        accept: opts.metadataOnly ? METADATA_ACCEPT : 'application/json',
        signal: opts.signal,
      },
      (value) => {
        const event = value as { type?: string; object?: unknown };
        if (event.type === 'ERROR') {
          const status = isApiStatus(event.object) ? event.object : {};
          throw new KubeApiError(status.code ?? 500, status.reason ?? 'WatchError', status.message ?? 'watch error', 'WATCH', rt.plural);
        }
        if (
          (event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED' || event.type === 'BOOKMARK') &&
          isKubeObject(event.object)
        ) {
          onEvent({ type: event.type, object: withTypeMeta(event.object, rt) });
        }
      },
    );
  }

  async create(rt: ResourceType, obj: KubeObject | Record<string, unknown>, opts: { dryRun?: boolean } = {}): Promise<KubeObject> {
    const namespace = (obj as { metadata?: { namespace?: string } }).metadata?.namespace;
    const body = await this.send('POST', resourcePath(rt, namespace), { body: obj, query: { dryRun: opts.dryRun ? 'All' : undefined } });
    return withTypeMeta(asObject(body, `create ${rt.plural}`), rt);
  }

  /** Server-side apply of a full manifest (creates or updates). */
  async apply(rt: ResourceType, manifest: Record<string, unknown>, opts: ApplyOptions): Promise<KubeObject> {
    const meta = manifest.metadata as { name: string; namespace?: string };
    const body = await this.send('PATCH', resourcePath(rt, meta.namespace, meta.name), {
      ...(opts.guard ? { guard: opts.guard } : {}),
      body: manifest,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: opts.fieldManager, force: opts.force ? true : undefined, dryRun: opts.dryRun ? 'All' : undefined },
    });
    return withTypeMeta(asObject(body, `apply ${rt.plural}/${meta.name}`), rt);
  }

  async patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    patch: unknown,
    type: PatchType,
    opts: PatchOptions = {},
  ): Promise<KubeObject> {
    const body = await this.send('PATCH', resourcePath(rt, namespace, name, opts.subresource), {
      ...(opts.guard ? { guard: opts.guard } : {}),
      body: patch,
      contentType: PATCH_CONTENT_TYPES[type],
      query: { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? 'All' : undefined },
    });
    return withTypeMeta(asObject(body, `patch ${rt.plural}/${name}`), rt);
  }

  /** PUT of the status subresource (with resourceVersion: optimistic concurrency). */
  async replaceStatus(rt: ResourceType, obj: KubeObject, opts: { fieldManager?: string } = {}): Promise<KubeObject> {
    const body = await this.send('PUT', resourcePath(rt, obj.metadata.namespace, obj.metadata.name, 'status'), {
      body: obj,
      query: { fieldManager: opts.fieldManager },
    });
    return withTypeMeta(asObject(body, `update status ${rt.plural}/${obj.metadata.name}`), rt);
  }

  /**
   * DELETE with a UID precondition (and resourceVersion when given). Resolves
   * with the object as the server left it (it may still exist, e.g. waiting on
   * finalizers) or undefined when it was gone already.
   */
  async delete(rt: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions): Promise<'deleted' | 'not-found'> {
    const preconditions: Record<string, string> = { uid: opts.uid };
    if (opts.resourceVersion) preconditions.resourceVersion = opts.resourceVersion;
    try {
      await this.send('DELETE', resourcePath(rt, namespace, name), {
        ...(opts.guard ? { guard: opts.guard } : {}),
        // The answer is not used: metadata only keeps a mass delete cheap to parse.
        accept: METADATA_ACCEPT,
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions,
          ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
          ...(opts.dryRun ? { dryRun: ['All'] } : {}),
        },
      });
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'not-found';
      throw err;
    }
  }

  /** Creates an events.k8s.io/v1 Event; resolves with its name (for a series update). */
  async createEvent(input: EventInput): Promise<string> {
    const namespace = input.namespace ?? input.regarding.namespace ?? 'default';
    const name = eventName(input.regarding.name, `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`);
    await this.send('POST', `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace },
        eventTime: input.eventTime,
        reportingController: input.reportingController,
        reportingInstance: input.reportingInstance,
        action: input.action,
        reason: input.reason,
        note: input.message.slice(0, 1024),
        type: input.type,
        regarding: input.regarding,
      },
    });
    return name;
  }

  /** The next count of an Event's series (events.k8s.io/v1: count at least 2), with a new note. */
  async updateEventSeries(
    namespace: string,
    name: string,
    series: { count: number; lastObservedTime: string },
    note: string,
  ): Promise<void> {
    await this.send('PATCH', `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events/${encodeURIComponent(name)}`, {
      contentType: 'application/merge-patch+json',
      body: { series, note: note.slice(0, 1024) },
    });
  }
}

/** Lists come back without apiVersion/kind on items; put them back. */
function withTypeMeta(obj: KubeObject, rt: ResourceType): KubeObject {
  if (obj.apiVersion === rt.apiVersion && obj.kind === rt.kind) return obj;
  obj.apiVersion = rt.apiVersion;
  obj.kind = rt.kind;
  return obj;
}

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/**
 * An Event's name: the object's name and a unique suffix, within a DNS
 * subdomain's 253 characters. The name is cut, never the suffix: cut from
 * the end, every event of an object with a 253-character name had one
 * name, and all but the first were refused ("already exists"). A cut that
 * ends a label with '-' or '.' is trimmed back to a letter or digit.
 */
export function eventName(objectName: string, suffix: string): string {
  const room = 253 - suffix.length - 1;
  const head = objectName.length <= room ? objectName : objectName.slice(0, room).replace(/[-.]+$/, '');
  return `${head}.${suffix}`;
}
