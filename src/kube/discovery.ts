/**
 * Discovery of the API's resource types (client-node has no RESTMapper).
 * Reads /api and /apis with the aggregated discovery format where the server
 * offers it (one request for all groups), and caches the result; `refresh`
 * is called on a cache miss (a CRD installed after start) and periodically.
 *
 * One group version that cannot be discovered (an aggregated API whose
 * backend is down: the server marks it stale, or answers 503) does not fail
 * the refresh: the others are served, the failed one keeps what the last
 * good refresh knew of it (so its informers and lookups carry on, as
 * upstream's GroupDiscoveryFailedError handling), and the next refresh
 * retries it. Only the roots failing fails a refresh.
 */
import type { KubeClient } from './client.js';
import type { KindInfo, KindTable } from '../core/bundle/kinds.js';
import { groupOf, kindKey, versionOf } from '../core/bundle/objects.js';
import type { ResourceType } from './types.js';

const AGGREGATED_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface AggregatedResource {
  resource: string;
  responseKind?: { group?: string; version?: string; kind?: string };
  scope?: 'Namespaced' | 'Cluster';
  verbs?: string[];
}
interface AggregatedVersion {
  version: string;
  /** 'Stale': the server could not reach the API behind this group version; the resources are not current. */
  freshness?: 'Current' | 'Stale';
  resources?: AggregatedResource[];
}
interface AggregatedGroup {
  metadata?: { name?: string };
  versions?: AggregatedVersion[];
}

export class Discovery {
  private byGvk = new Map<string, ResourceType>();
  private all: ResourceType[] = [];
  private failed: string[] = [];
  private lastRefresh = -Infinity;
  /** Set by invalidate (a CRD changed): what is cached may name a version no longer served. */
  private invalidated = false;
  private inflight: Promise<void> | undefined;

  constructor(
    private readonly client: KubeClient,
    /** A miss triggers at most one refresh per this interval, so a typo cannot hammer the server. */
    private readonly minRefreshIntervalMs = 2_000,
    /** 'legacy': one request per group version even where the server offers the aggregated format (servers before it, tests). */
    private readonly format: 'aggregated' | 'legacy' = 'aggregated',
  ) {}

  /** Every resource type served, preferred versions and others alike. */
  resources(): readonly ResourceType[] {
    return this.all;
  }

  async refresh(): Promise<void> {
    if (this.inflight) return this.inflight;
    this.inflight = this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Group versions (apiVersion strings) the last refresh could not discover; their resources are the last known ones. */
  failedGroupVersions(): readonly string[] {
    return this.failed;
  }

  /**
   * Resolves apiVersion + kind, refreshing once on a miss. Undefined when
   * the server does not serve it. After a CRD changed, a hit may be a
   * version no longer served: look again first (fuzz softdelete 19971: a
   * pass planned on the stale answer took the spec as servable and pruned
   * while the Bundle listed a version the server had just stopped serving).
   */
  async resolve(apiVersion: string, kind: string): Promise<ResourceType | undefined> {
    if (this.invalidated) await this.refresh();
    const hit = this.byGvk.get(kindKey(apiVersion, kind));
    if (hit) return hit;
    if (Date.now() - this.lastRefresh >= this.minRefreshIntervalMs) {
      await this.refresh();
      return this.byGvk.get(kindKey(apiVersion, kind));
    }
    return undefined;
  }

  /** Lets the next miss refresh at once (a CRD changed: what the server serves has changed). */
  invalidate(): void {
    this.lastRefresh = -Infinity;
    this.invalidated = true;
  }

  /**
   * A group and kind as the server serves it now: the first version it lists
   * (its preferred one), whatever version an object was written at. Refreshes
   * once on a miss. 'unknown' when the group's discovery failed, so absence
   * proves nothing.
   */
  async resolveGroupKind(group: string, kind: string): Promise<GroupKindLookup> {
    const find = (): ResourceType | undefined => this.all.find((rt) => rt.group === group && rt.kind === kind && !rt.plural.includes('/'));
    // After a CRD changed, a hit may be a version no longer served (a list of it is a 404): look again first.
    if (this.invalidated) await this.refresh();
    let hit = find();
    if (!hit && Date.now() - this.lastRefresh >= this.minRefreshIntervalMs) {
      await this.refresh();
      hit = find();
    }
    if (hit) return { state: 'served', type: hit };
    const failed = this.failed.filter((gv) => groupOf(gv) === group);
    if (failed.length > 0) return { state: 'unknown', reason: `discovery of ${failed.join(', ')} failed` };
    return { state: 'not-served' };
  }

  /** Cached lookup only. */
  lookup(apiVersion: string, kind: string): ResourceType | undefined {
    return this.byGvk.get(kindKey(apiVersion, kind));
  }

  private async load(): Promise<void> {
    // Cleared as the reads begin: a CRD that changes while they run leaves it set, and the next lookup reads again.
    this.invalidated = false;
    const found: ResourceType[] = [];
    const failed = new Set<string>();
    for (const root of ['/api', '/apis']) {
      const body = (await this.client.transport.request(
        'GET',
        root,
        this.format === 'aggregated' ? { accept: AGGREGATED_ACCEPT } : {},
      )) as { kind?: string; items?: AggregatedGroup[] };
      if (body.kind === 'APIGroupDiscoveryList') {
        for (const group of body.items ?? []) {
          const groupName = group.metadata?.name ?? '';
          for (const version of group.versions ?? []) {
            const apiVersion = groupName === '' ? version.version : `${groupName}/${version.version}`;
            if (version.freshness === 'Stale') {
              failed.add(apiVersion);
              continue;
            }
            for (const res of version.resources ?? []) {
              const kind = res.responseKind?.kind;
              if (!kind) continue;
              found.push({
                group: groupName,
                version: version.version,
                apiVersion,
                kind,
                plural: res.resource,
                namespaced: res.scope === 'Namespaced',
                verbs: res.verbs ?? [],
              });
            }
          }
        }
      } else {
        found.push(...(await this.loadLegacy(root, body, failed)));
      }
    }
    // A group version that failed keeps what was known of it.
    for (const rt of this.all) if (failed.has(rt.apiVersion)) found.push(rt);
    const byGvk = new Map<string, ResourceType>();
    for (const rt of found) if (!byGvk.has(kindKey(rt.apiVersion, rt.kind))) byGvk.set(kindKey(rt.apiVersion, rt.kind), rt);
    this.byGvk = byGvk;
    this.all = found;
    this.failed = [...failed].sort();
    this.lastRefresh = Date.now();
  }

  /** Servers without aggregated discovery: one request per group version. */
  private async loadLegacy(root: string, body: unknown, failed: Set<string>): Promise<ResourceType[]> {
    const versions: string[] = [];
    if (root === '/api') versions.push(...((body as { versions?: string[] }).versions ?? []).map((v) => v));
    else
      for (const g of (body as { groups?: { versions?: { groupVersion: string }[] }[] }).groups ?? [])
        for (const v of g.versions ?? []) versions.push(v.groupVersion);
    const out: ResourceType[] = [];
    for (const gv of versions) {
      let list: { resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[] };
      try {
        list = (await this.client.transport.request('GET', root === '/api' ? `/api/${gv}` : `/apis/${gv}`)) as typeof list;
      } catch {
        failed.add(gv);
        continue;
      }
      const group = groupOf(gv);
      const version = versionOf(gv);
      for (const r of list.resources ?? []) {
        if (r.name.includes('/')) continue; // subresources
        out.push({ group, version, apiVersion: gv, kind: r.kind, plural: r.name, namespaced: r.namespaced, verbs: r.verbs ?? [] });
      }
    }
    return out;
  }
}

/**
 * One resource type per group/resource: the version the server lists first
 * (its preferred one). Every version shows the same objects, so one watch or
 * list per group/resource sees them all. Filters (verbs, scope) apply to the
 * chosen version, as upstream's collector filters the preferred resources.
 */
export function preferredVersions(all: readonly ResourceType[]): ResourceType[] {
  const chosen = new Map<string, ResourceType>();
  for (const rt of all) {
    const key = `${rt.group}/${rt.plural}`;
    if (!chosen.has(key)) chosen.set(key, rt);
  }
  return [...chosen.values()];
}

type Resolver = Pick<Discovery, 'resolve'>;

/** What the server says of a group and kind now (Discovery.resolveGroupKind). */
export type GroupKindLookup =
  /** Served: at this version, the server's preferred one for the kind. */
  | { state: 'served'; type: ResourceType }
  /** Discovery of the kind's group succeeded and no version serves the kind. */
  | { state: 'not-served' }
  /** The group could not be discovered: whether the kind is served is not known. */
  | { state: 'unknown'; reason: string };

/**
 * The kinds of a Bundle spec's objects as the server serves them: the kind
 * table the decisions read and each kind's resource type, both by kindKey.
 * A kind the server does not serve is absent from both.
 */
export async function resolveSpecKinds(
  discovery: Resolver,
  objects: readonly { apiVersion: string; kind: string }[],
): Promise<{ kinds: KindTable; types: Map<string, ResourceType> }> {
  const kinds = new Map<string, KindInfo>();
  const types = new Map<string, ResourceType>();
  for (const o of objects) {
    const rt = await discovery.resolve(o.apiVersion, o.kind);
    if (!rt) continue;
    kinds.set(kindKey(o.apiVersion, o.kind), { namespaced: rt.namespaced, plural: rt.plural });
    types.set(kindKey(o.apiVersion, o.kind), rt);
  }
  return { kinds, types };
}

/**
 * Resource types of group kinds (the kind inventory, status.managedKinds) at
 * the versions the server serves now; what it does not serve is skipped.
 * Callers that must not skip (the finalizer) use resolveGroupKind.
 */
export async function resolveGroupKinds(
  discovery: Pick<Discovery, 'resolveGroupKind'>,
  kinds: readonly { group: string; kind: string }[],
): Promise<ResourceType[]> {
  const out: ResourceType[] = [];
  for (const gk of kinds) {
    const found = await discovery.resolveGroupKind(gk.group, gk.kind);
    if (found.state === 'served') out.push(found.type);
  }
  return out;
}
